package cardflow

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

var isoDuration = regexp.MustCompile(`^P(?:([0-9]+)W)?(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:\.[0-9]+)?)S)?)?$`)

// MaxDurationSeconds bounds a duration, about 31 years: longer ones are
// mistakes, and the bound keeps every sum within time.Duration.
const MaxDurationSeconds = 1e9

// ParseDuration reads an ISO 8601 duration of weeks, days, hours, minutes
// and seconds (PT72H, P2DT4H, PT30.5S), longer than zero and at most
// MaxDurationSeconds. Years and months are refused: their length depends
// on the calendar.
func ParseDuration(s string) (time.Duration, error) {
	sec, err := durationSeconds(s)
	switch {
	case err != nil:
		return 0, err
	case sec > MaxDurationSeconds:
		return 0, fmt.Errorf("%q is longer than %.0f seconds (about 31 years)", s, MaxDurationSeconds)
	case sec*float64(time.Second) < 1:
		return 0, fmt.Errorf("%q must be longer than zero", s)
	}
	return time.Duration(sec * float64(time.Second)), nil
}

// ParseAge reads an ISO 8601 duration as ParseDuration does, as the age a
// filter asks for: zero is allowed, and an age longer than
// MaxDurationSeconds is read as that bound, which nothing the service
// keeps reaches.
func ParseAge(s string) (time.Duration, error) {
	sec, err := durationSeconds(s)
	if err != nil {
		return 0, err
	}
	return time.Duration(min(sec, MaxDurationSeconds) * float64(time.Second)), nil
}

// durationSeconds reads a duration's length in seconds. A float holds any
// number of digits (a huge one is +Inf), so no sum overflows.
func durationSeconds(s string) (float64, error) {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || s == "P" || s[len(s)-1] == 'T' {
		return 0, fmt.Errorf("%q is not an ISO 8601 duration such as PT30M, PT72H or P2D", s)
	}
	var sec float64
	for i, unit := range []float64{7 * 24 * 3600, 24 * 3600, 3600, 60, 1} {
		if m[i+1] == "" {
			continue
		}
		// The pattern lets only digits through: the one error is a
		// number out of range, which ParseFloat answers with +Inf.
		n, _ := strconv.ParseFloat(m[i+1], 64)
		sec += n * unit
	}
	return sec, nil
}
