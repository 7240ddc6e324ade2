package cardflow

import (
	"math"
	"strings"
	"time"
)

// Approval statistics are kept as one aggregate per organization and UTC
// day (and one per workflow and day), which PutApproval updates in the
// atomic change that moves an approval from PENDING to a final status. A
// statistics read is then a handful of key reads, whatever the number of
// approvals: see docs/DECISIONS.md, Approval statistics.

// StatsDayLayout is how a day of the aggregates is written.
const StatsDayLayout = "2006-01-02"

// MaxStatsDays bounds the days one statistics read covers.
const MaxStatsDays = 366

// Cycle times are counted in a histogram of fixed buckets: bucket 0 holds
// every time up to a second, and each later bucket is 2^(1/8) times as
// wide as the one before, so a percentile read from it is within about 5%
// of the true value. The last bucket holds everything longer.
const (
	statsBucketsPerDoubling = 8
	statsBucketBaseMs       = 1000
	// StatsBuckets is the number of buckets: the last starts at about
	// 2^36 seconds, beyond any step's timeout.
	StatsBuckets = 36*statsBucketsPerDoubling + 1
)

// StatsBucket is the bucket of a cycle time.
func StatsBucket(ms int64) int {
	if ms <= statsBucketBaseMs {
		return 0
	}
	i := int(math.Ceil(math.Log2(float64(ms)/statsBucketBaseMs) * statsBucketsPerDoubling))
	return min(max(i, 1), StatsBuckets-1)
}

// StatsBucketValue is the time a bucket stands for: the geometric middle
// of its bounds (half a second for bucket 0).
func StatsBucketValue(i int) int64 {
	if i <= 0 {
		return statsBucketBaseMs / 2
	}
	return int64(math.Round(statsBucketBaseMs * math.Exp2((float64(i)-0.5)/statsBucketsPerDoubling)))
}

// Histogram counts cycle times by bucket; absent buckets are empty.
type Histogram map[int]int64

// Add counts n times of bucket i.
func (h Histogram) Add(i int, n int64) { h[i] += n }

// Total is how many times the histogram holds.
func (h Histogram) Total() int64 {
	var n int64
	for _, c := range h {
		n += c
	}
	return n
}

// Percentile is the time below which the fraction p of the counted times
// fall, at the buckets' precision; 0 when none are counted.
func (h Histogram) Percentile(p float64) int64 {
	total := h.Total()
	if total == 0 {
		return 0
	}
	rank := int64(math.Ceil(p * float64(total)))
	rank = max(rank, 1)
	var seen int64
	for i := range StatsBuckets {
		if seen += h[i]; seen >= rank {
			return StatsBucketValue(i)
		}
	}
	return StatsBucketValue(StatsBuckets - 1)
}

// Max is the time of the highest bucket counted; 0 when none are.
func (h Histogram) Max() int64 {
	top := -1
	for i, c := range h {
		if c > 0 && i > top {
			top = i
		}
	}
	if top < 0 {
		return 0
	}
	return StatsBucketValue(top)
}

// ApproverDayStats is what one approver answered on one day.
type ApproverDayStats struct {
	Answered int64 `json:"answered"`
	Approved int64 `json:"approved"`
	Rejected int64 `json:"rejected"`
	// Cycle is the time from an approval's opening to this approver's
	// answer.
	Cycle Histogram `json:"cycle,omitempty"`
}

// ApprovalDayStats is the aggregate of the approvals of one organization
// (of one workflow, or of all) that ended on one UTC day.
type ApprovalDayStats struct {
	Day string `json:"day"`
	// Counts are by final status: APPROVED, REJECTED, TIMED_OUT,
	// OVERRIDDEN, CANCELLED.
	Counts map[string]int64 `json:"counts"`
	// Cycle is the time from opening to decision of those decided
	// (approved, rejected, overridden).
	Cycle Histogram `json:"cycle,omitempty"`
	// Approvers are by approver, in lower case.
	Approvers map[string]*ApproverDayStats `json:"approvers,omitempty"`
}

// ApprovalStatsOf is what an approval that has just ended adds to the
// aggregates of its day; false while it is open.
func ApprovalStatsOf(a *Approval) (ApprovalDayStats, bool) {
	if a.Open() || a.Status == "" {
		return ApprovalDayStats{}, false
	}
	d := ApprovalDayStats{
		Day:    StatsDay(a.DecidedOn),
		Counts: map[string]int64{a.Status: 1},
		Cycle:  Histogram{}, Approvers: map[string]*ApproverDayStats{},
	}
	switch a.Status {
	case ApprovalApproved, ApprovalRejected, ApprovalOverridden:
		d.Cycle.Add(StatsBucket(a.DecidedOn-a.CreatedOn), 1)
	}
	for _, ans := range a.Answers {
		who := strings.ToLower(strings.TrimSpace(ans.Approver))
		s := d.Approvers[who]
		if s == nil {
			s = &ApproverDayStats{Cycle: Histogram{}}
			d.Approvers[who] = s
		}
		s.Answered++
		if ans.Decision == DecisionApprove {
			s.Approved++
		} else {
			s.Rejected++
		}
		s.Cycle.Add(StatsBucket(ans.At-a.CreatedOn), 1)
	}
	return d, true
}

// StatsDay is the UTC day of a time in epoch ms.
func StatsDay(ms int64) string { return time.UnixMilli(ms).UTC().Format(StatsDayLayout) }

// Merge adds o's counts to d.
func (d *ApprovalDayStats) Merge(o ApprovalDayStats) {
	if d.Counts == nil {
		d.Counts = map[string]int64{}
	}
	if d.Cycle == nil {
		d.Cycle = Histogram{}
	}
	if d.Approvers == nil {
		d.Approvers = map[string]*ApproverDayStats{}
	}
	for k, n := range o.Counts {
		d.Counts[k] += n
	}
	for i, n := range o.Cycle {
		d.Cycle.Add(i, n)
	}
	for who, s := range o.Approvers {
		t := d.Approvers[who]
		if t == nil {
			t = &ApproverDayStats{Cycle: Histogram{}}
			d.Approvers[who] = t
		}
		t.Answered += s.Answered
		t.Approved += s.Approved
		t.Rejected += s.Rejected
		if t.Cycle == nil {
			t.Cycle = Histogram{}
		}
		for i, n := range s.Cycle {
			t.Cycle.Add(i, n)
		}
	}
}

// StatsDays lists the days from from to to, both included.
func StatsDays(from, to time.Time) []string {
	var days []string
	for d := from.UTC().Truncate(24 * time.Hour); !d.After(to); d = d.Add(24 * time.Hour) {
		days = append(days, d.Format(StatsDayLayout))
	}
	return days
}

// Awaiting lists the approvers an open approval waits on: those who have
// not answered and may (not the requester self-approval refuses), and
// under PolicySequential only the one whose turn it is.
func (a *Approval) Awaiting() []string {
	var out []string
	for _, p := range a.Approvers {
		if a.answered(p) || a.requester([]string{p}) {
			continue
		}
		out = append(out, p)
		if a.Policy == PolicySequential {
			break
		}
	}
	return out
}
