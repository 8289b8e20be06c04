package launch

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/realmode/clockshift"
)

// MemcachedOptions configures one memcached (Debian's memcached 1.6). Zero
// values mean memcached's defaults (memcached.c settings_init).
type MemcachedOptions struct {
	Name string // for errors and logs; default "memcached"
	Bin  string // default memcached on PATH
	IP   string // loopback address to listen on (-l); default 127.0.0.1
	Port int    // -p; 0: a free port
	Dir  string // required: working directory and log (created)

	// MemoryMB is -m, the memory limit for slab pages in megabytes (0:
	// memcached's 64).
	MemoryMB int
	// ItemSizeMax is -I, the largest item in bytes (0: memcached's 1 MB).
	ItemSizeMax int
	// NoEvictions is -M: a full cache refuses stores with "SERVER_ERROR out
	// of memory storing object" instead of evicting.
	NoEvictions bool
	// NoCAS is -C: items carry no CAS id.
	NoCAS bool

	Clock *Clock // nil: the real wall clock
	// StartTimeout bounds the wait for "version" (also after Restart);
	// 0 = 10s.
	StartTimeout time.Duration
}

// MemcachedProgram is memcached's binary, looked up on PATH.
const MemcachedProgram = "memcached"

// MemcachedBinary returns the path of memcached, or an error wrapping
// ErrNoBinary that says how to install it.
func MemcachedBinary(bin string) (string, error) {
	if bin == "" {
		bin = MemcachedProgram
	}
	p, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("launch: %s is not installed or not on PATH (Debian: apt-get install -y memcached): %w", bin, ErrNoBinary)
	}
	return p, nil
}

// StartMemcached starts memcached on a loopback port, TCP only (-U 0: no
// UDP), with its working directory and log in o.Dir, and waits until it
// answers "version". memcached keeps nothing on disk: Restart starts an
// empty cache, as a restarted memcached is. Shutdown sends SIGTERM, its
// clean exit.
func StartMemcached(o MemcachedOptions) (*Server, error) {
	if o.Name == "" {
		o.Name = MemcachedProgram
	}
	bin, err := MemcachedBinary(o.Bin)
	if err != nil {
		return nil, err
	}
	if err := placeOptions(o.Name, &o.IP, o.Dir); err != nil {
		return nil, err
	}
	if o.MemoryMB < 0 || o.ItemSizeMax < 0 {
		return nil, fmt.Errorf("launch: %s: MemoryMB and ItemSizeMax must not be negative: %w", o.Name, ErrBadOption)
	}
	s := &Server{name: o.Name, bin: bin, dir: o.Dir, ip: o.IP, port: o.Port, timeout: defaultTimeout(o.StartTimeout),
		ready: memcachedReady, term: terminate, logs: []string{}}
	if o.Clock != nil {
		s.env = clockshift.Env(o.Clock.Lib, o.Clock.Control)
	}
	return s, s.firstStartArgs(func() ([]string, error) {
		args := []string{"-l", s.ip, "-p", strconv.Itoa(s.port), "-U", "0"}
		if o.MemoryMB > 0 {
			args = append(args, "-m", strconv.Itoa(o.MemoryMB))
		}
		if o.ItemSizeMax > 0 {
			args = append(args, "-I", strconv.Itoa(o.ItemSizeMax))
		}
		if o.NoEvictions {
			args = append(args, "-M")
		}
		if o.NoCAS {
			args = append(args, "-C")
		}
		if os.Geteuid() == 0 {
			// memcached refuses to run as root without -u.
			args = append(args, "-u", "root")
		}
		return args, nil
	})
}

// memcachedReady asks "version" on a fresh connection.
func memcachedReady(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("version\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "VERSION ") {
		return fmt.Errorf("memcached answered %q to version", strings.TrimSpace(line))
	}
	return nil
}
