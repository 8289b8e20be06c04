package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{in: "10s", want: 10 * time.Second},
		{in: " +150ms ", want: 150 * time.Millisecond},
		{in: "-5s", want: -5 * time.Second},
		{in: "0", want: 0},
		{in: "-0", want: 0},
		{in: "10", err: `"10" needs a unit`},
		{in: "1.5", err: `"1.5" needs a unit`},
		{in: "ten", err: `"ten" is not a duration`},
		{in: "9999999999h", err: `"9999999999h" is out of range (the longest duration is 2562047h47m16.854775807s`},
		{in: "1h1x", err: `"1h1x" is not a duration`},
		{in: "", err: `"" is not a duration`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDuration(tt.in)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseRange(t *testing.T) {
	tests := []struct {
		in   string
		want Range
		err  string
	}{
		{in: "50ms..249ms", want: Range{Lo: 50 * time.Millisecond, Hi: 249 * time.Millisecond}},
		{in: "0..200ms", want: Range{Lo: 0, Hi: 200 * time.Millisecond}},
		{in: "3s", want: Fixed(3 * time.Second)},
		{in: "2s..1s", err: "is empty"},
		{in: "1s..x", err: `"x" is not a duration`},
		{in: "5..6s", err: `"5" needs a unit`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRange(tt.in)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			back, err := ParseRange(got.String())
			require.NoError(t, err, "String() renders what ParseRange reads")
			assert.Equal(t, got, back)
		})
	}
}
