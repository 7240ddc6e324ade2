package awscron

import (
	"strings"
	"testing"
	"time"
)

// The expected fire times below were worked out by hand from a calendar
// (zdump for the daylight saving time changes), not by running this code.

// date parses an RFC 3339 time of a test table.
func date(t *testing.T, s string) time.Time {
	t.Helper()
	d, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return d
}

func mustParse(t *testing.T, expr, zone string, opts ...Option) *Schedule {
	t.Helper()
	s, err := Parse(expr, zone, opts...)
	if err != nil {
		t.Fatalf("Parse(%q, %q): %v", expr, zone, err)
	}
	return s
}

// format renders fire times as RFC 3339 with their offset, so a table
// checks both the instant and the zone Next returns it in.
func format(times []time.Time) string {
	s := make([]string, len(times))
	for i, t := range times {
		s[i] = t.Format(time.RFC3339)
	}
	return strings.Join(s, " ")
}

type nextCase struct {
	name, expr, zone string
	start            string // WithStart, if not ""
	from             string
	want             []string // every fire time after from, up to 3 (fewer means the schedule ends)
}

func runNext(t *testing.T, tests []nextCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []Option
			if tc.start != "" {
				opts = append(opts, WithStart(date(t, tc.start)))
			}
			s := mustParse(t, tc.expr, tc.zone, opts...)
			got := format(s.NextN(date(t, tc.from), 3))
			if want := strings.Join(tc.want, " "); got != want {
				t.Errorf("%s in %q after %s:\n got  %s\n want %s", tc.expr, tc.zone, tc.from, got, want)
			}
		})
	}
}

// TestAWSExamples runs every example of the cron and rate tables in the
// EventBridge and EventBridge Scheduler user guides. 2026-03-06 is a Friday.
func TestAWSExamples(t *testing.T) {
	t.Parallel()
	const friday = "2026-03-06T17:50:00Z"
	runNext(t, []nextCase{
		{name: "10:00 every day", expr: "cron(0 10 * * ? *)", from: friday,
			want: []string{"2026-03-07T10:00:00Z", "2026-03-08T10:00:00Z", "2026-03-09T10:00:00Z"}},
		{name: "12:15 every day", expr: "cron(15 12 * * ? *)", from: friday,
			want: []string{"2026-03-07T12:15:00Z", "2026-03-08T12:15:00Z", "2026-03-09T12:15:00Z"}},
		{name: "18:00 Monday to Friday", expr: "cron(0 18 ? * MON-FRI *)", from: friday,
			want: []string{"2026-03-06T18:00:00Z", "2026-03-09T18:00:00Z", "2026-03-10T18:00:00Z"}},
		{name: "8:00 on the 1st", expr: "cron(0 8 1 * ? *)", from: friday,
			want: []string{"2026-04-01T08:00:00Z", "2026-05-01T08:00:00Z", "2026-06-01T08:00:00Z"}},
		{name: "every 15 minutes", expr: "cron(0/15 * * * ? *)", from: friday,
			want: []string{"2026-03-06T18:00:00Z", "2026-03-06T18:15:00Z", "2026-03-06T18:30:00Z"}},
		{name: "every 10 minutes on weekdays", expr: "cron(0/10 * ? * MON-FRI *)", from: "2026-03-06T23:45:00Z",
			want: []string{"2026-03-06T23:50:00Z", "2026-03-09T00:00:00Z", "2026-03-09T00:10:00Z"}},
		{name: "every 5 minutes 8:00-17:55 on weekdays", expr: "cron(0/5 8-17 ? * MON-FRI *)", from: friday,
			want: []string{"2026-03-06T17:55:00Z", "2026-03-09T08:00:00Z", "2026-03-09T08:05:00Z"}},
		{name: "every 30 minutes 20:00-2:00 on weekdays", expr: "cron(0/30 20-2 ? * MON-FRI *)", from: friday,
			want: []string{"2026-03-06T20:00:00Z", "2026-03-06T20:30:00Z", "2026-03-06T21:00:00Z"}},
		// The hours match on the weekdays themselves: not Saturday 0:00-2:30, but Monday's.
		{name: "20-2 wraps within each weekday", expr: "cron(0/30 20-2 ? * MON-FRI *)", from: "2026-03-06T23:45:00Z",
			want: []string{"2026-03-09T00:00:00Z", "2026-03-09T00:30:00Z", "2026-03-09T01:00:00Z"}},
		{name: "20-2 includes 2:30", expr: "cron(0/30 20-2 ? * MON-FRI *)", from: "2026-03-10T01:45:00Z",
			want: []string{"2026-03-10T02:00:00Z", "2026-03-10T02:30:00Z", "2026-03-10T20:00:00Z"}},
		// March 2026 starts on a Sunday: its first Monday is the 2nd.
		{name: "9:00 on the first Monday", expr: "cron(0 9 ? * 2#1 *)", from: friday,
			want: []string{"2026-04-06T09:00:00Z", "2026-05-04T09:00:00Z", "2026-06-01T09:00:00Z"}},
		{name: "12:00 every day", expr: "cron(0 12 * * ? *)", from: friday,
			want: []string{"2026-03-07T12:00:00Z", "2026-03-08T12:00:00Z", "2026-03-09T12:00:00Z"}},
		{name: "14:05 and 14:35", expr: "cron(5,35 14 * * ? *)", from: friday,
			want: []string{"2026-03-07T14:05:00Z", "2026-03-07T14:35:00Z", "2026-03-08T14:05:00Z"}},
		{name: "last Friday 2022-2023", expr: "cron(15 10 ? * 6L 2022-2023)", from: "2023-10-01T00:00:00Z",
			want: []string{"2023-10-27T10:15:00Z", "2023-11-24T10:15:00Z", "2023-12-29T10:15:00Z"}},
		{name: "last Friday 2022-2023, ended", expr: "cron(15 10 ? * 6L 2022-2023)", from: "2023-12-29T10:15:00Z"},
		{name: "last Friday 2019-2022, ended", expr: "cron(15 10 ? * 6L 2019-2022)", from: friday},
		{name: "8:30 in New York", expr: "cron(30 8 * * ? *)", zone: "America/New_York", from: friday,
			want: []string{"2026-03-07T08:30:00-05:00", "2026-03-08T08:30:00-04:00", "2026-03-09T08:30:00-04:00"}},

		{name: "rate 1 minute", expr: "rate(1 minute)", start: "2026-03-06T17:52:30Z", from: friday,
			want: []string{"2026-03-06T17:52:30Z", "2026-03-06T17:53:30Z", "2026-03-06T17:54:30Z"}},
		{name: "rate 5 minutes", expr: "rate(5 minutes)", start: "2026-03-06T17:52:30Z", from: friday,
			want: []string{"2026-03-06T17:52:30Z", "2026-03-06T17:57:30Z", "2026-03-06T18:02:30Z"}},
		{name: "rate 1 hour", expr: "rate(1 hour)", start: "2026-03-06T17:52:30Z", from: "2026-03-06T18:54:30Z",
			want: []string{"2026-03-06T19:52:30Z", "2026-03-06T20:52:30Z", "2026-03-06T21:52:30Z"}},
		{name: "rate 12 hours, from a fire time", expr: "rate(12 hours)", start: "2026-03-06T17:52:30Z", from: "2026-03-07T05:52:30Z",
			want: []string{"2026-03-07T17:52:30Z", "2026-03-08T05:52:30Z", "2026-03-08T17:52:30Z"}},
		{name: "rate 1 day", expr: "rate(1 day)", start: "2026-03-06T17:52:30Z", from: "2026-03-06T17:52:29Z",
			want: []string{"2026-03-06T17:52:30Z", "2026-03-07T17:52:30Z", "2026-03-08T17:52:30Z"}},
		{name: "rate 7 days", expr: "rate(7 days)", start: "2026-03-06T17:52:30Z", from: "2026-03-20T17:52:30Z",
			want: []string{"2026-03-27T17:52:30Z", "2026-04-03T17:52:30Z", "2026-04-10T17:52:30Z"}},
		{name: "rate without a start", expr: "rate(5 minutes)", from: friday,
			want: []string{"2026-03-06T17:55:00Z", "2026-03-06T18:00:00Z", "2026-03-06T18:05:00Z"}},

		{name: "one-time in Los Angeles", expr: "at(2022-11-20T13:00:00)", zone: "America/Los_Angeles", from: "2022-11-01T00:00:00Z",
			want: []string{"2022-11-20T13:00:00-08:00"}},
		{name: "one-time, passed", expr: "at(2022-11-20T13:00:00)", zone: "America/Los_Angeles", from: "2022-11-20T21:00:00Z"},
	})
}

// TestDaylightSavingTime follows "Daylight savings time on EventBridge
// Scheduler": a time the clocks skip does not fire that day, a time they
// repeat fires once, at its first instant. Europe/Berlin goes from 02:00 CET
// to 03:00 CEST on 2026-03-29 and from 03:00 CEST back to 02:00 CET on
// 2026-10-25; America/New_York from 02:00 EST to 03:00 EDT on 2026-03-08 and
// from 02:00 EDT back to 01:00 EST on 2026-11-01.
func TestDaylightSavingTime(t *testing.T) {
	t.Parallel()
	runNext(t, []nextCase{
		{name: "Berlin spring, skipped", expr: "cron(30 2 * * ? *)", zone: "Europe/Berlin", from: "2026-03-28T00:00:00Z",
			want: []string{"2026-03-28T02:30:00+01:00", "2026-03-30T02:30:00+02:00", "2026-03-31T02:30:00+02:00"}},
		{name: "Berlin spring, 3:00 exists", expr: "cron(0 3 * * ? *)", zone: "Europe/Berlin", from: "2026-03-28T12:00:00Z",
			want: []string{"2026-03-29T03:00:00+02:00", "2026-03-30T03:00:00+02:00", "2026-03-31T03:00:00+02:00"}},
		{name: "Berlin spring, Sundays at 2:00", expr: "cron(0 2 ? * SUN *)", zone: "Europe/Berlin", from: "2026-03-21T00:00:00Z",
			want: []string{"2026-03-22T02:00:00+01:00", "2026-04-05T02:00:00+02:00", "2026-04-12T02:00:00+02:00"}},
		{name: "Berlin fall, once", expr: "cron(30 2 * * ? *)", zone: "Europe/Berlin", from: "2026-10-24T00:00:00Z",
			want: []string{"2026-10-24T02:30:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{name: "Berlin fall, Sundays at 2:00", expr: "cron(0 2 ? * SUN *)", zone: "Europe/Berlin", from: "2026-10-20T00:00:00Z",
			want: []string{"2026-10-25T02:00:00+02:00", "2026-11-01T02:00:00+01:00", "2026-11-08T02:00:00+01:00"}},
		{name: "Berlin fall, hourly", expr: "cron(0 * * * ? *)", zone: "Europe/Berlin", from: "2026-10-24T23:30:00Z",
			want: []string{"2026-10-25T02:00:00+02:00", "2026-10-25T03:00:00+01:00", "2026-10-25T04:00:00+01:00"}},
		{name: "Berlin fall, from the repeated hour", expr: "cron(30 2 * * ? *)", zone: "Europe/Berlin", from: "2026-10-25T01:10:00Z",
			want: []string{"2026-10-26T02:30:00+01:00", "2026-10-27T02:30:00+01:00", "2026-10-28T02:30:00+01:00"}},

		{name: "New York spring, skipped", expr: "cron(30 2 * * ? *)", zone: "America/New_York", from: "2026-03-07T00:00:00Z",
			want: []string{"2026-03-07T02:30:00-05:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"}},
		{name: "New York spring, every 15 minutes", expr: "cron(0/15 * * * ? *)", zone: "America/New_York", from: "2026-03-08T06:40:00Z",
			want: []string{"2026-03-08T01:45:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:15:00-04:00"}},
		{name: "New York fall, once", expr: "cron(30 1 * * ? *)", zone: "America/New_York", from: "2026-10-31T00:00:00Z",
			want: []string{"2026-10-31T01:30:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		// 06:00Z is 01:00 EST, the second time the clock reads 1:00.
		{name: "New York fall, from the repeated hour", expr: "cron(30 1 * * ? *)", zone: "America/New_York", from: "2026-11-01T06:00:00Z",
			want: []string{"2026-11-02T01:30:00-05:00", "2026-11-03T01:30:00-05:00", "2026-11-04T01:30:00-05:00"}},
		{name: "New York fall, every 15 minutes", expr: "cron(0/15 * * * ? *)", zone: "America/New_York", from: "2026-11-01T05:40:00Z",
			want: []string{"2026-11-01T01:45:00-04:00", "2026-11-01T02:00:00-05:00", "2026-11-01T02:15:00-05:00"}},

		{name: "Los Angeles spring, the guide's example", expr: "cron(30 2 * * ? *)", zone: "America/Los_Angeles", from: "2026-03-07T12:00:00Z",
			want: []string{"2026-03-09T02:30:00-07:00", "2026-03-10T02:30:00-07:00", "2026-03-11T02:30:00-07:00"}},
		{name: "UTC has no daylight saving time", expr: "cron(30 2 * * ? *)", from: "2026-03-28T12:00:00Z",
			want: []string{"2026-03-29T02:30:00Z", "2026-03-30T02:30:00Z", "2026-03-31T02:30:00Z"}},
		// Past the zones' listed transitions, through the end of a leap year (golang/go#81583).
		{name: "New York, 2056 into 2057", expr: "cron(0 9 ? * 2#1 *)", zone: "America/New_York", from: "2056-11-10T00:00:00Z",
			want: []string{"2056-12-04T09:00:00-05:00", "2057-01-01T09:00:00-05:00", "2057-02-05T09:00:00-05:00"}},
		{name: "Warsaw, December 31 of 2040", expr: "cron(0 12 31 12 ? *)", zone: "Europe/Warsaw", from: "2040-12-30T00:00:00Z",
			want: []string{"2040-12-31T12:00:00+01:00", "2041-12-31T12:00:00+01:00", "2042-12-31T12:00:00+01:00"}},
		{name: "Tokyo has no daylight saving time", expr: "cron(0 9 * * ? *)", zone: "Asia/Tokyo", from: "2026-03-28T12:00:00Z",
			want: []string{"2026-03-29T09:00:00+09:00", "2026-03-30T09:00:00+09:00", "2026-03-31T09:00:00+09:00"}},

		// A day of a rate is 24 hours, so the wall-clock time moves by an hour.
		{name: "rate 1 day across Berlin spring", expr: "rate(1 day)", zone: "Europe/Berlin", start: "2026-03-28T08:00:00Z", from: "2026-03-28T00:00:00Z",
			want: []string{"2026-03-28T09:00:00+01:00", "2026-03-29T10:00:00+02:00", "2026-03-30T10:00:00+02:00"}},
		{name: "rate 1 hour across Berlin fall", expr: "rate(1 hour)", zone: "Europe/Berlin", start: "2026-10-25T00:00:00Z", from: "2026-10-24T23:00:00Z",
			want: []string{"2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00", "2026-10-25T03:00:00+01:00"}},

		{name: "one-time in the repeated hour", expr: "at(2026-10-25T02:30:00)", zone: "Europe/Berlin", from: "2026-10-24T00:00:00Z",
			want: []string{"2026-10-25T02:30:00+02:00"}},
		{name: "one-time in New York's repeated hour", expr: "at(2026-11-01T01:30:00)", zone: "America/New_York", from: "2026-10-24T00:00:00Z",
			want: []string{"2026-11-01T01:30:00-04:00"}},
	})
}

// TestDays covers the day fields: L, W, #, leap years and wrapping ranges.
// 2026-01-01 is a Thursday; 2028 is a leap year, 2100 is not.
func TestDays(t *testing.T) {
	t.Parallel()
	runNext(t, []nextCase{
		{name: "February 29", expr: "cron(0 0 29 2 ? *)", from: "2026-01-01T00:00:00Z",
			want: []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z"}},
		{name: "February 29 skips 2100", expr: "cron(0 0 29 2 ? 2096-2104)", from: "2097-01-01T00:00:00Z",
			want: []string{"2104-02-29T00:00:00Z"}},
		{name: "L in February", expr: "cron(0 0 L 2 ? *)", from: "2027-03-01T00:00:00Z",
			want: []string{"2028-02-29T00:00:00Z", "2029-02-28T00:00:00Z", "2030-02-28T00:00:00Z"}},
		{name: "L every month", expr: "cron(0 0 L * ? *)", from: "2026-01-15T00:00:00Z",
			want: []string{"2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z"}},
		// 2026-01-31 and 2026-02-28 are Saturdays, 2026-05-31 a Sunday.
		{name: "LW", expr: "cron(0 0 LW * ? *)", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-31T00:00:00Z"}},
		{name: "LW on a Sunday", expr: "cron(0 0 LW 5 ? *)", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-05-29T00:00:00Z", "2027-05-31T00:00:00Z", "2028-05-31T00:00:00Z"}},
		// 2026-08-01 is a Saturday: 1W is Monday the 3rd, not Friday 31 July.
		{name: "1W on a Saturday", expr: "cron(0 0 1W * ? *)", from: "2026-07-15T00:00:00Z",
			want: []string{"2026-08-03T00:00:00Z", "2026-09-01T00:00:00Z", "2026-10-01T00:00:00Z"}},
		// 2026-11-01 is a Sunday.
		{name: "1W on a Sunday", expr: "cron(0 0 1W 11 ? 2026)", from: "2026-07-15T00:00:00Z",
			want: []string{"2026-11-02T00:00:00Z"}},
		// 2026-05-31 is a Sunday: 31W is Friday the 29th; April and June have no 31st.
		{name: "31W", expr: "cron(0 0 31W * ? *)", from: "2026-04-01T00:00:00Z",
			want: []string{"2026-05-29T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z"}},
		{name: "15W on a Saturday", expr: "cron(0 0 15W 8 ? *)", from: "2026-08-01T00:00:00Z",
			want: []string{"2026-08-14T00:00:00Z", "2027-08-16T00:00:00Z", "2028-08-15T00:00:00Z"}},
		{name: "15W on a Sunday", expr: "cron(0 0 15W 3 ? 2026)", from: "2026-03-01T00:00:00Z",
			want: []string{"2026-03-16T00:00:00Z"}},
		{name: "30W never in February", expr: "cron(0 0 30W 2 ? *)", from: "2026-01-01T00:00:00Z"},
		{name: "day-of-month increments", expr: "cron(0 0 1/10 * ? *)", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-11T00:00:00Z", "2026-01-21T00:00:00Z", "2026-01-31T00:00:00Z"}},
		{name: "L in day-of-week is Saturday", expr: "cron(0 0 ? * L *)", from: "2026-03-04T00:00:00Z",
			want: []string{"2026-03-07T00:00:00Z", "2026-03-14T00:00:00Z", "2026-03-21T00:00:00Z"}},
		{name: "FRIL", expr: "cron(0 0 ? * FRIL *)", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-27T00:00:00Z"}},
		{name: "1L, the last Sunday", expr: "cron(0 1 ? * 1L *)", from: "2026-03-01T00:00:00Z",
			want: []string{"2026-03-29T01:00:00Z", "2026-04-26T01:00:00Z", "2026-05-31T01:00:00Z"}},
		{name: "fifth Monday", expr: "cron(0 0 ? * 2#5 *)", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-03-30T00:00:00Z", "2026-06-29T00:00:00Z", "2026-08-31T00:00:00Z"}},
		{name: "second Tuesday by name", expr: "cron(0 0 ? * tue#2 *)", from: "2026-01-01T00:00:00Z",
			want: []string{"2026-01-13T00:00:00Z", "2026-02-10T00:00:00Z", "2026-03-10T00:00:00Z"}},
		{name: "FRI-MON wraps", expr: "cron(0 0 ? * FRI-MON *)", from: "2026-03-04T00:00:00Z",
			want: []string{"2026-03-06T00:00:00Z", "2026-03-07T00:00:00Z", "2026-03-08T00:00:00Z"}},
		{name: "NOV-FEB wraps", expr: "cron(0 0 1 NOV-FEB ? *)", from: "2026-03-01T12:00:00Z",
			want: []string{"2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"}},
		{name: "wrapping range with increment", expr: "cron(0 22-3/2 * * ? *)", from: "2026-03-01T12:00:00Z",
			want: []string{"2026-03-01T22:00:00Z", "2026-03-02T00:00:00Z", "2026-03-02T02:00:00Z"}},
		{name: "lower-case names", expr: "cron(0 18 ? jan,mar mon-fri *)", from: "2026-03-06T18:00:00Z",
			want: []string{"2026-03-09T18:00:00Z", "2026-03-10T18:00:00Z", "2026-03-11T18:00:00Z"}},
		{name: "*/20", expr: "cron(*/20 9 * * ? *)", from: "2026-03-06T09:00:00Z",
			want: []string{"2026-03-06T09:20:00Z", "2026-03-06T09:40:00Z", "2026-03-07T09:00:00Z"}},
		{name: "a/1 runs to the end", expr: "cron(57/1 9 * * ? *)", from: "2026-03-06T09:00:00Z",
			want: []string{"2026-03-06T09:57:00Z", "2026-03-06T09:58:00Z", "2026-03-06T09:59:00Z"}},
	})
}

// TestYears covers the year field's range, 1970-2199.
func TestYears(t *testing.T) {
	t.Parallel()
	runNext(t, []nextCase{
		{name: "years ending", expr: "cron(0 0 1 1 ? 2026-2027)", from: "2026-06-01T00:00:00Z",
			want: []string{"2027-01-01T00:00:00Z"}},
		{name: "year increments", expr: "cron(0 0 1 1 ? 2030/5)", from: "2026-06-01T00:00:00Z",
			want: []string{"2030-01-01T00:00:00Z", "2035-01-01T00:00:00Z", "2040-01-01T00:00:00Z"}},
		{name: "last fire of 2199", expr: "cron(0 0 31 12 ? *)", from: "2199-12-30T00:00:00Z",
			want: []string{"2199-12-31T00:00:00Z"}},
		{name: "after 2199", expr: "cron(0 0 * * ? *)", from: "2200-01-01T00:00:00Z"},
		{name: "before 1970", expr: "cron(0 0 1 1 ? *)", from: "1900-06-01T00:00:00Z",
			want: []string{"1970-01-01T00:00:00Z", "1971-01-01T00:00:00Z", "1972-01-01T00:00:00Z"}},
	})
}

// TestStart covers WithStart, EventBridge Scheduler's StartDate.
func TestStart(t *testing.T) {
	t.Parallel()
	runNext(t, []nextCase{
		{name: "cron fires on the start", expr: "cron(0 10 * * ? *)", start: "2026-03-10T10:00:00Z", from: "2026-03-06T00:00:00Z",
			want: []string{"2026-03-10T10:00:00Z", "2026-03-11T10:00:00Z", "2026-03-12T10:00:00Z"}},
		{name: "cron after the start", expr: "cron(0 10 * * ? *)", start: "2026-03-10T10:00:01Z", from: "2026-03-06T00:00:00Z",
			want: []string{"2026-03-11T10:00:00Z", "2026-03-12T10:00:00Z", "2026-03-13T10:00:00Z"}},
		{name: "one-time ignores it", expr: "at(2026-03-06T10:00:00)", start: "2026-04-01T00:00:00Z", from: "2026-03-01T00:00:00Z",
			want: []string{"2026-03-06T10:00:00Z"}},
		{name: "rate far from its start", expr: "rate(1 minute)", start: "1700-01-01T00:00:00.5Z", from: "2300-01-01T00:00:00Z",
			want: []string{"2300-01-01T00:00:00Z", "2300-01-01T00:01:00Z", "2300-01-01T00:02:00Z"}},
	})
	// The last case lost its half second to RFC 3339 without fractions; check it.
	s := mustParse(t, "rate(1 minute)", "", WithStart(date(t, "1700-01-01T00:00:00.5Z")))
	got, _ := s.Next(date(t, "2300-01-01T00:00:00Z"))
	if want := date(t, "2300-01-01T00:00:00.5Z"); !got.Equal(want) {
		t.Errorf("rate far from its start: got %s, want %s", got, want)
	}
}

func TestValid(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		// Accepted by EventBridge (localstack/localstack#13572).
		"cron(0-15/1 8-8 ? * 2,3,4,5,6,7 *)",
		"cron(30-30 13-13 ? * 2,4,6 *)",
		"cron(1-31/30 1-1 ? * 1,7 *)",
		"cron(0 0 1 1 ? 1970)",
		"cron(0 0 1 1 ? 2199)",
		"cron(59 23 31 DEC ? *)",
		"cron(0 0 ? * 7#5 *)",
		"cron(0 0 ? * SAT *)",
		"cron(0  0 ? * SUN *)",
		"rate(1 minute)",
		"rate(106751 days)",
		"at(2026-02-28T23:59:59)",
		"at(2028-02-29T00:00:00)",
	} {
		if _, err := Parse(expr, ""); err != nil {
			t.Errorf("Parse(%q): got %v, want no error", expr, err)
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, zone, want string }{
		{"cron(0 10 ? * 8 *)", "", "day-of-week: 8 is out of range 1-7"},
		{"cron(0 10 ? * 0 *)", "", "day-of-week: 0 is out of range 1-7"},
		{"cron(60 10 * * ? *)", "", "minutes: 60 is out of range 0-59"},
		{"cron(0 24 * * ? *)", "", "hours: 24 is out of range 0-23"},
		{"cron(0 10 32 * ? *)", "", "day-of-month: 32 is out of range 1-31"},
		{"cron(0 10 0 * ? *)", "", "day-of-month: 0 is out of range 1-31"},
		{"cron(0 10 * 13 ? *)", "", "month: 13 is out of range 1-12"},
		{"cron(0 10 * * ? 1969)", "", "year: 1969 is out of range 1970-2199"},
		{"cron(0 10 * * ? 2200)", "", "year: 2200 is out of range 1970-2199"},
		{"cron(0 10 * * ? 2030-2020)", "", `year: range "2030-2020" runs backwards`},
		{"cron(0 10 * * ?)", "", `cron: "0 10 * * ?" must have 6 fields (minutes hours day-of-month month day-of-week year), not 5`},
		{"cron(0 0 10 * * ? *)", "", `cron: "0 0 10 * * ? *" must have 6 fields (minutes hours day-of-month month day-of-week year), not 7`},
		{"cron(0 10 * * * *)", "", `day-of-month and day-of-week: one of them must be ?, as both cannot be specified (got "*" and "*")`},
		{"cron(0 10 1 * MON *)", "", `day-of-month and day-of-week: one of them must be ?, as both cannot be specified (got "1" and "MON")`},
		{"cron(0 10 ? * ? *)", "", "day-of-month and day-of-week: only one of them can be ?"},
		{"cron(0/5 9-22 * 1-4,11,12 1-7 ?)", "", "year: ? stands alone, and only in day-of-month or day-of-week"},
		{"cron(? 10 * * ? *)", "", "minutes: ? stands alone, and only in day-of-month or day-of-week"},
		{"cron(0 10 1,? * ? *)", "", "day-of-month: ? stands alone, and only in day-of-month or day-of-week"},
		{"cron(0 10 ? * 3#1,6#3 *)", "", `day-of-week: "3#1,6#3" is not valid; d#n (as in 3#2) stands alone`},
		{"cron(0 10 ? * 3#6 *)", "", `day-of-week: "6" after # must be a number 1-5`},
		{"cron(0 10 ? * 3#0 *)", "", `day-of-week: "0" after # must be a number 1-5`},
		{"cron(0 10 ? * 8#1 *)", "", "day-of-week: 8 is out of range 1-7"},
		{"cron(0 10 ? * 8L *)", "", "day-of-week: 8 is out of range 1-7"},
		{"cron(0 10 ? * 2,6L *)", "", `day-of-week: "2,6L" is not valid; L and dL (as in 6L) stand alone`},
		{"cron(0 10 ? * MON/2 *)", "", `day-of-week: "MON/2" is not valid; / is not allowed in day-of-week`},
		{"cron(0 10 ? * MUN *)", "", `day-of-week: "MUN" is not a number 1-7 or a name SUN-SAT`},
		{"cron(0 10 ? JANUARY MON *)", "", `month: "JANUARY" is not a number 1-12 or a name JAN-DEC`},
		{"cron(0 10 L-3 * ? *)", "", `day-of-month: "L-3" is not valid; L, LW and nW (as in 15W) stand alone`},
		{"cron(0 10 1,L * ? *)", "", `day-of-month: "1,L" is not valid; L, LW and nW (as in 15W) stand alone`},
		{"cron(0 10 1-5W * ? *)", "", `day-of-month: "1-5W" is not valid; W follows a single day, as in 15W`},
		{"cron(0 10 32W * ? *)", "", "day-of-month: 32 is out of range 1-31"},
		{"cron(0/0 10 * * ? *)", "", `minutes: increment "0" in "0/0" must be a number 1-59`},
		{"cron(0/60 10 * * ? *)", "", `minutes: increment "60" in "0/60" must be a number 1-59`},
		{"cron(0/ 10 * * ? *)", "", `minutes: increment "" in "0/" must be a number 1-59`},
		{"cron(1,,2 10 * * ? *)", "", `minutes: "1,,2" has an empty list entry`},
		{"cron(-5 10 * * ? *)", "", `minutes: "" is not a number 0-59`},
		{"cron(1.5 10 * * ? *)", "", `minutes: "1.5" is not a number 0-59`},
		{"cron(99999999999999999999 10 * * ? *)", "", `minutes: "99999999999999999999" is not a number 0-59`},
		{"cron()", "", `cron: "" must have 6 fields (minutes hours day-of-month month day-of-week year), not 0`},

		{"rate(1 hours)", "", `rate: a value of 1 takes the unit "hour", not "hours"`},
		{"rate(1 minutes)", "", `rate: a value of 1 takes the unit "minute", not "minutes"`},
		{"rate(5 hour)", "", `rate: a value of 5 takes the unit "hours", not "hour"`},
		{"rate(0 minutes)", "", `rate: value "0" must be a positive whole number`},
		{"rate(-5 minutes)", "", `rate: value "-5" must be a positive whole number`},
		{"rate(1.5 hours)", "", `rate: value "1.5" must be a positive whole number`},
		{"rate(5 weeks)", "", `rate: unit "weeks" must be minute, minutes, hour, hours, day or days`},
		{"rate(5 Minutes)", "", `rate: unit "Minutes" must be minute, minutes, hour, hours, day or days`},
		{"rate(5)", "", `rate: "5" must be a value and a unit, as in rate(5 minutes)`},
		{"rate(106752 days)", "", "rate: 106752 days is too long"},

		{"at(2026-03-08 02:30:00)", "", `at: "2026-03-08 02:30:00" must be a date and time of the form yyyy-mm-ddThh:mm:ss`},
		{"at(2026-03-08T02:30)", "", `at: "2026-03-08T02:30" must be a date and time of the form yyyy-mm-ddThh:mm:ss`},
		{"at(2026-03-08T02:30:00Z)", "", `at: "2026-03-08T02:30:00Z" must be a date and time of the form yyyy-mm-ddThh:mm:ss`},
		{"at(2026-03-08T+2:30:00)", "", `at: "2026-03-08T+2:30:00" must be a date and time of the form yyyy-mm-ddThh:mm:ss`},
		{"at(2026-02-29T10:00:00)", "", "at: 2026-02-29 is not a date"},
		{"at(2026-13-01T10:00:00)", "", "at: 2026-13-01 is not a date"},
		{"at(2026-01-01T24:00:00)", "", "at: 24:00:00 is not a time of day"},
		{"at(2026-01-01T23:59:60)", "", "at: 23:59:60 is not a time of day"},
		{"at(2026-03-29T02:30:00)", "Europe/Berlin", "at: 2026-03-29T02:30:00 does not exist in Europe/Berlin: the clocks skip it when daylight saving time starts"},
		{"at(2026-03-08T02:00:00)", "America/New_York", "at: 2026-03-08T02:00:00 does not exist in America/New_York: the clocks skip it when daylight saving time starts"},

		{"cron(0 10 * * ? *", "", `schedule expression "cron(0 10 * * ? *" must be cron(...), rate(...) or at(...)`},
		{"CRON(0 10 * * ? *)", "", `schedule expression "CRON(0 10 * * ? *)" must be cron(...), rate(...) or at(...)`},
		{" cron(0 10 * * ? *)", "", `schedule expression " cron(0 10 * * ? *)" must be cron(...), rate(...) or at(...)`},
		{"every(5 minutes)", "", `schedule expression "every(5 minutes)" must be cron(...), rate(...) or at(...)`},
		{"", "", `schedule expression "" must be cron(...), rate(...) or at(...)`},
		{"cron(0 10 * * ? *)", "Mars/Olympus_Mons", `time zone: "Mars/Olympus_Mons" is not an IANA time zone`},
		{"cron(0 10 * * ? *)", "Local", `time zone: "Local" is not an IANA time zone`},
		{"cron(0 10 * * ? *)", "../../etc/passwd", `time zone: "../../etc/passwd" is not an IANA time zone`},
	}
	for _, tc := range tests {
		s, err := Parse(tc.expr, tc.zone)
		if err == nil {
			t.Errorf("Parse(%q, %q): got %v, want error %q", tc.expr, tc.zone, s, tc.want)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("Parse(%q, %q):\n got  error %s\n want error %s", tc.expr, tc.zone, got, tc.want)
		}
	}
}

func TestKindAndString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr string
		want Kind
	}{
		{"cron(0 10 * * ? *)", Cron},
		{"rate(5 minutes)", Rate},
		{"at(2026-03-06T10:00:00)", At},
	} {
		s := mustParse(t, tc.expr, "Europe/Berlin")
		if got := s.Kind(); got != tc.want {
			t.Errorf("Parse(%q).Kind(): got %v, want %v", tc.expr, got, tc.want)
		}
		if got := s.String(); got != tc.expr {
			t.Errorf("Parse(%q).String(): got %q, want %q", tc.expr, got, tc.expr)
		}
	}
	if got, want := Kind(0).String(), "Kind(0)"; got != want {
		t.Errorf("Kind(0).String(): got %q, want %q", got, want)
	}
}

// TestNextIsStrict checks that Next never returns its argument and that
// every fire time follows from the one before.
func TestNextIsStrict(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "cron(0 10 * * ? *)", "")
	at := date(t, "2026-03-06T10:00:00Z")
	got, ok := s.Next(at)
	if want := date(t, "2026-03-07T10:00:00Z"); !ok || !got.Equal(want) {
		t.Errorf("Next(%s): got %s %v, want %s true", at, got, ok, want)
	}
	got, ok = s.Next(at.Add(-time.Nanosecond))
	if !ok || !got.Equal(at) {
		t.Errorf("Next(%s): got %s %v, want %s true", at.Add(-time.Nanosecond), got, ok, at)
	}
}

// FuzzParse checks that Parse never panics and that whatever it accepts
// yields fire times that are strictly increasing and on whole minutes for
// cron.
func FuzzParse(f *testing.F) {
	for _, expr := range []string{
		"cron(0 10 * * ? *)", "cron(0/5 8-17 ? * MON-FRI *)", "cron(0 9 ? * 2#1 *)",
		"cron(15 10 ? * 6L 2022-2023)", "cron(0 0 LW * ? *)", "cron(0 0 1W * ? *)",
		"cron(0/30 20-2 ? * MON-FRI *)", "cron(*/7 22-3/2 1/3 NOV-FEB ? 2026-2199/3)",
		"rate(1 minute)", "rate(7 days)", "at(2026-10-25T02:30:00)", "at(2026-03-29T02:30:00)",
	} {
		f.Add(expr, uint8(0), int64(1772819400))
		f.Add(expr, uint8(1), int64(1792889400))
	}
	zones := []string{"", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Apia", "Asia/Kathmandu"}
	f.Fuzz(func(t *testing.T, expr string, zone uint8, unix int64) {
		s, err := Parse(expr, zones[int(zone)%len(zones)], WithStart(time.Unix(1772819400, 0)))
		if err != nil {
			if err.Error() == "" {
				t.Errorf("Parse(%q): empty error", expr)
			}
			return
		}
		from := time.Unix(unix%(300*365*86400), 0) // 1670 to 2270
		for range 4 {
			next, ok := s.Next(from)
			if !ok {
				return
			}
			if !next.After(from) {
				t.Fatalf("%s: Next(%s) = %s, not after it", expr, from, next)
			}
			if again, _ := s.Next(next.Add(-time.Nanosecond)); !again.Equal(next) {
				t.Fatalf("%s: Next(%s) = %s, but Next just before it = %s", expr, from, next, again)
			}
			if s.Kind() == Cron && next.Second() != 0 {
				t.Fatalf("%s: Next(%s) = %s, not on a whole minute", expr, from, next)
			}
			from = next
		}
	})
}

func BenchmarkNext(b *testing.B) {
	for _, bc := range []struct{ expr, zone string }{
		{"cron(0/15 * * * ? *)", ""},
		{"cron(0/5 8-17 ? * MON-FRI *)", "Europe/Berlin"},
		{"cron(0 9 ? * 2#1 *)", "America/New_York"},
		{"cron(15 10 ? * 6L *)", "Europe/Berlin"},
		{"cron(0 0 29 2 ? *)", ""},
		{"rate(5 minutes)", ""},
	} {
		s, err := Parse(bc.expr, bc.zone, WithStart(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.expr, func(b *testing.B) {
			t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for b.Loop() {
				next, ok := s.Next(t)
				if !ok {
					next = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
				}
				t = next
			}
		})
	}
}
