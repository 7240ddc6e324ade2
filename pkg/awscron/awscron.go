// Package awscron parses and evaluates Amazon EventBridge Scheduler schedule
// expressions, cron(...), rate(...) and at(...), the way EventBridge Scheduler
// documents them, so that a schedule fires at the same instants on AWS and in
// the local scheduler.
//
// # Cron expressions
//
// cron(minutes hours day-of-month month day-of-week year) has six fields
// separated by white space, the year included:
//
//	field         values           wildcards
//	minutes       0-59             , - * /
//	hours         0-23             , - * /
//	day-of-month  1-31             , - * ? / L W
//	month         1-12 or JAN-DEC  , - * /
//	day-of-week   1-7 or SUN-SAT   , - * ? L #
//	year          1970-2199        , - * /
//
// A field is a comma-separated list of values, ranges a-b and increments
// a/n, a-b/n or */n (a, a+n, a+2n, ... up to b or the end of the field). A
// range whose end is below its start wraps around, so hours 20-2 are 20, 21,
// 22, 23, 0, 1 and 2; year ranges cannot wrap. Names of months and days are
// case-insensitive.
//
// Day-of-month and day-of-week cannot both be given: exactly one of them is
// ?. In day-of-month, L is the last day of the month, LW its last weekday
// (Monday to Friday) and nW the weekday nearest to day n within the same
// month: 1W on a Saturday is Monday the 3rd, 31W on a Sunday is Friday the
// 29th, and a day the month does not have (30W in February) never matches.
// In day-of-week, 1 is Sunday and 7 Saturday; L alone is the last day of the
// week, Saturday; dL (6L or FRIL) is the last day d of the month, and d#n
// (3#2) the nth (1-5) day d of the month, which some months lack. L, LW, nW,
// dL and d#n stand alone in their field.
//
// # Rate expressions
//
// rate(value unit) fires every value units, where value is a positive whole
// number and unit is minute, hour or day when value is 1, and minutes, hours
// or days otherwise. A day is 24 hours, also across a daylight saving time
// change. A rate schedule fires at its start and then once every rate; set
// the start, EventBridge Scheduler's StartDate, with [WithStart]. Without a
// StartDate, EventBridge Scheduler fires first when the schedule is created,
// so cardflow's local scheduler anchors such a schedule at its creation time:
// WithStart(created).
//
// # One-time expressions
//
// at(yyyy-mm-ddThh:mm:ss) fires once, at that wall-clock time in the
// schedule's time zone. EventBridge Scheduler ignores StartDate for one-time
// schedules, and so does this package.
//
// # Time zones and daylight saving time
//
// Cron and one-time expressions are evaluated in the schedule's IANA time
// zone (ScheduleExpressionTimezone, UTC when empty); rate expressions measure
// plain elapsed time. When the clocks go forward, a cron time that falls into
// the skipped hour does not fire that day: cron(30 2 * * ? *) in
// America/New_York does not fire on 8 March 2026. When the clocks go back,
// a cron time that the clock reads twice fires once, at the first of the two
// instants: cron(30 1 * * ? *) in America/New_York fires on 1 November 2026
// at 01:30 EDT and not again at 01:30 EST. Cron fields match wall-clock
// times, so cron(0/15 * * * ? *) also leaves out the repeated hour. These
// are the rules of "Daylight savings time on EventBridge Scheduler" in the
// EventBridge Scheduler User Guide (Schedule types). The guide says nothing
// about a one-time schedule whose time the clocks skip; Parse rejects such an
// at(...) expression rather than pick an instant AWS may not.
package awscron

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones also where the system has no zoneinfo, as on Lambda's provided runtimes
)

// Kind is the type of a schedule expression.
type Kind int

// The kinds of schedule expressions.
const (
	Cron Kind = iota + 1 // cron(...)
	Rate                 // rate(...)
	At                   // at(...), a one-time schedule
)

// String returns "cron", "rate" or "at".
func (k Kind) String() string {
	switch k {
	case Cron:
		return "cron"
	case Rate:
		return "rate"
	case At:
		return "at"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Schedule is a parsed schedule expression with its time zone. It is
// immutable and safe for concurrent use.
type Schedule struct {
	expr  string
	kind  Kind
	loc   *time.Location
	start time.Time // from WithStart; zero when not given

	cron  cronSpec      // Cron
	every time.Duration // Rate
	at    time.Time     // At
}

// Option configures a Schedule in Parse.
type Option func(*Schedule)

// WithStart sets the schedule's start, EventBridge Scheduler's StartDate. A
// rate schedule fires at start and then once every rate; a cron schedule
// does not fire before start; a one-time schedule ignores it. Without a
// start, a rate schedule takes the t given to Next as its last invocation
// and returns t plus the rate.
func WithStart(start time.Time) Option {
	return func(s *Schedule) { s.start = start }
}

// Parse parses a schedule expression, "cron(...)", "rate(...)" or "at(...)",
// as EventBridge Scheduler accepts it, with the IANA time zone in which
// cron and at expressions are evaluated ("" means UTC). Errors name the
// part of the expression at fault, as in "day-of-week: 8 is out of range
// 1-7".
func Parse(expr, timezone string, opts ...Option) (*Schedule, error) {
	loc, err := location(timezone)
	if err != nil {
		return nil, err
	}
	s := &Schedule{expr: expr, loc: loc}
	for _, opt := range opts {
		opt(s)
	}
	open := strings.IndexByte(expr, '(')
	if open < 0 || !strings.HasSuffix(expr, ")") {
		return nil, fmt.Errorf("schedule expression %q must be cron(...), rate(...) or at(...)", expr)
	}
	body := expr[open+1 : len(expr)-1]
	switch expr[:open] {
	case "cron":
		s.kind = Cron
		err = s.cron.parse(body)
	case "rate":
		s.kind = Rate
		s.every, err = parseRate(body)
	case "at":
		s.kind = At
		s.at, err = parseAt(body, loc)
	default:
		return nil, fmt.Errorf("schedule expression %q must be cron(...), rate(...) or at(...)", expr)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// location loads an IANA time zone; "" is UTC.
func location(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	// LoadLocation reads "Local" as the machine's zone, which AWS knows nothing of.
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, fmt.Errorf("time zone: %q is not an IANA time zone", name)
	}
	return loc, nil
}

// Kind returns the type of the expression.
func (s *Schedule) Kind() Kind { return s.kind }

// String returns the expression as given to Parse.
func (s *Schedule) String() string { return s.expr }

// Next returns the first time the schedule fires strictly after t, in the
// schedule's time zone, and false when it fires no more: a one-time schedule
// whose time has passed, or a cron schedule whose years have ended. Times are
// exact; EventBridge Scheduler invokes the target within the minute that
// follows.
func (s *Schedule) Next(t time.Time) (time.Time, bool) {
	switch s.kind {
	case At:
		if s.at.After(t) {
			return s.at, true
		}
	case Rate:
		return s.nextRate(t).In(s.loc), true
	case Cron:
		if t.Before(s.start) {
			t = s.start.Add(-time.Nanosecond)
		}
		return s.nextCron(t)
	}
	return time.Time{}, false
}

// NextN returns up to n successive fire times after t.
func (s *Schedule) NextN(t time.Time, n int) []time.Time {
	var times []time.Time
	for len(times) < n {
		next, ok := s.Next(t)
		if !ok {
			break
		}
		times = append(times, next)
		t = next
	}
	return times
}

// nextRate returns the first of start, start+every, start+2*every, ... after
// t. Without a start it takes t as the last invocation, as EventBridge
// Scheduler evaluates a rate from the schedule's last invocation.
func (s *Schedule) nextRate(t time.Time) time.Time {
	if s.start.IsZero() {
		return t.Add(s.every)
	}
	if t.Before(s.start) {
		return s.start
	}
	// In whole seconds, since t.Sub saturates beyond 292 years; every is a whole number of minutes.
	period := int64(s.every / time.Second)
	elapsed := t.Unix() - s.start.Unix()
	next := time.Unix(s.start.Unix()+elapsed/period*period, int64(s.start.Nanosecond()))
	for !next.After(t) {
		next = next.Add(s.every)
	}
	return next
}

// nextCron returns the first wall-clock time after t that the expression
// matches and that exists in the time zone, at the first instant the clock
// reads it: times skipped by the clocks going forward do not fire, times
// repeated by the clocks going back fire once.
func (s *Schedule) nextCron(t time.Time) (time.Time, bool) {
	lt := t.In(s.loc)
	w := wall{lt.Year(), int(lt.Month()), lt.Day(), lt.Hour(), lt.Minute() + 1}
	if w.year < minYear {
		w = wall{minYear, 1, 1, 0, 0}
	}
	for {
		var ok bool
		if w, ok = s.cron.next(w); !ok {
			return time.Time{}, false
		}
		if at, ok := firstInstant(s.loc, w, 0); ok && at.After(t) {
			return at, true
		}
		w.minute++
	}
}

// maxOffset bounds the UTC offsets of every zone, past and present.
const maxOffset = 16 * time.Hour

// firstInstant returns the first instant at which the clock in loc reads the
// wall-clock time w at second sec, and false when it never does because the
// clocks skip it.
//
// Such an instant is utc-o, where utc is the wall-clock time read as UTC and
// o is the offset in effect at utc-o, so it lies within maxOffset of utc. The
// offsets in effect at both ends and the middle of that window are all the
// window has, unless the zone changed its offset twice within one half of it.
// (Time.ZoneBounds would list the periods exactly, but it can report an end
// before the instant in leap years past a zone's last listed transition,
// golang/go#81583.)
func firstInstant(loc *time.Location, w wall, sec int) (time.Time, bool) {
	utc := time.Date(w.year, time.Month(w.month), w.day, w.hour, w.minute, sec, 0, time.UTC)
	var first time.Time
	found := false
	for _, probe := range [...]time.Duration{-maxOffset, 0, maxOffset} {
		_, offset := utc.Add(probe).In(loc).Zone()
		at := utc.Add(-time.Duration(offset) * time.Second)
		if _, actual := at.In(loc).Zone(); actual == offset && (!found || at.Before(first)) {
			first, found = at, true
		}
	}
	return first.In(loc), found
}
