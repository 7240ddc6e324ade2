package awscron

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// units maps the units of a rate expression to their length; a day is 24
// hours, as EventBridge Scheduler counts it across daylight saving time.
var units = map[string]time.Duration{
	"minute": time.Minute, "minutes": time.Minute,
	"hour": time.Hour, "hours": time.Hour,
	"day": 24 * time.Hour, "days": 24 * time.Hour,
}

// parseRate parses the inside of rate(value unit).
func parseRate(body string) (time.Duration, error) {
	fields := strings.Fields(body)
	if len(fields) != 2 {
		return 0, fmt.Errorf("rate: %q must be a value and a unit, as in rate(5 minutes)", body)
	}
	value, unit := fields[0], fields[1]
	n, ok := number(value)
	if !ok || n == 0 {
		return 0, fmt.Errorf("rate: value %q must be a positive whole number", value)
	}
	length, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("rate: unit %q must be minute, minutes, hour, hours, day or days", unit)
	}
	singular := !strings.HasSuffix(unit, "s")
	switch {
	case n == 1 && !singular:
		return 0, fmt.Errorf("rate: a value of 1 takes the unit %q, not %q", strings.TrimSuffix(unit, "s"), unit)
	case n > 1 && singular:
		return 0, fmt.Errorf("rate: a value of %d takes the unit %q, not %q", n, unit+"s", unit)
	case n > math.MaxInt64/int64(length):
		return 0, fmt.Errorf("rate: %d %s is too long", n, unit)
	}
	return time.Duration(n) * length, nil
}

// number parses a non-empty string of ASCII digits without overflowing.
func number(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' || n > (math.MaxInt64-9)/10 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseAt parses the inside of at(yyyy-mm-ddThh:mm:ss), a wall-clock time in
// loc, into the first instant the clock reads it.
func parseAt(body string, loc *time.Location) (time.Time, error) {
	form := func() error {
		return fmt.Errorf("at: %q must be a date and time of the form yyyy-mm-ddThh:mm:ss", body)
	}
	if len(body) != len("yyyy-mm-ddThh:mm:ss") || body[4] != '-' || body[7] != '-' || body[10] != 'T' || body[13] != ':' || body[16] != ':' {
		return time.Time{}, form()
	}
	var parts [6]int // year, month, day, hour, minute, second
	for i, pos := range [6][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}, {17, 19}} {
		n, ok := number(body[pos[0]:pos[1]])
		if !ok {
			return time.Time{}, form()
		}
		parts[i] = int(n)
	}
	year, month, day, hour, minute, second := parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return time.Time{}, fmt.Errorf("at: %s is not a date", body[:10])
	}
	if hour > 23 || minute > 59 || second > 59 {
		return time.Time{}, fmt.Errorf("at: %s is not a time of day", body[11:])
	}
	at, ok := firstInstant(loc, wall{year, month, day, hour, minute}, second)
	if !ok {
		return time.Time{}, fmt.Errorf("at: %s does not exist in %s: the clocks skip it when daylight saving time starts", body, loc)
	}
	return at, nil
}
