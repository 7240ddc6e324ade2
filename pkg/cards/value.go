package cards

import (
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// Values of expressions are JSON values as encoding/json decodes them (nil,
// bool, float64, string, []any, map[string]any) plus undefined, which
// JavaScript tells apart from null: a property that is not there.

type undefinedValue struct{}

var undefined any = undefinedValue{}

func isUndefined(v any) bool { _, ok := v.(undefinedValue); return ok }

// isNullish is JavaScript's v == null.
func isNullish(v any) bool { return v == nil || isUndefined(v) }

func isJSNumber(v any) bool {
	f, ok := v.(float64)
	return ok && !math.IsNaN(f)
}

func isInteger(v any) bool {
	f, ok := v.(float64)
	return ok && !math.IsInf(f, 0) && f == math.Trunc(f)
}

// isLogicTrue is how adaptive expressions read a condition: a boolean is
// itself, null and undefined are false, anything else is true.
func isLogicTrue(v any) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	return !isNullish(v)
}

// toJSString is JavaScript's String(v) for the values of expressions.
func toJSString(v any) string {
	switch x := v.(type) {
	case undefinedValue:
		return "undefined"
	case nil:
		return "null"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return jsNumber(x)
	case []any:
		parts := make([]string, len(x))
		for i, item := range x {
			if !isNullish(item) {
				parts[i] = toJSString(item)
			}
		}
		return strings.Join(parts, ",")
	}
	return "[object Object]"
}

// jsNumber formats a number as JavaScript's Number.prototype.toString does.
func jsNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	if a := math.Abs(f); a >= 1e-7 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	sign := exp[0]
	exp = strings.TrimLeft(exp[1:], "0")
	return mant + "e" + string(sign) + exp
}

// jsonStringify is JSON.stringify for the values of expressions, with
// object keys in sorted order (a Go map keeps no other).
func jsonStringify(v any) string {
	var b strings.Builder
	writeJSON(&b, v)
	return b.String()
}

func writeJSON(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil, undefinedValue:
		b.WriteString("null")
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b.WriteString("null")
		} else {
			b.WriteString(jsNumber(x))
		}
	case []any:
		b.WriteByte('[')
		for i, item := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, item)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		first := true
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if isUndefined(x[k]) {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			writeJSONString(b, k)
			b.WriteByte(':')
			writeJSON(b, x[k])
		}
		b.WriteByte('}')
	case string:
		writeJSONString(b, x)
	default:
		data, _ := json.Marshal(x)
		b.Write(data)
	}
}

// writeJSONString quotes s as JSON.stringify does: no HTML escaping.
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// commonStringify is how concat and string() write a value: objects and
// arrays as JSON without leading or trailing quotes, null as "".
func commonStringify(v any) string {
	switch v.(type) {
	case nil, undefinedValue:
		return ""
	case []any, map[string]any:
		return strings.Trim(jsonStringify(v), `'"`)
	}
	return toJSString(v)
}

// commonEquals is equality of adaptive expressions: null equals undefined,
// lists and objects compare by content, numbers within an epsilon.
func commonEquals(a, b any) bool {
	if isNullish(a) || isNullish(b) {
		return isNullish(a) && isNullish(b)
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok {
		if len(al) != len(bl) {
			return false
		}
		for i := range al {
			if !commonEquals(al[i], bl[i]) {
				return false
			}
		}
		return true
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		return deepEqual(am, bm)
	}
	if aok != bok {
		// An object against a list or a primitive: lodash isEqual of two
		// different kinds, false.
		if aok || bok {
			return false
		}
	}
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok {
			return math.Abs(x-y) < 2.220446049250313e-16 || x == y
		}
	}
	return a == b
}

// deepEqual compares two objects as lodash's isEqual does for JSON values.
func deepEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !deepEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !deepEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// sameReference is JavaScript's === for the values of expressions: objects
// and lists are equal only to themselves.
func sameReference(a, b any) bool {
	switch a.(type) {
	case map[string]any, []any:
		va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
		if va.Kind() != vb.Kind() {
			return false
		}
		if va.Kind() == reflect.Slice && va.Len() != vb.Len() {
			return false
		}
		return va.UnsafePointer() == vb.UnsafePointer()
	}
	switch b.(type) {
	case map[string]any, []any:
		return false
	}
	return a == b
}

// utf16Len and the functions below count as JavaScript strings do, in
// UTF-16 code units.
func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

func utf16Slice(s string, from, to int) string {
	u := utf16.Encode([]rune(s))
	return string(utf16.Decode(u[from:to]))
}

// compareUTF16 orders strings as JavaScript does, by UTF-16 code units,
// which differs from byte order only past U+FFFF.
func compareUTF16(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return cmpFloat(float64(ua[i]), float64(ub[i]))
		}
	}
	return cmpFloat(float64(len(ua)), float64(len(ub)))
}

// utf16Units splits s into its UTF-16 code units, as JavaScript indexes a
// string; half of a surrogate pair reads as U+FFFD, as it does once
// JSON-encoded and decoded.
func utf16Units(s string) []string {
	u := utf16.Encode([]rune(s))
	out := make([]string, len(u))
	for i := range u {
		out[i] = string(utf16.Decode(u[i : i+1]))
	}
	return out
}

func utf16Index(s, sub string) int {
	i := strings.Index(s, sub)
	if i < 0 {
		return -1
	}
	return utf16Len(s[:i])
}

// utf16LastIndex is s.lastIndexOf(sub, s.length - 1), as the npm package
// calls it: an empty sub is found at the last character.
func utf16LastIndex(s, sub string) int {
	if sub == "" {
		return max(utf16Len(s)-1, 0)
	}
	i := strings.LastIndex(s, sub)
	if i < 0 {
		return -1
	}
	return utf16Len(s[:i])
}

// jsParseInt reads a leading integer as JavaScript's parseInt(s, 10) does.
func jsParseInt(s string) (float64, bool) {
	s = strings.TrimLeft(s, " \t\n\r\v\f\u00a0\ufeff")
	sign := 1.0
	if s != "" && (s[0] == '+' || s[0] == '-') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	if n == 0 {
		return 0, false
	}
	f, _ := strconv.ParseFloat(s[:n], 64)
	return sign * f, true
}

// jsParseFloat reads a leading decimal number as JavaScript's parseFloat.
func jsParseFloat(s string) (float64, bool) {
	s = strings.TrimLeft(s, " \t\n\r\v\f\u00a0\ufeff")
	if strings.HasPrefix(s, "Infinity") || strings.HasPrefix(s, "+Infinity") {
		return math.Inf(1), true
	}
	if strings.HasPrefix(s, "-Infinity") {
		return math.Inf(-1), true
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	end := i
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > j {
			end = k
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(s[:end], "."), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}
