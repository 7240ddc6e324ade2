package cards

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Date functions of adaptive expressions. They work in UTC, read ISO 8601
// timestamps, and take .NET-style format strings ("dd MMM yyyy"), which the
// npm package translates to day.js tokens before formatting; this file
// does the same two steps so that odd formats come out the same.

type timeValue = time.Time

// defaultDayjsFormat is the format of adaptive expressions' timestamps.
const defaultDayjsFormat = "YYYY-MM-DDTHH:mm:ss.SSS[Z]"

var isoPattern = regexp.MustCompile(`^([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?` +
	`(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?(Z|[+-]\d{2}:?\d{2})?$`)

// parseDate reads the timestamps JavaScript's Date parses the same way in
// every engine: ISO 8601 dates and date-times. A date-time without a zone
// is UTC here, as formatDateTime reads it.
func parseDate(s string) (time.Time, bool) {
	m := isoPattern.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	num := func(x string, def int) int {
		if x == "" {
			return def
		}
		n, _ := strconv.Atoi(x)
		return n
	}
	year := num(m[1], 0)
	month, day := num(m[2], 1), num(m[3], 1)
	hour, minute, sec := num(m[4], 0), num(m[5], 0), num(m[6], 0)
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 24 || minute > 59 || sec > 59 ||
		hour == 24 && (minute > 0 || sec > 0 || strings.Trim(m[7], "0") != "") {
		return time.Time{}, false
	}
	ms := 0
	if frac := m[7]; frac != "" {
		frac = (frac + "00")[:3]
		ms, _ = strconv.Atoi(frac)
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, ms*int(time.Millisecond), time.UTC)
	if z := m[8]; z != "" && z != "Z" {
		z = strings.ReplaceAll(z, ":", "")
		h, _ := strconv.Atoi(z[1:3])
		mi, _ := strconv.Atoi(z[3:5])
		if h > 23 || mi > 59 {
			return time.Time{}, false
		}
		off := time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute
		if z[0] == '+' {
			t = t.Add(-off)
		} else {
			t = t.Add(off)
		}
	}
	if t.Year() < -271820 || t.Year() > 275759 {
		return time.Time{}, false
	}
	return t, true
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// isoString is JavaScript's Date.prototype.toISOString.
func isoString(t time.Time) string {
	y := t.Year()
	var year string
	switch {
	case y < 0:
		year = fmt.Sprintf("-%06d", -y)
	case y > 9999:
		year = fmt.Sprintf("+%06d", y)
	default:
		year = fmt.Sprintf("%04d", y)
	}
	return year + t.Format("-01-02T15:04:05.000Z")
}

// parseISOTimestamp accepts exactly what toISOString writes, as the npm
// package's date arithmetic demands.
func parseISOTimestamp(v any) (time.Time, error) {
	s, _ := v.(string)
	t, ok := parseDate(s)
	if !ok {
		return time.Time{}, errorf("%s is not a valid datetime string.", toJSString(v))
	}
	if isoString(t) != s {
		return time.Time{}, errorf("%s is not a ISO format datetime string.", s)
	}
	return t, nil
}

func datePart(name string, part func(timeValue) float64) *function {
	return &function{name: name, ret: rtNumber, validate: arity(1, 1, rtString), eval: apply(func(args []any) (any, error) {
		t, err := parseISOTimestamp(args[0])
		if err != nil {
			return nil, err
		}
		return part(t), nil
	}, verifyString)}
}

// The add functions set a field to its value plus n, which JavaScript
// truncates to an integer.
func addDays(t time.Time, n float64) time.Time {
	return t.AddDate(0, 0, int(math.Trunc(float64(t.Day())+n))-t.Day())
}

func addHours(t time.Time, n float64) time.Time {
	return addUnits(t, t.Hour(), n, 3600)
}

func addMinutes(t time.Time, n float64) time.Time {
	return addUnits(t, t.Minute(), n, 60)
}

func addSeconds(t time.Time, n float64) time.Time {
	return addUnits(t, t.Second(), n, 1)
}

// addUnits moves t by whole units of the given seconds, counting in
// seconds rather than time.Duration, which would overflow past 292 years.
func addUnits(t time.Time, field int, n float64, seconds int64) time.Time {
	delta := int64(math.Trunc(float64(field)+n)) - int64(field)
	return time.Unix(t.Unix()+delta*seconds, int64(t.Nanosecond())).UTC()
}

func timeTransform(name string, f func(time.Time, float64) time.Time) *function {
	return &function{name: name, ret: rtString, validate: order([]returnType{rtString, rtString}, rtString, rtNumber), eval: func(e *expr, s *state) (any, error) {
		args, err := evalArgs(e, s, nil)
		if err != nil {
			return nil, err
		}
		format, err := formatArg(args, 4)
		if err != nil {
			return nil, err
		}
		if _, ok := args[0].(string); !ok || !isJSNumber(args[1]) {
			return nil, errorf("%s should contain an ISO format timestamp and a time interval integer.", e)
		}
		t, err := parseISOTimestamp(args[0])
		if err != nil {
			return nil, err
		}
		n := args[1].(float64)
		if math.Abs(n) > 1e8 {
			return nil, errorf("%s moves the time out of range", e)
		}
		return dayjsFormat(f(t, n), format), nil
	}}
}

// formatArg picks the format of a date function with at most max
// arguments, the last two being format and locale: adaptive expressions'
// determineFormatAndLocale.
func formatArg(args []any, max int) (string, error) {
	format := defaultDayjsFormat
	switch len(args) {
	case max:
		f, fok := args[max-2].(string)
		_, lok := args[max-1].(string)
		if fok && lok {
			if f == "" {
				return defaultDayjsFormat, nil
			}
			return dayjsFromDotNet(f), nil
		}
	case max - 1:
		if f, ok := args[max-2].(string); ok {
			if f == "" {
				return defaultDayjsFormat, nil
			}
			return dayjsFromDotNet(f), nil
		}
	}
	return format, nil
}

func evalFormatDateTime(e *expr, s *state) (any, error) {
	args, err := evalArgs(e, s, nil)
	if err != nil {
		return nil, err
	}
	str, ok := args[0].(string)
	if !ok {
		return nil, errorf("%s is not a timestamp string", toJSString(args[0]))
	}
	t, ok := parseDate(str)
	if !ok {
		return nil, errorf("%s is not a valid datetime string.", str)
	}
	format, err := formatArg(args, 3)
	if err != nil {
		return nil, err
	}
	return dayjsFormat(t, format), nil
}

// dayjsFromDotNet translates a .NET format string to day.js tokens as
// adaptive expressions' convertCSharpDateTimeToDayjs does. Formats it
// cannot translate are used as they are, as there.
func dayjsFromDotNet(f string) string {
	out, ok := convertDotNet(f)
	if !ok {
		return f
	}
	return out
}

func convertDotNet(f string) (string, bool) {
	switch f {
	case "R", "r", "U", "u":
		return "", false
	case "O", "o":
		f = "YYYY-MM-DDTHH:mm:ss.SSS0000Z"
	}
	var out strings.Builder
	runes := []rune(f)
	for i := 0; i < len(runes); {
		c := runes[i]
		n := 1
		for i+n < len(runes) && runes[i+n] == c {
			n++
		}
		// Repeats beyond the longest token are absorbed by it.
		tok := func(tokens ...string) string { return tokens[min(n, len(tokens))-1] }
		switch c {
		case 'd':
			out.WriteString(tok("D", "DD", "ddd", "dddd"))
		case 'f', 'F':
			if n < 3 {
				return "", false
			}
			out.WriteString("SSS")
		case 'g':
			return "", false
		case 'h':
			out.WriteString(tok("h", "hh"))
		case 'H':
			out.WriteString(tok("H", "HH"))
		case 'K':
			out.WriteString(strings.Repeat("Z", n))
		case 'm':
			out.WriteString(tok("m", "mm"))
		case 'M':
			out.WriteString(tok("M", "MM", "MMM", "MMMM"))
		case 's':
			out.WriteString(tok("s", "ss"))
		case 't':
			out.WriteString("A")
		case 'y':
			out.WriteString(tok("YY", "YY", "YYYY", "YYYY"))
		case 'z':
			out.WriteString(tok("ZZ", "ZZ", "Z"))
		case '%':
		case '\'', '`':
			end := -1
			for j := i + 1; j < len(runes); j++ {
				if runes[j] == c {
					end = j
					break
				}
			}
			if end < 0 {
				return "", false
			}
			out.WriteString(string(runes[i+1 : end]))
			i = end + 1
			continue
		case '\\':
			if i+1 >= len(runes) {
				return "", false
			}
			out.WriteRune(runes[i+1])
			i += 2
			continue
		default:
			out.WriteString(strings.Repeat(string(c), n))
		}
		i += n
	}
	return out.String(), true
}

var dayjsTokens = regexp.MustCompile(`\[([^\]]+)]|YYYY|YY|M{1,4}|D{1,2}|d{1,4}|H{1,2}|h{1,2}|a|A|m{1,2}|s{1,2}|Z{1,2}|SSS`)

// dayjsFormat formats t in UTC with day.js's tokens and English names. An
// empty format is day.js's default for UTC times.
func dayjsFormat(t time.Time, format string) string {
	if format == "" {
		format = "YYYY-MM-DDTHH:mm:ss[Z]"
	}
	t = t.UTC()
	return dayjsTokens.ReplaceAllStringFunc(format, func(m string) string {
		if strings.HasPrefix(m, "[") {
			return m[1 : len(m)-1]
		}
		h12 := t.Hour() % 12
		if h12 == 0 {
			h12 = 12
		}
		switch m {
		case "YY":
			y := strconv.Itoa(t.Year())
			return y[max(0, len(y)-2):]
		case "YYYY":
			return pad(t.Year(), 4)
		case "M":
			return strconv.Itoa(int(t.Month()))
		case "MM":
			return pad(int(t.Month()), 2)
		case "MMM":
			return t.Month().String()[:3]
		case "MMMM":
			return t.Month().String()
		case "D":
			return strconv.Itoa(t.Day())
		case "DD":
			return pad(t.Day(), 2)
		case "d":
			return strconv.Itoa(int(t.Weekday()))
		case "dd":
			return t.Weekday().String()[:2]
		case "ddd":
			return t.Weekday().String()[:3]
		case "dddd":
			return t.Weekday().String()
		case "H":
			return strconv.Itoa(t.Hour())
		case "HH":
			return pad(t.Hour(), 2)
		case "h":
			return strconv.Itoa(h12)
		case "hh":
			return pad(h12, 2)
		case "a":
			if t.Hour() < 12 {
				return "am"
			}
			return "pm"
		case "A":
			if t.Hour() < 12 {
				return "AM"
			}
			return "PM"
		case "m":
			return strconv.Itoa(t.Minute())
		case "mm":
			return pad(t.Minute(), 2)
		case "s":
			return strconv.Itoa(t.Second())
		case "ss":
			return pad(t.Second(), 2)
		case "SSS":
			return pad(t.Nanosecond()/int(time.Millisecond), 3)
		case "Z":
			return "+00:00"
		}
		return "+0000"
	})
}

// pad is day.js's padStart: a minus sign counts toward the width.
func pad(n, width int) string {
	s := strconv.Itoa(n)
	for len(s) < width {
		s = "0" + s
	}
	return s
}
