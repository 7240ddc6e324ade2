package awscron

import (
	"fmt"
	"math/bits"
	"strings"
	"time"
)

// The years a cron expression can name.
const (
	minYear = 1970
	maxYear = 2199
)

// bitset holds the values of a field, value v at bit v-min of its field.
type bitset [4]uint64

func (b *bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b *bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

// next returns the smallest bit at or after i, and -1 when there is none.
func (b *bitset) next(i int) int {
	for w := i / 64; w < len(b) && i >= 0; w++ {
		if rest := b[w] >> (i % 64) << (i % 64); rest != 0 {
			return w*64 + bits.TrailingZeros64(rest)
		}
		i = (w + 1) * 64
	}
	return -1
}

// field describes one field of a cron expression.
type field struct {
	name     string
	min, max int
	maxStep  int      // largest increment after /
	names    []string // names of the values from min on, if any
	noWrap   bool     // ranges cannot run past max back to min
}

var (
	minutesField = field{name: "minutes", min: 0, max: 59, maxStep: 59}
	hoursField   = field{name: "hours", min: 0, max: 23, maxStep: 23}
	domField     = field{name: "day-of-month", min: 1, max: 31, maxStep: 31}
	monthField   = field{name: "month", min: 1, max: 12, maxStep: 12,
		names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}}
	dowField = field{name: "day-of-week", min: 1, max: 7,
		names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}}
	yearField = field{name: "year", min: minYear, max: maxYear, maxStep: maxYear - minYear, noWrap: true}
)

// dayKind says how a cron expression picks the days of a month.
type dayKind int

const (
	domValues      dayKind = iota // day-of-month values, ranges and increments
	domLast                       // day-of-month L
	domLastWeekday                // day-of-month LW
	domNearest                    // day-of-month nW: weekday nearest to day n
	dowValues                     // day-of-week values and ranges
	dowLast                       // day-of-week dL: last day d of the month
	dowNth                        // day-of-week d#n: nth day d of the month
)

// cronSpec is a parsed cron expression.
type cronSpec struct {
	minutes, hours, months, years bitset
	days                          dayKind
	values                        bitset // domValues: days of month; dowValues: days of week
	day, nth                      int    // domNearest: the day; dowLast, dowNth: the day of week (1-7) and n
}

// parse parses the inside of cron(...).
func (c *cronSpec) parse(body string) error {
	fields := strings.Fields(body)
	if len(fields) != 6 {
		return fmt.Errorf("cron: %q must have 6 fields (minutes hours day-of-month month day-of-week year), not %d", body, len(fields))
	}
	for _, p := range []struct {
		f   field
		s   string
		set *bitset
	}{
		{minutesField, fields[0], &c.minutes},
		{hoursField, fields[1], &c.hours},
		{monthField, fields[3], &c.months},
		{yearField, fields[5], &c.years},
	} {
		var err error
		if *p.set, err = p.f.parseList(p.s, true); err != nil {
			return err
		}
	}
	dom, dow := fields[2], fields[4]
	switch {
	case dom == "?" && dow == "?":
		return fmt.Errorf("day-of-month and day-of-week: only one of them can be ?")
	case dom != "?" && dow != "?":
		return fmt.Errorf("day-of-month and day-of-week: one of them must be ?, as both cannot be specified (got %q and %q)", dom, dow)
	case dow == "?":
		return c.parseDayOfMonth(dom)
	default:
		return c.parseDayOfWeek(dow)
	}
}

func (c *cronSpec) parseDayOfMonth(s string) error {
	u := strings.ToUpper(s)
	switch {
	case u == "L":
		c.days = domLast
	case u == "LW":
		c.days = domLastWeekday
	case strings.HasSuffix(u, "W"):
		if _, ok := number(u[:len(u)-1]); !ok {
			return fmt.Errorf("day-of-month: %q is not valid; W follows a single day, as in 15W", s)
		}
		n, err := domField.value(u[:len(u)-1])
		if err != nil {
			return err
		}
		c.days, c.day = domNearest, n
	case strings.ContainsAny(u, "LW"):
		return fmt.Errorf("day-of-month: %q is not valid; L, LW and nW (as in 15W) stand alone", s)
	default:
		var err error
		c.days = domValues
		c.values, err = domField.parseList(s, true)
		return err
	}
	return nil
}

func (c *cronSpec) parseDayOfWeek(s string) error {
	u := strings.ToUpper(s)
	if i := strings.IndexByte(u, '#'); i >= 0 {
		if strings.ContainsAny(u, ",-*/") {
			return fmt.Errorf("day-of-week: %q is not valid; d#n (as in 3#2) stands alone", s)
		}
		d, err := dowField.value(u[:i])
		if err != nil {
			return err
		}
		n, ok := number(u[i+1:])
		if !ok || n < 1 || n > 5 {
			return fmt.Errorf("day-of-week: %q after # must be a number 1-5", u[i+1:])
		}
		c.days, c.day, c.nth = dowNth, d, int(n)
		return nil
	}
	switch {
	case u == "L":
		c.days = dowValues
		c.values.set(7 - dowField.min) // the last day of the week, Saturday
	case strings.HasSuffix(u, "L") && !strings.ContainsAny(u, ",-*/"):
		d, err := dowField.value(u[:len(u)-1])
		if err != nil {
			return err
		}
		c.days, c.day = dowLast, d
	case strings.Contains(u, "L"):
		return fmt.Errorf("day-of-week: %q is not valid; L and dL (as in 6L) stand alone", s)
	default:
		var err error
		c.days = dowValues
		c.values, err = dowField.parseList(s, false)
		return err
	}
	return nil
}

// parseList parses a comma-separated list of *, values, ranges and, if
// steps, increments.
func (f field) parseList(s string, steps bool) (bitset, error) {
	var set bitset
	for _, item := range strings.Split(s, ",") {
		if item == "" {
			return set, fmt.Errorf("%s: %q has an empty list entry", f.name, s)
		}
		rng, step := item, 1
		i := strings.IndexByte(item, '/')
		stepped := i >= 0
		if stepped {
			if !steps {
				return set, fmt.Errorf("%s: %q is not valid; / is not allowed in %s", f.name, item, f.name)
			}
			rng = item[:i]
			n, ok := number(item[i+1:])
			if !ok || n < 1 || n > int64(f.maxStep) {
				return set, fmt.Errorf("%s: increment %q in %q must be a number 1-%d", f.name, item[i+1:], item, f.maxStep)
			}
			step = int(n)
		}
		var lo, hi int
		switch i := strings.IndexByte(rng, '-'); {
		case rng == "*":
			lo, hi = f.min, f.max
		case rng == "?":
			return set, fmt.Errorf("%s: ? stands alone, and only in day-of-month or day-of-week", f.name)
		case i >= 0:
			var err error
			if lo, err = f.value(rng[:i]); err != nil {
				return set, err
			}
			if hi, err = f.value(rng[i+1:]); err != nil {
				return set, err
			}
			if hi < lo && f.noWrap {
				return set, fmt.Errorf("%s: range %q runs backwards", f.name, rng)
			}
		default:
			var err error
			if lo, err = f.value(rng); err != nil {
				return set, err
			}
			hi = lo
			if stepped { // a/n runs to the end of the field
				hi = f.max
			}
		}
		// Walk from lo to hi, wrapping past max to min when hi < lo.
		size := f.max - f.min + 1
		count := (hi-lo+size)%size + 1
		for k := 0; k < count; k += step {
			set.set((lo - f.min + k) % size)
		}
	}
	return set, nil
}

// value parses one value of the field: a number or, where the field has
// them, a name.
func (f field) value(s string) (int, error) {
	for i, name := range f.names {
		if strings.EqualFold(s, name) {
			return f.min + i, nil
		}
	}
	n, ok := number(s)
	if !ok {
		if f.names != nil {
			return 0, fmt.Errorf("%s: %q is not a number %d-%d or a name %s-%s", f.name, s, f.min, f.max, f.names[0], f.names[len(f.names)-1])
		}
		return 0, fmt.Errorf("%s: %q is not a number %d-%d", f.name, s, f.min, f.max)
	}
	if n < int64(f.min) || n > int64(f.max) {
		return 0, fmt.Errorf("%s: %d is out of range %d-%d", f.name, n, f.min, f.max)
	}
	return int(n), nil
}

// wall is a wall-clock time to the minute. Its fields may run one past
// their range (minute 60, month 13); next carries them over.
type wall struct {
	year, month, day, hour, minute int
}

// next returns the first wall-clock time at or after w that the expression
// matches, and false when there is none up to the end of year 2199.
func (c *cronSpec) next(w wall) (wall, bool) {
	for w.year <= maxYear {
		y := c.years.next(w.year - minYear)
		if y < 0 {
			return wall{}, false
		}
		if y += minYear; y != w.year {
			w = wall{y, 1, 1, 0, 0}
		}
		m := c.months.next(w.month - monthField.min)
		if m < 0 {
			w = wall{w.year + 1, 1, 1, 0, 0}
			continue
		}
		if m += monthField.min; m != w.month {
			w = wall{w.year, m, 1, 0, 0}
		}
		days := c.daysOf(w.year, w.month)
		d := days.next(w.day)
		if d < 0 {
			w = wall{w.year, w.month + 1, 1, 0, 0}
			continue
		}
		if d != w.day {
			w = wall{w.year, w.month, d, 0, 0}
		}
		h := c.hours.next(w.hour)
		if h < 0 {
			w = wall{w.year, w.month, w.day + 1, 0, 0}
			continue
		}
		if h != w.hour {
			w.hour, w.minute = h, 0
		}
		mi := c.minutes.next(w.minute)
		if mi < 0 {
			w = wall{w.year, w.month, w.day, w.hour + 1, 0}
			continue
		}
		w.minute = mi
		return w, true
	}
	return wall{}, false
}

// daysOf returns the days of the month that the expression matches, day d
// at bit d.
func (c *cronSpec) daysOf(year, month int) bitset {
	var days bitset
	last := daysIn(year, month)
	first := weekday(year, month, 1) // 0 is Sunday
	dow := func(d int) int { return (first + d - 1) % 7 }
	switch c.days {
	case domValues:
		for d := 1; d <= last; d++ {
			if c.values.has(d - domField.min) {
				days.set(d)
			}
		}
	case domLast:
		days.set(last)
	case domLastWeekday:
		days.set(nearestWeekday(last, last, dow(last)))
	case domNearest:
		if c.day <= last {
			days.set(nearestWeekday(c.day, last, dow(c.day)))
		}
	case dowValues:
		for d := 1; d <= last; d++ {
			if c.values.has(dow(d)) {
				days.set(d)
			}
		}
	case dowLast:
		days.set(last - (dow(last)-(c.day-1)+7)%7)
	case dowNth:
		if d := 1 + (c.day-1-first+7)%7 + 7*(c.nth-1); d <= last {
			days.set(d)
		}
	}
	return days
}

// nearestWeekday returns the Monday-to-Friday day nearest to day d (whose
// day of week is wd, 0 for Sunday) without leaving a month of last days.
func nearestWeekday(d, last, wd int) int {
	switch {
	case wd == int(time.Saturday) && d == 1:
		return 3
	case wd == int(time.Saturday):
		return d - 1
	case wd == int(time.Sunday) && d == last:
		return d - 2
	case wd == int(time.Sunday):
		return d + 1
	}
	return d
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func weekday(year, month, day int) int {
	return int(time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC).Weekday())
}
