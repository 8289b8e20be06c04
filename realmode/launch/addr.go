package launch

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
)

var (
	// ErrNoBinary: the server binary is not installed.
	ErrNoBinary = errors.New("server binary not found")
	// ErrPortInUse: the address and port asked for are taken.
	ErrPortInUse = errors.New("port in use")
	// ErrBadOption: an option is invalid (outside loopback, missing field).
	ErrBadOption = errors.New("bad option")
)

// FreePort returns a TCP port on ip that was free a moment ago (the kernel
// picks it; a server started on it right away almost always gets it, and
// StartRedis retries when it does not).
func FreePort(ip string) (int, error) {
	if err := checkLoopback(ip); err != nil {
		return 0, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("launch: no free port on %s: %w", ip, err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, err
	}
	return port, nil
}

// checkPort reports ErrPortInUse when ip:port cannot be bound now.
func checkPort(ip string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("launch: %s:%d: %w", ip, port, ErrPortInUse)
		}
		return fmt.Errorf("launch: %s:%d: %w", ip, port, err)
	}
	return l.Close()
}

func checkLoopback(ip string) error {
	a := net.ParseIP(ip)
	if a == nil || a.To4() == nil || a.To4()[0] != 127 {
		return fmt.Errorf("launch: address %q: %w: real mode binds 127.0.0.0/8 only", ip, ErrBadOption)
	}
	return nil
}

// AddrPool hands out distinct loopback addresses, one per process of a run,
// so that the proxy can tell processes apart by source address. Linux
// routes all of 127.0.0.0/8 to the loopback interface without
// configuration.
//
// Parallel runs must not collide: every pool in this OS process draws from
// one counter, inside a block of 4094 addresses chosen from the PID
// (127.B.C.x with the block number derived from PID mod 4095, never the
// block of 127.0.0.1), so two concurrent processes collide only if their
// PIDs are equal modulo 4095; Next also skips an address on which a probe
// bind fails.
type AddrPool struct{ _ struct{} }

var (
	poolMu   sync.Mutex
	poolNext uint32
)

// NewAddrPool returns a pool; all pools of one process share the block.
func NewAddrPool() *AddrPool { return &AddrPool{} }

// blockBase is the first host number (24 bits below 127) of this
// process's block.
func blockBase() uint32 { return (uint32(os.Getpid())%4095 + 1) << 12 }

// Next returns a fresh loopback address.
func (p *AddrPool) Next() (string, error) {
	poolMu.Lock()
	defer poolMu.Unlock()
	for poolNext < 4096 {
		h := blockBase() + poolNext
		poolNext++
		if h&0xff == 0 || h&0xff == 0xff {
			continue
		}
		ip := fmt.Sprintf("127.%d.%d.%d", h>>16&0xff, h>>8&0xff, h&0xff)
		// A probe: the address must be bindable (it is, on Linux loopback,
		// unless the system is configured otherwise).
		l, err := net.Listen("tcp", ip+":0")
		if err != nil {
			continue
		}
		_ = l.Close()
		return ip, nil
	}
	return "", fmt.Errorf("launch: loopback address block exhausted (4094 addresses per process)")
}
