package redis

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// ScriptStockDecrement sells one item from a stock counter (issue 13's
// flash sale, the seeds' "Lua script" method): it reads the stock, converts
// it with Lua's tonumber and, when that is a number above zero, DECRs it and
// returns the new stock; otherwise it returns -1 and writes nothing. The
// read and the decrement run atomically, as every script does. KEYS[1] =
// the stock.
//
// NB: a stock that tonumber accepts but DECR does not (" 5", "0x10", "1.5",
// "inf") makes DECR fail, which raises the error at line 3; a value
// tonumber refuses ("abc", "nan" compares false) sells nothing.
var ScriptStockDecrement = newScript("stock-decrement", `local stock = tonumber(redis.call("GET", KEYS[1]))
if stock ~= nil and stock > 0 then
    return redis.call("DECR", KEYS[1])
end
return -1
`, 1, 0, runStockDecrement)

func runStockDecrement(x *scriptRun) Value {
	v, ok := x.call(1, "GET", x.key(1))
	if !ok {
		return x.failed()
	}
	// GET answers a bulk string or nil (Lua false, whose tonumber is nil).
	if v.Kind == KindBulk {
		if n, ok := luaStrToNumber(v.Str); ok && n > 0 {
			d, ok := x.call(3, "DECR", x.key(1))
			if !ok {
				return x.failed()
			}
			return luaIntegerRoundTrip(d)
		}
	}
	return Int(-1)
}

// The number syntaxes C's strtod accepts, which Lua 5.1's tonumber uses
// (lobject.c luaO_str2d: strtod, then only white space may follow; Redis
// embeds Lua 5.1, deps/lua). Leading white space is skipped by strtod,
// trailing white space by luaO_str2d.
var (
	luaDecimal = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)
	luaHex     = regexp.MustCompile(`^[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)([pP][+-]?[0-9]+)?$`)
	luaInf     = regexp.MustCompile(`^[+-]?(?i:inf|infinity)$`)
	luaNaN     = regexp.MustCompile(`^[+-]?(?i:nan)(\([0-9A-Za-z_]*\))?$`)
)

// luaStrToNumber is Lua 5.1's tonumber on a string (base 10): the number and
// whether the whole string (but white space around it) is one.
func luaStrToNumber(s string) (float64, bool) {
	t := strings.Trim(s, " \t\n\v\f\r") // C's isspace in the "C" locale
	switch {
	case luaDecimal.MatchString(t):
		f, err := strconv.ParseFloat(t, 64)
		if err != nil && !isRange(err) {
			return 0, false
		}
		return f, true // out of range: strtod's HUGE_VAL or 0, as ParseFloat's
	case luaHex.MatchString(t):
		if !strings.ContainsAny(t, "pP") {
			t += "p0" // Go wants the binary exponent that C makes optional
		}
		f, err := strconv.ParseFloat(t, 64)
		if err != nil && !isRange(err) {
			return 0, false
		}
		return f, true
	case luaInf.MatchString(t):
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case luaNaN.MatchString(t):
		return math.NaN(), true
	}
	return 0, false
}

func isRange(err error) bool {
	e, ok := err.(*strconv.NumError)
	return ok && e.Err == strconv.ErrRange
}

// luaIntegerRoundTrip is an integer reply that a script returns from
// redis.call: Lua 5.1 holds it as a double (redisProtocolToLuaType) and the
// script's return converts it back with a C cast (luaReplyToRedisReply), so
// integers beyond 2^53 round, and one that rounds to 2^63 comes back as
// LLONG_MIN (x86-64's conversion of an out-of-range double), as a real
// redis-server answers.
func luaIntegerRoundTrip(v Value) Value {
	if v.Kind != KindInt {
		return v
	}
	f := float64(v.Int)
	if f >= 0x1p63 || f < -0x1p63 {
		return Int(math.MinInt64)
	}
	return Int(int64(f))
}
