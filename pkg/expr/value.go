package expr

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"time"
)

// Values at run time are plain Go values held in an any, so that the inputs
// are read where they lie, never copied:
//
//	null      nil
//	bool      bool
//	int       int64 (an int from the inputs is read as int64)
//	uint      uint64
//	double    float64
//	string    string
//	bytes     []byte
//	list      []any
//	map       map[string]any (the inputs) or *mapValue (map literals)
//	timestamp time.Time
//	duration  time.Duration
//	type      typeValue
//	optional  optional
//
// An error is a value too, an *evalError, until it reaches the top of the
// evaluation: && and || absorb it when their other side decides.

// evalError is an error met while evaluating, such as a missing key.
type evalError struct{ msg string }

func (e *evalError) Error() string { return e.msg }

func errorf(format string, args ...any) *evalError {
	return &evalError{fmt.Sprintf(format, args...)}
}

var (
	errNoOverload     = &evalError{"no such overload"}
	errDivByZero      = &evalError{"division by zero"}
	errModByZero      = &evalError{"modulus by zero"}
	errIntOverflow    = &evalError{"integer overflow"}
	errUintOverflow   = &evalError{"unsigned integer overflow"}
	errTimeOverflow   = &evalError{"timestamp overflow"}
	errDurationRange  = &evalError{"duration overflow"}
	errNaNOrder       = &evalError{"NaN values cannot be ordered"}
	errNoneDereferred = &evalError{"optional.none() dereference"}
)

// typeValue is a type as a value, as type(x) yields it; it holds the type's
// name.
type typeValue string

// optional is an optional value: has tells whether v is there.
type optional struct {
	v   any
	has bool
}

// mapValue is a map built by the expression, which keeps its keys in the
// order they were written. Lookups compare keys with equal, so numeric keys
// match by value, as in CEL.
type mapValue struct {
	keys, vals []any
}

func (m *mapValue) find(k any) (any, bool) {
	for i, key := range m.keys {
		if equal(key, k) {
			return m.vals[i], true
		}
	}
	return nil, false
}

// norm turns a Go value read from the inputs into its run-time form: the
// inputs are JSON values, but Go code may put any integer in them.
func norm(v any) any {
	switch v := v.(type) {
	case int:
		return int64(v)
	case int8:
		return int64(v)
	case int16:
		return int64(v)
	case int32:
		return int64(v)
	case uint:
		return uint64(v)
	case uint8:
		return uint64(v)
	case uint16:
		return uint64(v)
	case uint32:
		return uint64(v)
	case float32:
		return float64(v)
	}
	return v
}

// Timestamps lie between the years 1 and 9999, as in CEL.
var (
	minTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

func checkTime(t time.Time) any {
	if t.Before(minTime) || t.After(maxTime) {
		return errTimeOverflow
	}
	return t
}

// valueType names the type of a value, as type() and messages do.
func valueType(v any) typeValue {
	switch v.(type) {
	case nil:
		return "null_type"
	case bool:
		return "bool"
	case int64:
		return "int"
	case uint64:
		return "uint"
	case float64:
		return "double"
	case string:
		return "string"
	case []byte:
		return "bytes"
	case []any:
		return "list"
	case map[string]any, *mapValue:
		return "map"
	case time.Time:
		return "google.protobuf.Timestamp"
	case time.Duration:
		return "google.protobuf.Duration"
	case typeValue:
		return "type"
	case optional:
		return "optional_type"
	}
	return typeValue(fmt.Sprintf("%T", v))
}

// kindName names a value's type for "expression must yield a bool, not ...".
func kindName(v any) string {
	if v == nil {
		return "null"
	}
	return string(valueType(v))
}

// isMap tells whether v is a map.
func isMap(v any) bool {
	switch v.(type) {
	case map[string]any, *mapValue:
		return true
	}
	return false
}

func mapSize(m any) int {
	if g, ok := m.(map[string]any); ok {
		return len(g)
	}
	return len(m.(*mapValue).keys)
}

// mapGet looks a key up in a map.
func mapGet(m, k any) (any, bool) {
	if g, ok := m.(map[string]any); ok {
		s, ok := k.(string)
		if !ok {
			return nil, false
		}
		v, ok := g[s]
		return norm(v), ok
	}
	return m.(*mapValue).find(k)
}

// mapKeys lists a map's keys: in the order written for a map literal.
func mapKeys(m any) []any {
	if g, ok := m.(map[string]any); ok {
		keys := make([]any, 0, len(g))
		for k := range g {
			keys = append(keys, k)
		}
		return keys
	}
	return m.(*mapValue).keys
}

// equal is CEL's heterogeneous equality: values of different types are
// unequal, except numbers, which compare by value.
func equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case int64, uint64, float64:
		c, ok := compareNumbers(a, b)
		return ok && c == 0 && !isNaN(a) && !isNaN(b)
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case time.Duration:
		y, ok := b.(time.Duration)
		return ok && x == y
	case typeValue:
		y, ok := b.(typeValue)
		return ok && x == y
	case optional:
		y, ok := b.(optional)
		return ok && x.has == y.has && (!x.has || equal(x.v, y.v))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(norm(x[i]), norm(y[i])) {
				return false
			}
		}
		return true
	case map[string]any, *mapValue:
		if !isMap(b) || mapSize(a) != mapSize(b) {
			return false
		}
		for _, k := range mapKeys(a) {
			v, _ := mapGet(a, k)
			w, ok := mapGet(b, k)
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

func isNaN(v any) bool {
	f, ok := v.(float64)
	return ok && math.IsNaN(f)
}

// compareNumbers orders two numbers of any numeric types by value; ok is
// false unless both are numbers.
func compareNumbers(a, b any) (c int, ok bool) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmpOrdered(x, y), true
		case uint64:
			if x < 0 || y > math.MaxInt64 {
				return -1, true
			}
			return cmpOrdered(uint64(x), y), true
		case float64:
			return -compareDoubleInt(y, x), true
		}
	case uint64:
		switch y := b.(type) {
		case int64:
			if y < 0 || x > math.MaxInt64 {
				return 1, true
			}
			return cmpOrdered(x, uint64(y)), true
		case uint64:
			return cmpOrdered(x, y), true
		case float64:
			return -compareDoubleUint(y, x), true
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return compareDoubleInt(x, y), true
		case uint64:
			return compareDoubleUint(x, y), true
		case float64:
			return cmpOrdered(x, y), true
		}
	}
	return 0, false
}

func cmpOrdered[T int64 | uint64 | float64 | string](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// compareDoubleInt and compareDoubleUint compare as CEL does: through
// doubles, within the integer's range.
func compareDoubleInt(d float64, i int64) int {
	switch {
	case d < math.MinInt64:
		return -1
	case d > math.MaxInt64:
		return 1
	}
	return cmpOrdered(d, float64(i))
}

func compareDoubleUint(d float64, u uint64) int {
	switch {
	case d < 0:
		return -1
	case d > math.MaxUint64:
		return 1
	}
	return cmpOrdered(d, float64(u))
}

// compare orders two values for < <= > >=: numbers of any types, strings,
// bytes, bools, timestamps and durations.
func compare(a, b any) (int, *evalError) {
	if isNaN(a) || isNaN(b) {
		if _, ok := compareNumbers(a, b); ok {
			return 0, errNaNOrder
		}
	}
	if c, ok := compareNumbers(a, b); ok {
		return c, nil
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmpBool(x, y), nil
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y), nil
		}
	case time.Duration:
		if y, ok := b.(time.Duration); ok {
			return cmpOrdered(int64(x), int64(y)), nil
		}
	}
	return 0, errNoOverload
}

func cmpBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case x:
		return 1
	}
	return -1
}
