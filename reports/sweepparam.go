package reports

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/sim"
)

var rangeRE = regexp.MustCompile(`^(.+?)\.\.(.+)/(\d+)$`)

// ParseSweepParam parses a swept parameter as simrun sweep's --param
// gives it: PATH=VALUES, VALUES a list (2s,5s,10s) or a range of N evenly
// spaced values (0s..40s/9), of durations or of numbers.
func ParseSweepParam(spec string) (SweepParam, error) {
	path, values, ok := strings.Cut(spec, "=")
	path = strings.TrimSpace(path)
	if !ok || path == "" || strings.TrimSpace(values) == "" {
		return SweepParam{}, fmt.Errorf("--param %q: want PATH=VALUES, e.g. faults[1].by=0s..40s/9 or clients[0].lock.ttl=2s,5s,10s", spec)
	}
	p := SweepParam{Path: path}
	values = strings.TrimSpace(values)
	if m := rangeRE.FindStringSubmatch(values); m != nil {
		n, err := strconv.Atoi(m[3])
		if err != nil || n < 1 || n > 1000 {
			return p, fmt.Errorf("--param %s: the count after / must be from 1 to 1000, not %q", spec, m[3])
		}
		if err := expandRange(&p, strings.TrimSpace(m[1]), strings.TrimSpace(m[2]), n); err != nil {
			return p, fmt.Errorf("--param %s: %v", spec, err)
		}
		return p, nil
	}
	for _, v := range strings.Split(values, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return p, fmt.Errorf("--param %s: empty value in the list", spec)
		}
		p.Values = append(p.Values, v)
	}
	// Numeric positions: all durations, or all numbers.
	var xs []float64
	unit := "s"
	for _, v := range p.Values {
		d, err := sim.ParseDuration(v)
		if err != nil {
			xs = nil
			break
		}
		xs = append(xs, d.Seconds())
	}
	if xs == nil {
		unit = ""
		for _, v := range p.Values {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				xs = nil
				break
			}
			xs = append(xs, x)
		}
	} else if !hasUnit(p.Values) {
		unit = "" // all bare numbers that happen to be zero: numbers
	}
	p.X, p.Unit = xs, unit
	return p, nil
}

func hasUnit(vs []string) bool {
	for _, v := range vs {
		if strings.IndexFunc(v, func(r rune) bool { return r >= 'a' && r <= 'z' || r == 'µ' }) >= 0 {
			return true
		}
	}
	return false
}

// expandRange fills p with n evenly spaced values from lo to hi.
func expandRange(p *SweepParam, lo, hi string, n int) error {
	dlo, errLo := sim.ParseDuration(lo)
	dhi, errHi := sim.ParseDuration(hi)
	if errLo == nil && errHi == nil && hasUnit([]string{lo, hi}) {
		plus := strings.HasPrefix(lo, "+") || strings.HasPrefix(hi, "+")
		for i := 0; i < n; i++ {
			d := dlo
			if n > 1 {
				// lo + (hi-lo)*i/(n-1), exactly, rounded to the nanosecond.
				num := new(big.Int).Mul(big.NewInt(int64(dhi)-int64(dlo)), big.NewInt(int64(i)))
				q := new(big.Rat).SetFrac(num, big.NewInt(int64(n-1)))
				f, _ := q.Float64()
				d = dlo + time.Duration(math.Round(f))
			}
			s := d.String()
			if plus && d > 0 {
				s = "+" + s
			}
			p.Values = append(p.Values, s)
			p.X = append(p.X, d.Seconds())
		}
		p.Unit = "s"
		return nil
	}
	flo, err1 := strconv.ParseFloat(lo, 64)
	fhi, err2 := strconv.ParseFloat(hi, 64)
	if err1 != nil || err2 != nil {
		switch {
		case errLo != nil && err1 != nil:
			return fmt.Errorf("%q is neither a duration (10s, +30s) nor a number (0.01)", lo)
		case errHi != nil && err2 != nil:
			return fmt.Errorf("%q is neither a duration (10s, +30s) nor a number (0.01)", hi)
		}
		return fmt.Errorf("%q and %q mix a duration with a number: give both ends a unit, or neither", lo, hi)
	}
	for i := 0; i < n; i++ {
		x := flo
		if n > 1 {
			x = flo + (fhi-flo)*float64(i)/float64(n-1)
		}
		// 12 significant digits: 0.1*3 prints as 0.3, not 0.30000000000000004.
		x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
		p.Values = append(p.Values, strconv.FormatFloat(x, 'g', -1, 64))
		p.X = append(p.X, x)
	}
	return nil
}
