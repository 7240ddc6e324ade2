package cardflow

import (
	"math"
	"testing"
	"time"
)

// TestStatsBucketPrecision: a time read back from its bucket is within 5%
// of it, from a second to a year.
func TestStatsBucketPrecision(t *testing.T) {
	for ms := int64(1001); ms < int64(365*24*time.Hour/time.Millisecond); ms = ms*107/100 + 1 {
		got := StatsBucketValue(StatsBucket(ms))
		if d := math.Abs(float64(got-ms)) / float64(ms); d > 0.05 {
			t.Fatalf("%d ms: got %d ms back, %.1f%% off, want within 5%%", ms, got, d*100)
		}
	}
}

func TestHistogramPercentiles(t *testing.T) {
	h := Histogram{}
	// 90 times of a minute, 10 of a day.
	h.Add(StatsBucket(60_000), 90)
	h.Add(StatsBucket(86_400_000), 10)
	near := func(got, want int64) bool { return math.Abs(float64(got-want)) <= 0.05*float64(want) }
	cases := []struct {
		name string
		got  int64
		want int64
	}{
		{"p50", h.Percentile(0.5), 60_000},
		{"p90", h.Percentile(0.9), 60_000},
		{"p95", h.Percentile(0.95), 86_400_000},
		{"max", h.Max(), 86_400_000},
	}
	for _, c := range cases {
		if !near(c.got, c.want) {
			t.Errorf("%s: got %d ms, want about %d", c.name, c.got, c.want)
		}
	}
	if got := (Histogram{}).Percentile(0.5); got != 0 {
		t.Errorf("p50 of none: got %d, want 0", got)
	}
}

// TestApprovalStatsOf: what an ended approval adds to its day, by how it
// ended; an open one adds nothing.
func TestApprovalStatsOf(t *testing.T) {
	opened := time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC).UnixMilli()
	a := &Approval{Status: ApprovalRejected, CreatedOn: opened, DecidedOn: opened + 2*3_600_000, Answers: []ApprovalAnswer{
		{Approver: "Ann@Example.com", Decision: DecisionApprove, At: opened + 60_000},
		{Approver: "bob@example.com", Decision: DecisionReject, At: opened + 2*3_600_000},
	}}
	d, ok := ApprovalStatsOf(a)
	if !ok || d.Day != "2026-11-30" || d.Counts[ApprovalRejected] != 1 || d.Cycle[StatsBucket(2*3_600_000)] != 1 {
		t.Errorf("rejected: got %+v, %v; want one rejection on the day it ended, with its cycle time", d, ok)
	}
	if ann := d.Approvers["ann@example.com"]; ann == nil || ann.Answered != 1 || ann.Approved != 1 || ann.Cycle[StatsBucket(60_000)] != 1 {
		t.Errorf("ann: got %+v, want one approval a minute in, under her lower-case id", ann)
	}
	cancelled := &Approval{Status: ApprovalCancelled, CreatedOn: opened, DecidedOn: opened + 1000}
	if d, _ := ApprovalStatsOf(cancelled); d.Counts[ApprovalCancelled] != 1 || len(d.Cycle) != 0 {
		t.Errorf("cancelled: got %+v, want counted without a cycle time", d)
	}
	if _, ok := ApprovalStatsOf(&Approval{Status: ApprovalPending}); ok {
		t.Error("pending: got statistics, want none")
	}
}
