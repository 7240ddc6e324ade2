package cardflow

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

var isoDuration = regexp.MustCompile(`^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// ParseDuration reads an ISO 8601 duration of weeks, days, hours, minutes
// and seconds (PT72H, P2DT4H, PT30.5S). Years and months are refused: their
// length depends on the calendar.
func ParseDuration(s string) (time.Duration, error) {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || s == "P" || s[len(s)-1] == 'T' {
		return 0, fmt.Errorf("%q is not an ISO 8601 duration such as PT30M, PT72H or P2D", s)
	}
	units := []time.Duration{7 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute}
	var d time.Duration
	for i, unit := range units {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.ParseInt(m[i+1], 10, 32)
		if err != nil {
			return 0, fmt.Errorf("%q: number too large", s)
		}
		d += time.Duration(n) * unit
	}
	if m[5] != "" {
		f, err := strconv.ParseFloat(m[5], 64)
		if err != nil || f > 1e9 {
			return 0, fmt.Errorf("%q: number too large", s)
		}
		d += time.Duration(f * float64(time.Second))
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be longer than zero", s)
	}
	return d, nil
}
