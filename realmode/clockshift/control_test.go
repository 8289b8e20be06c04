package clockshift

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeControl returns a control whose real clock the test steps.
func fakeControl(t *testing.T) (*Control, *int64) {
	t.Helper()
	c, err := NewControl(filepath.Join(t.TempDir(), "clock"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	real := int64(1_700_000_000_000_000_000)
	c.realNow = func() int64 { return real }
	return c, &real
}

func TestControlArithmetic(t *testing.T) {
	const sec = int64(time.Second)
	tests := []struct {
		name string
		run  func(c *Control, real *int64)
		want int64 // offset of Now() from the real clock after run
	}{
		{"identity", func(c *Control, real *int64) { *real += 5 * sec }, 0},
		{"offset", func(c *Control, real *int64) { require.NoError(t, c.Set(40*time.Second, 0)); *real += sec }, 40 * sec},
		{"negative offset", func(c *Control, real *int64) { require.NoError(t, c.Set(-3*time.Second, 0)) }, -3 * sec},
		{"jump adds", func(c *Control, real *int64) {
			require.NoError(t, c.Set(time.Second, 0))
			c.Jump(2 * time.Second)
			c.Jump(-500 * time.Millisecond)
		}, 2500 * int64(time.Millisecond)},
		{"drift 1ms per second over 10s", func(c *Control, real *int64) {
			require.NoError(t, c.Set(0, 1_000_000))
			*real += 10 * sec
		}, 10 * int64(time.Millisecond)},
		{"slow clock", func(c *Control, real *int64) {
			require.NoError(t, c.Set(0, -500_000_000))
			*real += 4 * sec
		}, -2 * sec},
		{"rate change is continuous", func(c *Control, real *int64) {
			require.NoError(t, c.Set(0, 1_000_000))
			*real += 10 * sec // +10ms
			require.NoError(t, c.SetRate(-1_000_000))
			*real += 4 * sec // -4ms
		}, 6 * int64(time.Millisecond)},
		{"jump keeps the rate", func(c *Control, real *int64) {
			require.NoError(t, c.Set(0, 2_000_000))
			*real += sec // +2ms
			c.Jump(time.Second)
			*real += sec // +2ms
		}, sec + 4*int64(time.Millisecond)},
		{"unfreeze resumes from the frozen value", func(c *Control, real *int64) {
			c.Freeze(*real)
			*real += 3 * sec
			c.Unfreeze()
			*real += sec
		}, -3 * sec},
		{"set unfreezes", func(c *Control, real *int64) {
			c.Freeze(0)
			require.NoError(t, c.Set(time.Second, 0))
		}, sec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, real := fakeControl(t)
			tt.run(c, real)
			assert.Equal(t, tt.want, c.Now()-*real)
		})
	}
}

func TestControlFreeze(t *testing.T) {
	c, real := fakeControl(t)
	c.Freeze(42)
	*real += int64(time.Hour)
	assert.True(t, c.Frozen())
	assert.Equal(t, int64(42), c.Now())
	c.Jump(100 * time.Millisecond)
	assert.Equal(t, int64(42+100*time.Millisecond), c.Now(), "a jump steps a frozen clock")
	require.NoError(t, c.SetRate(5_000_000))
	assert.Equal(t, int64(42+100*time.Millisecond), c.Now(), "a rate change does not move a frozen clock")
	c.Unfreeze()
	assert.False(t, c.Frozen())
	*real += int64(time.Second)
	assert.Equal(t, int64(42+100*time.Millisecond+time.Second+5*time.Millisecond), c.Now())
}

func TestControlRejectsRate(t *testing.T) {
	c, _ := fakeControl(t)
	for _, r := range []int64{MaxRatePPB + 1, -MaxRatePPB - 1} {
		assert.Error(t, c.Set(0, r))
		assert.Error(t, c.SetRate(r))
	}
	assert.NoError(t, c.Set(0, -MaxRatePPB), "a clock that stands still is allowed")
}

func TestControlLayout(t *testing.T) {
	// The C library reads these words at these offsets; a change on one side
	// only must fail here.
	c, real := fakeControl(t)
	require.NoError(t, c.Set(7, 9))
	c.Freeze(11)
	assert.Equal(t, uint64(magic), bytesLE(c.mem, 0))
	assert.Equal(t, uint64(4), bytesLE(c.mem, 8), "two writes, each seqlock round adds 2")
	assert.Equal(t, uint64(1), bytesLE(c.mem, 16))
	assert.Equal(t, uint64(11), bytesLE(c.mem, 24))
	assert.Equal(t, uint64(*real), bytesLE(c.mem, 32))
	assert.Equal(t, uint64(*real+7), bytesLE(c.mem, 40))
	assert.Equal(t, uint64(9), bytesLE(c.mem, 48))
}

func TestScaledNoOverflow(t *testing.T) {
	// A day of elapsed time at the maximal rate must not overflow.
	day := int64(24 * time.Hour)
	assert.Equal(t, day, scaled(day, MaxRatePPB))
	assert.Equal(t, -day, scaled(day, -MaxRatePPB))
	assert.Equal(t, int64(1), scaled(1_000_000_000, 1))
	assert.Equal(t, int64(0), scaled(999_999_999, 1))
}
