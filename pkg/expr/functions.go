package expr

import (
	"encoding/base64"
	"math"
	"math/bits"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// function implements a CEL function or operator. A receiver-style call
// passes its receiver as args[0]. No argument is an error: the evaluator
// returns errors before it calls a function.
type function func(e *evaluator, args []any) any

// functions holds every function by the name check leaves on the call.
// The functions that build functions are kept from being inlined here, so
// that each closure body exists once in the binary rather than once for
// every entry that uses it.
var functions = map[string]function{
	"_==_": func(_ *evaluator, a []any) any { return equal(a[0], a[1]) },
	"_!=_": func(_ *evaluator, a []any) any { return !equal(a[0], a[1]) },
	"_<_":  ordering(func(c int) bool { return c < 0 }),
	"_<=_": ordering(func(c int) bool { return c <= 0 }),
	"_>_":  ordering(func(c int) bool { return c > 0 }),
	"_>=_": ordering(func(c int) bool { return c >= 0 }),
	"_+_":  add,
	"_-_":  subtract,
	"_*_":  multiply,
	"_/_":  divide,
	"_%_":  modulo,
	"!_": func(_ *evaluator, a []any) any {
		if b, ok := a[0].(bool); ok {
			return !b
		}
		return errNoOverload
	},
	"-_":    negate,
	"@in":   in,
	"_[_]":  func(_ *evaluator, a []any) any { return index(a[0], a[1], false) },
	"_[?_]": func(_ *evaluator, a []any) any { return index(a[0], a[1], true) },
	"size": func(_ *evaluator, a []any) any {
		switch v := a[0].(type) {
		case string:
			return int64(utf8.RuneCountInString(v))
		case []byte:
			return int64(len(v))
		case []any:
			return int64(len(v))
		case map[string]any, *mapValue:
			return int64(mapSize(v))
		}
		return errNoOverload
	},
	"type": func(_ *evaluator, a []any) any { return valueType(a[0]) },
	"dyn":  func(_ *evaluator, a []any) any { return a[0] },

	// Conversions.
	"int":       toInt,
	"uint":      toUint,
	"double":    toDouble,
	"string":    toString,
	"bool":      toBool,
	"bytes":     toBytes,
	"timestamp": toTimestamp,
	"duration":  toDuration,

	// Strings.
	"contains":   stringTest(strings.Contains),
	"startsWith": stringTest(strings.HasPrefix),
	"endsWith":   stringTest(strings.HasSuffix),
	"matches": func(e *evaluator, a []any) any {
		s, ok1 := a[0].(string)
		p, ok2 := a[1].(string)
		if !ok1 || !ok2 {
			return errNoOverload
		}
		re, err := compileRegexp(p)
		if err != nil {
			return errorf("%s", err)
		}
		e.walkBytes((len(s) + len(p)) * 25) // a regular expression costs more per byte
		return re.MatchString(s)
	},
	"charAt":      charAt,
	"indexOf":     indexOf,
	"lastIndexOf": lastIndexOf,
	"lowerAscii":  mapASCII('A', 'Z', 'a'-'A'),
	"upperAscii":  mapASCII('a', 'z', 'A'-'a'),
	"replace":     replace,
	"split":       split,
	"substring":   substring,
	"trim": func(e *evaluator, a []any) any {
		s, ok := a[0].(string)
		if !ok {
			return errNoOverload
		}
		e.walkBytes(len(s))
		return strings.TrimSpace(s)
	},
	"join":          join,
	"reverse":       reverse,
	"format":        format,
	"strings.quote": quote,

	// Timestamps and durations.
	"getFullYear":     timePart(func(t time.Time) int64 { return int64(t.Year()) }, nil),
	"getMonth":        timePart(func(t time.Time) int64 { return int64(t.Month()) - 1 }, nil),
	"getDate":         timePart(func(t time.Time) int64 { return int64(t.Day()) }, nil),
	"getDayOfMonth":   timePart(func(t time.Time) int64 { return int64(t.Day()) - 1 }, nil),
	"getDayOfWeek":    timePart(func(t time.Time) int64 { return int64(t.Weekday()) }, nil),
	"getDayOfYear":    timePart(func(t time.Time) int64 { return int64(t.YearDay()) - 1 }, nil),
	"getHours":        timePart(func(t time.Time) int64 { return int64(t.Hour()) }, time.Duration.Hours),
	"getMinutes":      timePart(func(t time.Time) int64 { return int64(t.Minute()) }, time.Duration.Minutes),
	"getSeconds":      timePart(func(t time.Time) int64 { return int64(t.Second()) }, time.Duration.Seconds),
	"getMilliseconds": timePart(func(t time.Time) int64 { return int64(t.Nanosecond() / 1e6) }, nil),

	// Optional values.
	"optional.of": func(_ *evaluator, a []any) any { return optional{a[0], true} },
	"optional.none": func(_ *evaluator, a []any) any {
		return optional{}
	},
	"optional.ofNonZeroValue": func(_ *evaluator, a []any) any {
		if isZero(a[0]) {
			return optional{}
		}
		return optional{a[0], true}
	},
	"optional.unwrap": unwrap,
	"unwrapOpt":       unwrap,
	"hasValue": func(_ *evaluator, a []any) any {
		o, ok := a[0].(optional)
		if !ok {
			return errNoOverload
		}
		return o.has
	},
	"value": func(_ *evaluator, a []any) any {
		o, ok := a[0].(optional)
		switch {
		case !ok:
			return errNoOverload
		case !o.has:
			return errNoneDereferred
		}
		return o.v
	},

	// Encodings.
	"base64.encode":    encode(base64.StdEncoding),
	"base64.encodeUrl": encode(base64.URLEncoding),
	"base64.decode":    decode(base64.StdEncoding, base64.RawStdEncoding),
	"base64.decodeUrl": decode(base64.URLEncoding, base64.RawURLEncoding),
	// cel-go gives the JSON and YAML functions an unbounded cost, so that
	// they always exceed the cost limit; so do we, without a codec.
	"json.encode": unbounded,
	"json.parse":  unbounded,
	"yaml.encode": unbounded,
	"yaml.parse":  unbounded,

	// Lists.
	"lists.range": func(e *evaluator, a []any) any {
		n, ok := a[0].(int64)
		switch {
		case !ok:
			return errNoOverload
		case n < 0:
			return errorf("lists.range: size must be non-negative, got %d", n)
		}
		e.walk(int(min(n, math.MaxInt32)))
		out := make([]any, n)
		for i := range out {
			out[i] = int64(i)
		}
		return out
	},
	"slice":      sliceList,
	"flatten":    flatten,
	"distinct":   distinct,
	"first":      func(_ *evaluator, a []any) any { return end(a[0], true) },
	"last":       func(_ *evaluator, a []any) any { return end(a[0], false) },
	"sort":       sortList,
	"sortBy":     sortBy,
	"hasAll":     listSet(func(x, y []any) bool { return subset(y, x) }),
	"hasAny":     listSet(func(x, y []any) bool { return slices.ContainsFunc(x, func(v any) bool { return contains(y, v) }) }),
	"hasOnly":    listSet(subset),
	"hasExactly": listSet(func(x, y []any) bool { return subset(x, y) && subset(y, x) }),

	// Math.
	"math.greatest":      extreme(1),
	"math.least":         extreme(-1),
	"math.@max":          extreme(1),
	"math.@min":          extreme(-1),
	"math.abs":           abs,
	"math.sign":          sign,
	"math.ceil":          double2double(math.Ceil),
	"math.floor":         double2double(math.Floor),
	"math.round":         double2double(math.Round),
	"math.trunc":         double2double(math.Trunc),
	"math.isInf":         double2bool(func(f float64) bool { return math.IsInf(f, 0) }),
	"math.isNaN":         double2bool(math.IsNaN),
	"math.isFinite":      double2bool(func(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }),
	"math.sqrt":          sqrt,
	"math.bitAnd":        bitwise(func(x, y uint64) uint64 { return x & y }),
	"math.bitOr":         bitwise(func(x, y uint64) uint64 { return x | y }),
	"math.bitXor":        bitwise(func(x, y uint64) uint64 { return x ^ y }),
	"math.bitNot":        bitNot,
	"math.bitShiftLeft":  shift(true),
	"math.bitShiftRight": shift(false),
}

func unbounded(e *evaluator, _ []any) any {
	e.spend(math.MaxUint64)
	return nil
}

// walk counts the cost of a function that visits n list elements: a tenth
// of a unit each.
func (e *evaluator) walk(n int) {
	if n >= 10 {
		e.spend(uint64(n) / 10)
	}
}

// walkBytes counts the cost of a function that reads or writes n bytes: a
// hundredth of a unit each.
func (e *evaluator) walkBytes(n int) {
	if n >= 100 {
		e.spend(uint64(n) / 100)
	}
}

//go:noinline
func ordering(ok func(int) bool) function {
	return func(_ *evaluator, a []any) any {
		if isNaN(a[0]) || isNaN(a[1]) {
			return false
		}
		c, err := compare(a[0], a[1])
		if err != nil {
			return err
		}
		return ok(c)
	}
}

func addInt(x, y int64) any {
	if y > 0 && x > math.MaxInt64-y || y < 0 && x < math.MinInt64-y {
		return errIntOverflow
	}
	return x + y
}

func add(e *evaluator, a []any) any {
	switch x := a[0].(type) {
	case int64:
		if y, ok := a[1].(int64); ok {
			return addInt(x, y)
		}
	case uint64:
		if y, ok := a[1].(uint64); ok {
			if s := x + y; s >= x {
				return s
			}
			return errUintOverflow
		}
	case float64:
		if y, ok := a[1].(float64); ok {
			return x + y
		}
	case string:
		if y, ok := a[1].(string); ok {
			e.walkBytes(len(x) + len(y))
			return x + y
		}
	case []byte:
		if y, ok := a[1].([]byte); ok {
			e.walkBytes(len(x) + len(y))
			return append(x[:len(x):len(x)], y...)
		}
	case []any:
		if y, ok := a[1].([]any); ok {
			e.walk(len(x) + len(y))
			return append(x[:len(x):len(x)], y...)
		}
	case time.Duration:
		switch y := a[1].(type) {
		case time.Duration:
			return durationOf(addInt(int64(x), int64(y)))
		case time.Time:
			return checkTime(y.Add(x))
		}
	case time.Time:
		if y, ok := a[1].(time.Duration); ok {
			return checkTime(x.Add(y))
		}
	}
	return errNoOverload
}

// durationOf turns the result of integer arithmetic on nanoseconds into a
// duration.
func durationOf(v any) any {
	if n, ok := v.(int64); ok {
		return time.Duration(n)
	}
	return v
}

func subtract(_ *evaluator, a []any) any {
	switch x := a[0].(type) {
	case int64:
		if y, ok := a[1].(int64); ok {
			if y < 0 && x > math.MaxInt64+y || y > 0 && x < math.MinInt64+y {
				return errIntOverflow
			}
			return x - y
		}
	case uint64:
		if y, ok := a[1].(uint64); ok {
			if y > x {
				return errUintOverflow
			}
			return x - y
		}
	case float64:
		if y, ok := a[1].(float64); ok {
			return x - y
		}
	case time.Duration:
		if y, ok := a[1].(time.Duration); ok {
			return durationOf(subtract(nil, []any{int64(x), int64(y)}))
		}
	case time.Time:
		switch y := a[1].(type) {
		case time.Duration:
			if y == math.MinInt64 {
				return errIntOverflow
			}
			return checkTime(x.Add(-y))
		case time.Time:
			d := x.Sub(y)
			if d == math.MaxInt64 || d == math.MinInt64 {
				return errIntOverflow
			}
			return d
		}
	}
	return errNoOverload
}

func multiply(_ *evaluator, a []any) any {
	switch x := a[0].(type) {
	case int64:
		if y, ok := a[1].(int64); ok {
			p := x * y
			if x != 0 && (p/x != y || x == -1 && y == math.MinInt64) || y == -1 && x == math.MinInt64 {
				return errIntOverflow
			}
			return p
		}
	case uint64:
		if y, ok := a[1].(uint64); ok {
			hi, lo := bits.Mul64(x, y)
			if hi != 0 {
				return errUintOverflow
			}
			return lo
		}
	case float64:
		if y, ok := a[1].(float64); ok {
			return x * y
		}
	}
	return errNoOverload
}

func divide(_ *evaluator, a []any) any {
	switch x := a[0].(type) {
	case int64:
		if y, ok := a[1].(int64); ok {
			switch {
			case y == 0:
				return errDivByZero
			case y == -1 && x == math.MinInt64:
				return errIntOverflow
			}
			return x / y
		}
	case uint64:
		if y, ok := a[1].(uint64); ok {
			if y == 0 {
				return errDivByZero
			}
			return x / y
		}
	case float64:
		if y, ok := a[1].(float64); ok {
			return x / y
		}
	}
	return errNoOverload
}

func modulo(_ *evaluator, a []any) any {
	switch x := a[0].(type) {
	case int64:
		if y, ok := a[1].(int64); ok {
			switch {
			case y == 0:
				return errModByZero
			case y == -1 && x == math.MinInt64:
				return errIntOverflow
			}
			return x % y
		}
	case uint64:
		if y, ok := a[1].(uint64); ok {
			if y == 0 {
				return errModByZero
			}
			return x % y
		}
	}
	return errNoOverload
}

func negate(_ *evaluator, a []any) any {
	switch x := a[0].(type) {
	case int64:
		if x == math.MinInt64 {
			return errIntOverflow
		}
		return -x
	case float64:
		return -x
	}
	return errNoOverload
}

func in(e *evaluator, a []any) any {
	switch c := a[1].(type) {
	case []any:
		e.walk(len(c))
		return contains(c, a[0])
	case map[string]any, *mapValue:
		_, ok := mapGet(c, a[0])
		return ok
	}
	return errNoOverload
}

func contains(list []any, v any) bool {
	for _, x := range list {
		if equal(norm(x), v) {
			return true
		}
	}
	return false
}

func toInt(_ *evaluator, a []any) any {
	switch v := a[0].(type) {
	case int64:
		return v
	case uint64:
		if v > math.MaxInt64 {
			return errIntOverflow
		}
		return int64(v)
	case float64:
		if math.IsNaN(v) || v <= math.MinInt64 || v >= math.MaxInt64 {
			return errIntOverflow
		}
		return int64(v)
	case string:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
		return conversionError("string", "int")
	case time.Time:
		return v.Unix()
	case time.Duration:
		return int64(v)
	}
	return errNoOverload
}

func conversionError(from, to string) *evalError {
	return errorf("type conversion error from '%s' to '%s'", from, to)
}

func toUint(_ *evaluator, a []any) any {
	switch v := a[0].(type) {
	case uint64:
		return v
	case int64:
		if v < 0 {
			return errUintOverflow
		}
		return uint64(v)
	case float64:
		if math.IsNaN(v) || v < 0 || v >= math.MaxUint64 {
			return errUintOverflow
		}
		return uint64(v)
	case string:
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			return n
		}
		return conversionError("string", "uint")
	}
	return errNoOverload
}

func toDouble(_ *evaluator, a []any) any {
	switch v := a[0].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case string:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
		return conversionError("string", "double")
	}
	return errNoOverload
}

func toString(_ *evaluator, a []any) any {
	switch v := a[0].(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case []byte:
		if !utf8.Valid(v) {
			return errorf("invalid UTF-8 in bytes, cannot convert to string")
		}
		return string(v)
	case time.Time:
		return v.Format(time.RFC3339Nano)
	case time.Duration:
		return durationSeconds(v)
	}
	return errNoOverload
}

func durationSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

func toBool(_ *evaluator, a []any) any {
	switch v := a[0].(type) {
	case bool:
		return v
	case string:
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
		return conversionError("string", "bool")
	}
	return errNoOverload
}

func toBytes(_ *evaluator, a []any) any {
	switch v := a[0].(type) {
	case []byte:
		return v
	case string:
		return []byte(v)
	}
	return errNoOverload
}

func toTimestamp(_ *evaluator, a []any) any {
	switch v := a[0].(type) {
	case time.Time:
		return v
	case int64:
		if v < minTime.Unix() || v > maxTime.Unix() {
			return errTimeOverflow
		}
		return time.Unix(v, 0).UTC()
	case string:
		t, err := time.Parse(time.RFC3339, v)
		if err != nil || !strictTimestamp(v) {
			return errorf("invalid RFC 3339 timestamp %q", v)
		}
		return checkTime(t)
	}
	return errNoOverload
}

// strictTimestamp rejects what time.Parse accepts beyond RFC 3339: a comma
// before the fraction, and offsets past 23:59.
func strictTimestamp(s string) bool {
	if len(s) < 20 || s[10] != 'T' && s[10] != 't' || strings.Contains(s, ",") {
		return false
	}
	if zone := s[len(s)-1]; zone != 'Z' && zone != 'z' {
		if len(s) < 25 {
			return false
		}
		off := s[len(s)-6:]
		return (off[0] == '+' || off[0] == '-') && off[1:3] <= "23" && off[4:6] <= "59"
	}
	return true
}

func toDuration(_ *evaluator, a []any) any {
	switch v := a[0].(type) {
	case time.Duration:
		return v
	case string:
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
		return conversionError("string", "google.protobuf.Duration")
	}
	return errNoOverload
}

//go:noinline
func stringTest(test func(s, sub string) bool) function {
	return func(e *evaluator, a []any) any {
		s, ok1 := a[0].(string)
		sub, ok2 := a[1].(string)
		if !ok1 || !ok2 {
			return errNoOverload
		}
		e.walkBytes(len(s))
		return test(s, sub)
	}
}

// regexps keeps compiled patterns, since most are constants used again and
// again; it stops growing at a bound.
var regexps struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}

func compileRegexp(p string) (*regexp.Regexp, error) {
	regexps.Lock()
	re := regexps.m[p]
	regexps.Unlock()
	if re != nil {
		return re, nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	regexps.Lock()
	if regexps.m == nil {
		regexps.m = make(map[string]*regexp.Regexp)
	}
	if len(regexps.m) < 256 {
		regexps.m[p] = re
	}
	regexps.Unlock()
	return re, nil
}

// stringArgs reads a receiver string and int arguments from a[1:]; types
// lists the kinds after the receiver: 's' a string, 'i' an int, and a
// final '?' makes the last one optional.
func stringArgs(a []any, types string) (s string, strs []string, ints []int64, ok bool) {
	if strings.HasSuffix(types, "?") {
		types = types[:len(types)-1]
		if len(a) == len(types) {
			types = types[:len(types)-1]
		}
	}
	s, ok = a[0].(string)
	if !ok || len(a)-1 != len(types) {
		return "", nil, nil, false
	}
	for i, k := range types {
		switch v := a[i+1].(type) {
		case string:
			if k != 's' {
				return "", nil, nil, false
			}
			strs = append(strs, v)
		case int64:
			if k != 'i' {
				return "", nil, nil, false
			}
			ints = append(ints, v)
		default:
			return "", nil, nil, false
		}
	}
	return s, strs, ints, true
}

func outOfRange(i int64) *evalError { return errorf("index out of range: %d", i) }

func charAt(e *evaluator, a []any) any {
	s, _, ints, ok := stringArgs(a, "i")
	if !ok {
		return errNoOverload
	}
	e.walkBytes(len(s))
	r := []rune(s)
	i := ints[0]
	switch {
	case i < 0 || i > int64(len(r)):
		return outOfRange(i)
	case i == int64(len(r)):
		return ""
	}
	return string(r[i])
}

// runeIndex finds sub in r at or after from (before, when last is set);
// from has been checked.
func runeIndex(r, sub []rune, from int, last bool) int64 {
	n := len(r) - len(sub)
	if last {
		for i := min(from, n); i >= 0; i-- {
			if slices.Equal(r[i:i+len(sub)], sub) {
				return int64(i)
			}
		}
		return -1
	}
	for i := from; i <= n; i++ {
		if slices.Equal(r[i:i+len(sub)], sub) {
			return int64(i)
		}
	}
	return -1
}

func indexOf(e *evaluator, a []any) any { return findString(e, a, false) }

func lastIndexOf(e *evaluator, a []any) any { return findString(e, a, true) }

func findString(e *evaluator, a []any, last bool) any {
	s, strs, ints, ok := stringArgs(a, "si?")
	if !ok {
		return errNoOverload
	}
	e.walkBytes(len(s))
	r, sub := []rune(s), []rune(strs[0])
	off := int64(0)
	if last {
		off = int64(len(r))
		if len(sub) > 0 {
			off = int64(len(r)) - 1
		}
	}
	if len(ints) == 1 {
		off = ints[0]
	} else if last && len(s) < len(strs[0]) {
		return int64(-1)
	}
	switch {
	case off < 0:
		return outOfRange(off)
	case len(sub) == 0:
		return min(off, int64(len(r)))
	case off >= int64(len(r)):
		return int64(-1)
	}
	return runeIndex(r, sub, int(off), last)
}

//go:noinline
func mapASCII(lo, hi rune, shift rune) function {
	return func(e *evaluator, a []any) any {
		s, ok := a[0].(string)
		if !ok || len(a) != 1 {
			return errNoOverload
		}
		e.walkBytes(len(s))
		return strings.Map(func(r rune) rune {
			if r >= lo && r <= hi {
				return r + shift
			}
			return r
		}, s)
	}
}

func replace(e *evaluator, a []any) any {
	s, strs, ints, ok := stringArgs(a, "ssi?")
	if !ok {
		return errNoOverload
	}
	n := int64(-1)
	if len(ints) == 1 {
		n = ints[0]
	}
	e.walkBytes(len(s))
	return strings.Replace(s, strs[0], strs[1], int(n))
}

func split(e *evaluator, a []any) any {
	s, strs, ints, ok := stringArgs(a, "si?")
	if !ok {
		return errNoOverload
	}
	n := int64(-1)
	if len(ints) == 1 {
		n = ints[0]
	}
	e.walkBytes(len(s))
	parts := strings.SplitN(s, strs[0], int(n))
	e.walk(len(parts) * 10)
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}

func substring(e *evaluator, a []any) any {
	s, _, ints, ok := stringArgs(a, "ii?")
	if !ok {
		return errNoOverload
	}
	e.walkBytes(len(s))
	r := []rune(s)
	start, stop := ints[0], int64(len(r))
	if len(ints) == 2 {
		stop = ints[1]
		if start > stop {
			return errorf("invalid substring range. start: %d, end: %d", start, stop)
		}
	}
	switch {
	case start < 0 || start > int64(len(r)):
		return outOfRange(start)
	case stop < 0 || stop > int64(len(r)):
		return outOfRange(stop)
	}
	return string(r[start:stop])
}

func join(e *evaluator, a []any) any {
	list, ok := a[0].([]any)
	sep, isString := "", true
	if len(a) == 2 {
		sep, isString = a[1].(string)
	}
	if !ok || !isString {
		return errNoOverload
	}
	var b strings.Builder
	for i, v := range list {
		s, ok := v.(string)
		if !ok {
			return errNoOverload
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s)
	}
	e.walkBytes(b.Len())
	return b.String()
}

func reverse(e *evaluator, a []any) any {
	switch v := a[0].(type) {
	case string:
		e.walkBytes(len(v))
		r := []rune(v)
		slices.Reverse(r)
		return string(r)
	case []any:
		e.walk(len(v))
		out := slices.Clone(v)
		slices.Reverse(out)
		return out
	}
	return errNoOverload
}

func quote(e *evaluator, a []any) any {
	s, ok := a[0].(string)
	if !ok {
		return errNoOverload
	}
	e.walkBytes(len(s))
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch r {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\v':
			b.WriteString(`\v`)
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

//go:noinline
func timePart(ofTime func(time.Time) int64, ofDuration func(time.Duration) float64) function {
	return func(_ *evaluator, a []any) any {
		switch v := a[0].(type) {
		case time.Time:
			if len(a) == 1 {
				return ofTime(v.UTC())
			}
			tz, ok := a[1].(string)
			if !ok {
				return errNoOverload
			}
			loc, err := location(tz)
			if err != nil {
				return err
			}
			return ofTime(v.In(loc))
		case time.Duration:
			if len(a) != 1 {
				return errNoOverload
			}
			if ofDuration == nil {
				return v.Milliseconds()
			}
			return int64(ofDuration(v))
		}
		return errNoOverload
	}
}

// location reads a time zone: an IANA name or an offset such as "-08:00".
func location(tz string) (*time.Location, *evalError) {
	i := strings.IndexByte(tz, ':')
	if i < 0 {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return nil, errorf("%s", err)
		}
		return loc, nil
	}
	h, err1 := strconv.Atoi(tz[:i])
	m, err2 := strconv.Atoi(tz[i+1:])
	switch {
	case err1 != nil:
		return nil, errorf("%s", err1)
	case err2 != nil:
		return nil, errorf("%s", err2)
	case h < -23 || h > 23:
		return nil, errorf("timezone offset hours out of range [-23, 23]: %s", tz)
	case m < 0 || m > 59:
		return nil, errorf("timezone offset minutes out of range [0, 59]: %s", tz)
	}
	off := h*60 + m
	if tz[0] == '-' {
		off = h*60 - m
	}
	return time.FixedZone("", off*60), nil
}

func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case int64:
		return v == 0
	case uint64:
		return v == 0
	case float64:
		return v == 0
	case string:
		return v == ""
	case []byte:
		return len(v) == 0
	case []any:
		return len(v) == 0
	case map[string]any, *mapValue:
		return mapSize(v) == 0
	case time.Duration:
		return v == 0
	case time.Time:
		return v.IsZero()
	}
	return false
}

func unwrap(_ *evaluator, a []any) any {
	list, ok := a[0].([]any)
	if !ok {
		return errNoOverload
	}
	out := []any{}
	for _, v := range list {
		o, ok := v.(optional)
		if !ok {
			return errNoOverload
		}
		if o.has {
			out = append(out, o.v)
		}
	}
	return out
}

//go:noinline
func encode(enc *base64.Encoding) function {
	return func(e *evaluator, a []any) any {
		b, ok := a[0].([]byte)
		if !ok {
			return errNoOverload
		}
		e.walkBytes(len(b))
		return enc.EncodeToString(b)
	}
}

//go:noinline
func decode(enc, raw *base64.Encoding) function {
	return func(e *evaluator, a []any) any {
		s, ok := a[0].(string)
		if !ok {
			return errNoOverload
		}
		e.walkBytes(len(s))
		b, err := enc.DecodeString(s)
		if err != nil {
			if b, err = raw.DecodeString(s); err != nil {
				return errorf("%s", err)
			}
		}
		return b
	}
}

func sliceList(e *evaluator, a []any) any {
	list, ok1 := a[0].([]any)
	start, ok2 := a[1].(int64)
	stop, ok3 := a[2].(int64)
	switch {
	case !ok1 || !ok2 || !ok3:
		return errNoOverload
	case start < 0 || stop < 0:
		return errorf("cannot slice(%d, %d), negative indexes not supported", start, stop)
	case start > stop:
		return errorf("cannot slice(%d, %d), start index must be less than or equal to end index", start, stop)
	case stop > int64(len(list)):
		return errorf("cannot slice(%d, %d), list is length %d", start, stop, len(list))
	}
	e.walk(int(stop - start))
	return slices.Clone(list[start:stop])
}

func flatten(e *evaluator, a []any) any {
	list, ok := a[0].([]any)
	depth, isInt := int64(1), true
	if len(a) == 2 {
		depth, isInt = a[1].(int64)
	}
	switch {
	case !ok || !isInt:
		return errNoOverload
	case depth < 0:
		return errorf("level must be non-negative")
	}
	out := flattenInto([]any{}, list, depth)
	e.walk(len(out))
	return out
}

func flattenInto(dst, list []any, depth int64) []any {
	for _, v := range list {
		if inner, ok := v.([]any); ok && depth > 0 {
			dst = flattenInto(dst, inner, depth-1)
		} else {
			dst = append(dst, v)
		}
	}
	return dst
}

func distinct(e *evaluator, a []any) any {
	list, ok := a[0].([]any)
	if !ok {
		return errNoOverload
	}
	e.walk(len(list) * len(list) / 10)
	out := []any{}
	for _, v := range list {
		if v = norm(v); !contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func end(v any, first bool) any {
	list, ok := v.([]any)
	switch {
	case !ok:
		return errNoOverload
	case len(list) == 0:
		return optional{}
	case first:
		return optional{norm(list[0]), true}
	}
	return optional{norm(list[len(list)-1]), true}
}

func sortList(e *evaluator, a []any) any {
	return sortBy(e, []any{a[0], a[0]})
}

// sortBy orders a list by the keys at the same indexes of a second list,
// as list.sort() and the list.sortBy(x, key) macro do. The keys must be of
// one comparable type.
func sortBy(e *evaluator, a []any) any {
	list, ok1 := a[0].([]any)
	keys, ok2 := a[1].([]any)
	switch {
	case !ok1 || !ok2:
		return errNoOverload
	case len(list) != len(keys):
		return errorf("@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got %d and %d elements respectively", len(list), len(keys))
	case len(list) == 0:
		return list
	}
	kind := valueType(norm(keys[0]))
	switch kind {
	case "int", "uint", "double", "bool", "string", "bytes", "google.protobuf.Timestamp", "google.protobuf.Duration":
	default:
		return errorf("list elements must be comparable")
	}
	o := &keyOrder{idx: make([]int, len(list)), keys: keys, kind: kind}
	for i := range o.idx {
		o.idx[i] = i
	}
	e.walk(len(list) * bits.Len(uint(len(list))))
	// sort.Sort, not a stable sort, so that equal keys end as cel-go leaves
	// them.
	sort.Sort(o)
	if o.bad != nil {
		return o.bad
	}
	out := make([]any, len(list))
	for i, k := range o.idx {
		out[i] = norm(list[k])
	}
	return out
}

// keyOrder sorts indexes by their keys.
type keyOrder struct {
	idx  []int
	keys []any
	kind typeValue
	bad  *evalError
}

func (o *keyOrder) Len() int      { return len(o.idx) }
func (o *keyOrder) Swap(i, j int) { o.idx[i], o.idx[j] = o.idx[j], o.idx[i] }
func (o *keyOrder) Less(i, j int) bool {
	x, y := norm(o.keys[o.idx[i]]), norm(o.keys[o.idx[j]])
	if valueType(x) != o.kind || valueType(y) != o.kind {
		o.bad = errorf("list elements must have the same type")
		return false
	}
	c, _ := compare(x, y)
	return c < 0
}

//go:noinline
func listSet(test func(x, y []any) bool) function {
	return func(e *evaluator, a []any) any {
		x, ok1 := a[0].([]any)
		y, ok2 := a[1].([]any)
		if !ok1 || !ok2 {
			return errNoOverload
		}
		e.walk(len(x) * len(y) / 10)
		return test(x, y)
	}
}

// subset tells whether every element of x is in y.
func subset(x, y []any) bool {
	for _, v := range x {
		if !contains(y, norm(v)) {
			return false
		}
	}
	return true
}

// extreme is math.greatest (dir 1) or math.least (dir -1), over arguments
// or over one list.
//
//go:noinline
func extreme(dir int) function {
	return func(e *evaluator, a []any) any {
		if len(a) == 1 {
			if list, ok := a[0].([]any); ok {
				if len(list) == 0 {
					return errorf("math.@%s(list) argument must not be empty", map[int]string{1: "max", -1: "min"}[dir])
				}
				a = list
			}
		}
		e.walk(len(a))
		best := norm(a[0])
		for _, v := range a {
			v = norm(v)
			c, ok := compareNumbers(v, best)
			if !ok {
				return errNoOverload
			}
			if c == dir || isNaN(v) {
				best = v
			}
		}
		return best
	}
}

func abs(_ *evaluator, a []any) any {
	switch v := a[0].(type) {
	case int64:
		if v == math.MinInt64 {
			return errIntOverflow
		}
		if v < 0 {
			return -v
		}
		return v
	case uint64:
		return v
	case float64:
		return math.Abs(v)
	}
	return errNoOverload
}

func sign(_ *evaluator, a []any) any {
	switch v := a[0].(type) {
	case int64:
		return int64(cmpOrdered(v, 0))
	case uint64:
		return uint64(cmpOrdered(v, 0))
	case float64:
		if math.IsNaN(v) {
			return v
		}
		return float64(cmpOrdered(v, 0))
	}
	return errNoOverload
}

//go:noinline
func double2double(f func(float64) float64) function {
	return func(_ *evaluator, a []any) any {
		if v, ok := a[0].(float64); ok {
			return f(v)
		}
		return errNoOverload
	}
}

//go:noinline
func double2bool(f func(float64) bool) function {
	return func(_ *evaluator, a []any) any {
		if v, ok := a[0].(float64); ok {
			return f(v)
		}
		return errNoOverload
	}
}

func sqrt(_ *evaluator, a []any) any {
	switch v := a[0].(type) {
	case int64:
		return math.Sqrt(float64(v))
	case uint64:
		return math.Sqrt(float64(v))
	case float64:
		return math.Sqrt(v)
	}
	return errNoOverload
}

//go:noinline
func bitwise(op func(x, y uint64) uint64) function {
	return func(_ *evaluator, a []any) any {
		switch x := a[0].(type) {
		case int64:
			if y, ok := a[1].(int64); ok {
				return int64(op(uint64(x), uint64(y)))
			}
		case uint64:
			if y, ok := a[1].(uint64); ok {
				return op(x, y)
			}
		}
		return errNoOverload
	}
}

func bitNot(_ *evaluator, a []any) any {
	switch x := a[0].(type) {
	case int64:
		return ^x
	case uint64:
		return ^x
	}
	return errNoOverload
}

//go:noinline
func shift(left bool) function {
	name := "math.bitShiftRight"
	if left {
		name = "math.bitShiftLeft"
	}
	return func(_ *evaluator, a []any) any {
		n, ok := a[1].(int64)
		if !ok {
			return errNoOverload
		}
		if n < 0 {
			return errorf("%s() negative offset: %d", name, n)
		}
		switch x := a[0].(type) {
		case int64:
			if n > 63 {
				return int64(0)
			}
			if left {
				return x << n
			}
			return int64(uint64(x) >> n)
		case uint64:
			if n > 63 {
				return uint64(0)
			}
			if left {
				return x << n
			}
			return x >> n
		}
		return errNoOverload
	}
}

// format is ext.Strings' "...".format([args]): %s %d %f %e %b %x %X %o,
// with an optional precision for %f and %e, and %% for a percent sign.
func format(e *evaluator, a []any) any {
	f, ok1 := a[0].(string)
	args, ok2 := a[1].([]any)
	if !ok1 || !ok2 {
		return errNoOverload
	}
	e.walkBytes(len(f))
	var b []byte
	next := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b = append(b, f[i])
			continue
		}
		if i+1 < len(f) && f[i+1] == '%' {
			b = append(b, '%')
			i++
			continue
		}
		if next >= len(args) {
			return errorf("index %d out of range", next)
		}
		if i+1 >= len(f) {
			return errorf("unexpected end of string")
		}
		i++
		prec := 6
		if f[i] == '.' {
			j := i + 1
			for j < len(f) && f[j] >= '0' && f[j] <= '9' {
				j++
			}
			if j >= len(f) {
				return errorf("could not parse formatting clause: error while parsing precision: could not find end of precision specifier")
			}
			p, err := strconv.Atoi(f[i+1 : j])
			if err != nil || p > 100 {
				return errorf("could not parse formatting clause: error while parsing precision: precision %s exceeds maximum allowed precision 100", f[i+1:j])
			}
			prec, i = p, j
		}
		out, err := formatClause(b, f[i], prec, norm(args[next]))
		if err != nil {
			return err
		}
		b = out
		next++
	}
	e.walkBytes(len(b))
	return string(b)
}

func formatClause(b []byte, verb byte, prec int, v any) ([]byte, *evalError) {
	bad := func(what string) ([]byte, *evalError) {
		return nil, errorf("error during formatting: %s, was given %s", what, valueType(v))
	}
	if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) && strings.IndexByte("sdfe", verb) >= 0 {
		switch {
		case math.IsNaN(f):
			return append(b, "NaN"...), nil
		case f < 0:
			return append(b, "-Infinity"...), nil
		}
		return append(b, "Infinity"...), nil
	}
	switch verb {
	case 's':
		return appendString(b, v)
	case 'd':
		switch v.(type) {
		case int64, uint64, float64:
			return appendString(b, v)
		}
		return bad("decimal clause can only be used on ints, uints, and doubles")
	case 'f', 'e':
		var x float64
		switch n := v.(type) {
		case int64:
			x = float64(n)
		case uint64:
			x = float64(n)
		case float64:
			x = n
		default:
			if verb == 'f' {
				return bad("fixed-point clause can only be used on ints, uints, and doubles")
			}
			return bad("scientific clause can only be used on ints, uints, and doubles")
		}
		if verb == 'f' {
			return strconv.AppendFloat(b, x, 'f', prec, 64), nil
		}
		return strconv.AppendFloat(b, x, 'e', prec, 64), nil
	case 'b', 'o':
		base := 2
		if verb == 'o' {
			base = 8
		}
		switch n := v.(type) {
		case int64:
			return strconv.AppendInt(b, n, base), nil
		case uint64:
			return strconv.AppendUint(b, n, base), nil
		case bool:
			if verb == 'b' && n {
				return append(b, '1'), nil
			} else if verb == 'b' {
				return append(b, '0'), nil
			}
		}
		if verb == 'b' {
			return bad("only ints, uints, and bools can be formatted as binary")
		}
		return bad("octal clause can only be used on ints and uints")
	case 'x', 'X':
		var s string
		switch n := v.(type) {
		case int64:
			if n < 0 {
				s = "-" + strconv.FormatUint(uint64(-n), 16)
			} else {
				s = strconv.FormatInt(n, 16)
			}
		case uint64:
			s = strconv.FormatUint(n, 16)
		case string:
			s = hexString([]byte(n))
		case []byte:
			s = hexString(n)
		default:
			return bad("only ints, uints, bytes, and strings can be formatted as hex")
		}
		if verb == 'X' {
			s = strings.ToUpper(s)
		}
		return append(b, s...), nil
	}
	return nil, errorf("could not parse formatting clause: unrecognized formatting clause \"%c\"", verb)
}

func hexString(p []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(p))
	for _, c := range p {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// appendString is format's %s: lists and maps in CEL-like notation, map
// entries sorted by their formatted keys.
func appendString(b []byte, v any) ([]byte, *evalError) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case float64:
		switch {
		case math.IsNaN(x):
			return append(b, "NaN"...), nil
		case math.IsInf(x, 1):
			return append(b, "Infinity"...), nil
		case math.IsInf(x, -1):
			return append(b, "-Infinity"...), nil
		}
		return strconv.AppendFloat(b, x, 'f', -1, 64), nil
	case string:
		return append(b, x...), nil
	case []byte:
		return append(b, x...), nil
	case time.Duration:
		return append(b, durationSeconds(x)...), nil
	case time.Time:
		return x.UTC().AppendFormat(b, time.RFC3339Nano), nil
	case typeValue:
		return append(b, x...), nil
	case []any:
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			var err *evalError
			if b, err = appendString(b, norm(el)); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any, *mapValue:
		type entry struct{ k, v string }
		var ents []entry
		for _, k := range mapKeys(x) {
			val, _ := mapGet(x, k)
			ks, err := appendString(nil, k)
			if err != nil {
				return nil, err
			}
			vs, err := appendString(nil, val)
			if err != nil {
				return nil, err
			}
			ents = append(ents, entry{string(ks), string(vs)})
		}
		slices.SortStableFunc(ents, func(p, q entry) int { return strings.Compare(p.k, q.k) })
		b = append(b, '{')
		for i, en := range ents {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, en.k...)
			b = append(b, ": "...)
			b = append(b, en.v...)
		}
		return append(b, '}'), nil
	}
	return nil, errorf("error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given %s", valueType(v))
}
