package clockshift

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// EnvVar names the environment variable through which the child finds its
// control file.
const EnvVar = "LOCKSIM_CLOCKSHIFT_CONTROL"

const (
	magic    = 0x31304b4c43534b4c // "LKSCLK01" read as a little-endian word
	fileSize = 4096

	offMagic       = 0
	offSeq         = 8
	offFrozen      = 16
	offFrozenNs    = 24
	offAnchorReal  = 32
	offAnchorShift = 40
	offRate        = 48

	// MaxRatePPB bounds the rate: at -1e9 the shifted clock stands still,
	// beyond it would run backwards; the library's overflow-free
	// arithmetic also relies on the bound.
	MaxRatePPB = 1_000_000_000
)

// Control is the writer's side of a control file. Its methods are safe for
// concurrent use; every change is continuous in the sense the method
// states, computed at one real instant.
type Control struct {
	mu   sync.Mutex
	path string
	mem  []byte
	// realNow reads the real wall clock; tests may replace it.
	realNow func() int64
}

// NewControl creates (or truncates) the control file at path with the
// identity shift: offset 0, rate 0, not frozen.
func NewControl(path string) (*Control, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("clockshift: control file: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(fileSize); err != nil {
		return nil, fmt.Errorf("clockshift: control file %s: %w", path, err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, fileSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("clockshift: mmap %s: %w", path, err)
	}
	c := &Control{path: path, mem: mem, realNow: func() int64 { return time.Now().UnixNano() }}
	// The magic goes last: a child that maps the file before it is
	// complete refuses it instead of reading zeros.
	atomic.StoreUint64(c.word(offMagic), magic)
	return c, nil
}

func (c *Control) word(off int) *uint64 { return (*uint64)(unsafe.Pointer(&c.mem[off])) }

func (c *Control) load(off int) int64 { return int64(atomic.LoadUint64(c.word(off))) }

// state is the control file's content.
type state struct {
	frozen                         bool
	frozenNs, anchorReal, anchorSh int64
	rate                           int64
}

func (c *Control) read() state {
	return state{
		frozen:     c.load(offFrozen) != 0,
		frozenNs:   c.load(offFrozenNs),
		anchorReal: c.load(offAnchorReal),
		anchorSh:   c.load(offAnchorShift),
		rate:       c.load(offRate),
	}
}

// write publishes s under the seqlock (the writer side: odd, fields, even).
func (c *Control) write(s state) {
	seq := c.word(offSeq)
	atomic.AddUint64(seq, 1)
	fr := int64(0)
	if s.frozen {
		fr = 1
	}
	atomic.StoreUint64(c.word(offFrozen), uint64(fr))
	atomic.StoreUint64(c.word(offFrozenNs), uint64(s.frozenNs))
	atomic.StoreUint64(c.word(offAnchorReal), uint64(s.anchorReal))
	atomic.StoreUint64(c.word(offAnchorShift), uint64(s.anchorSh))
	atomic.StoreUint64(c.word(offRate), uint64(s.rate))
	atomic.AddUint64(seq, 1)
}

// scaled is elapsed*rate/1e9 computed as clockshift.c's scaled does.
func scaled(elapsed, rate int64) int64 {
	q, r := elapsed/1e9, elapsed%1e9
	return q*rate + (r*rate)/1e9
}

// shifted is what the child reads at real time real under s.
func (s state) shifted(real int64) int64 {
	if s.frozen {
		return s.frozenNs
	}
	el := real - s.anchorReal
	return s.anchorSh + el + scaled(el, s.rate)
}

// Set makes the child's wall clock read real time plus offset now, running
// from now on at 1 + ratePPB/1e9 of real time (ratePPB 1_000_000 is 1 ms
// fast per second). It unfreezes a frozen clock.
func (c *Control) Set(offset time.Duration, ratePPB int64) error {
	if ratePPB < -MaxRatePPB || ratePPB > MaxRatePPB {
		return fmt.Errorf("clockshift: rate %d ppb out of range [-%d, %d]", ratePPB, MaxRatePPB, MaxRatePPB)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.realNow()
	c.write(state{anchorReal: now, anchorSh: now + int64(offset), rate: ratePPB})
	return nil
}

// SetRate changes the rate from now on, keeping the clock continuous at the
// change (no step). A frozen clock stays frozen and runs at the new rate
// once unfrozen.
func (c *Control) SetRate(ratePPB int64) error {
	if ratePPB < -MaxRatePPB || ratePPB > MaxRatePPB {
		return fmt.Errorf("clockshift: rate %d ppb out of range [-%d, %d]", ratePPB, MaxRatePPB, MaxRatePPB)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.read()
	now := c.realNow()
	if !s.frozen {
		s.anchorSh = s.shifted(now)
		s.anchorReal = now
	}
	s.rate = ratePPB
	c.write(s)
	return nil
}

// Jump steps the child's wall clock by by (negative steps back), keeping
// its rate; a frozen clock stays frozen at its value plus by.
func (c *Control) Jump(by time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.read()
	if s.frozen {
		s.frozenNs += int64(by)
	} else {
		now := c.realNow()
		s.anchorSh = s.shifted(now) + int64(by)
		s.anchorReal = now
	}
	c.write(s)
}

// Freeze stops the child's wall clock at unixNanos until Unfreeze, Set or
// another Freeze; Jump steps a frozen clock.
func (c *Control) Freeze(unixNanos int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.read()
	s.frozen, s.frozenNs = true, unixNanos
	c.write(s)
}

// Unfreeze lets a frozen clock run again from its frozen value (no step),
// at the rate last set.
func (c *Control) Unfreeze() {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.read()
	if !s.frozen {
		return
	}
	now := c.realNow()
	s.anchorSh, s.anchorReal, s.frozen = s.frozenNs, now, false
	c.write(s)
}

// Now returns what the child's wall clock reads at this instant, in
// nanoseconds since the Unix epoch.
func (c *Control) Now() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.read().shifted(c.realNow())
}

// Frozen reports whether the clock is frozen.
func (c *Control) Frozen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.read().frozen
}

// Path returns the control file's path.
func (c *Control) Path() string { return c.path }

// Close unmaps the control file (the file stays; children that mapped it
// keep reading the last state).
func (c *Control) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mem == nil {
		return nil
	}
	err := syscall.Munmap(c.mem)
	c.mem = nil
	return err
}

// Env returns the environment entries that load the library at soPath into
// a child and point it at c's file; append them after os.Environ() (for
// os/exec the last duplicate wins).
func Env(soPath string, c *Control) []string {
	return []string{"LD_PRELOAD=" + soPath, EnvVar + "=" + c.Path()}
}

// bytesLE is used by tests to check the layout the C side reads.
func bytesLE(mem []byte, off int) uint64 { return binary.LittleEndian.Uint64(mem[off:]) }
