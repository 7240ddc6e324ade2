package app

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// ApprovalStatsInput selects the statistics of getApprovalStats: UTC days
// From to To (StatsDayLayout, both included; the last 30 days when
// absent), of one workflow when WorkflowID is set.
type ApprovalStatsInput struct {
	WorkflowID string
	From, To   string
}

// DefaultStatsDays is how many days getApprovalStats covers when neither
// from nor to is given.
const DefaultStatsDays = 30

// maxStatsPendingPages bounds the pages of open approvals a statistics
// read counts (30 approvals each); past them, PendingPartial is set.
const maxStatsPendingPages = 100

// ApprovalStats is the answer of getApprovalStats.
type ApprovalStats struct {
	From       string `json:"from"`
	To         string `json:"to"`
	Approved   int64  `json:"approved"`
	Rejected   int64  `json:"rejected"`
	TimedOut   int64  `json:"timed_out"`
	Overridden int64  `json:"overridden"`
	Cancelled  int64  `json:"cancelled"`
	// Pending and Overdue are as of now, whatever the days.
	Pending int64 `json:"pending"`
	Overdue int64 `json:"overdue"`
	// PendingPartial is set when there were more open approvals than one
	// read counts.
	PendingPartial bool            `json:"pending_partial,omitempty"`
	CycleTimeMs    CycleTime       `json:"cycle_time_ms"`
	ByApprover     []ApproverStats `json:"by_approver"`
	ByDay          []DayStats      `json:"by_day"`
	ByWorkflow     []WorkflowLoad  `json:"by_workflow"`
}

// CycleTime is the time from an approval's opening to its decision, at the
// histogram's precision (within about 5%). Histogram lists the non-empty
// buckets, each by the time it stands for.
type CycleTime struct {
	Decided   int64         `json:"decided"`
	P50       int64         `json:"p50"`
	P95       int64         `json:"p95"`
	Max       int64         `json:"max"`
	Histogram []BucketCount `json:"histogram"`
}

// BucketCount is one bucket of a cycle-time histogram.
type BucketCount struct {
	Ms    int64 `json:"ms"`
	Count int64 `json:"count"`
}

// ApproverStats is one approver's answers in the days and what waits on
// them now.
type ApproverStats struct {
	Approver string `json:"approver"`
	Answered int64  `json:"answered"`
	Approved int64  `json:"approved"`
	Rejected int64  `json:"rejected"`
	P50Ms    int64  `json:"p50_ms"`
	Pending  int64  `json:"pending"`
}

// DayStats is how the approvals that ended on one day ended.
type DayStats struct {
	Day        string `json:"day"`
	Approved   int64  `json:"approved"`
	Rejected   int64  `json:"rejected"`
	TimedOut   int64  `json:"timed_out"`
	Overridden int64  `json:"overridden"`
	Cancelled  int64  `json:"cancelled"`
	P50Ms      int64  `json:"p50_ms"`
}

// WorkflowLoad is what is open in one workflow now.
type WorkflowLoad struct {
	WorkflowID string `json:"workflow_id"`
	Pending    int64  `json:"pending"`
	Overdue    int64  `json:"overdue"`
}

// GetApprovalStats answers how the organization's approvals went in the
// days asked: from the day aggregates the store keeps as approvals end,
// and what is open now from the pending approvals.
func (s *Approvals) GetApprovalStats(ctx context.Context, in ApprovalStatsInput) (*ApprovalStats, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	now := s.now().UTC()
	from, to, err := statsRange(in.From, in.To, now)
	if err != nil {
		return nil, err
	}
	days := cardflow.StatsDays(from, to)
	stored, err := s.store.ApprovalStats(ctx, p.OrganizationID, in.WorkflowID, days)
	if err != nil {
		return nil, err
	}
	out := &ApprovalStats{From: days[0], To: days[len(days)-1],
		ByApprover: []ApproverStats{}, ByDay: make([]DayStats, 0, len(days)), ByWorkflow: []WorkflowLoad{}}
	var total cardflow.ApprovalDayStats
	byDay := map[string]cardflow.ApprovalDayStats{}
	for _, d := range stored {
		byDay[d.Day] = d
		total.Merge(d)
	}
	for _, day := range days {
		d := byDay[day]
		out.ByDay = append(out.ByDay, DayStats{Day: day, Approved: d.Counts[cardflow.ApprovalApproved], Rejected: d.Counts[cardflow.ApprovalRejected],
			TimedOut: d.Counts[cardflow.ApprovalTimedOut], Overridden: d.Counts[cardflow.ApprovalOverridden],
			Cancelled: d.Counts[cardflow.ApprovalCancelled], P50Ms: d.Cycle.Percentile(0.5)})
	}
	out.Approved, out.Rejected = total.Counts[cardflow.ApprovalApproved], total.Counts[cardflow.ApprovalRejected]
	out.TimedOut, out.Overridden = total.Counts[cardflow.ApprovalTimedOut], total.Counts[cardflow.ApprovalOverridden]
	out.Cancelled = total.Counts[cardflow.ApprovalCancelled]
	out.CycleTimeMs = CycleTime{Decided: total.Cycle.Total(), P50: total.Cycle.Percentile(0.5), P95: total.Cycle.Percentile(0.95),
		Max: total.Cycle.Max(), Histogram: []BucketCount{}}
	for _, b := range slices.Sorted(maps.Keys(total.Cycle)) {
		if n := total.Cycle[b]; n > 0 {
			out.CycleTimeMs.Histogram = append(out.CycleTimeMs.Histogram, BucketCount{Ms: cardflow.StatsBucketValue(b), Count: n})
		}
	}
	approvers := map[string]*ApproverStats{}
	approver := func(who string) *ApproverStats {
		a := approvers[who]
		if a == nil {
			a = &ApproverStats{Approver: who}
			approvers[who] = a
		}
		return a
	}
	for who, st := range total.Approvers {
		a := approver(who)
		a.Answered, a.Approved, a.Rejected, a.P50Ms = st.Answered, st.Approved, st.Rejected, st.Cycle.Percentile(0.5)
	}
	if err := s.countPending(ctx, p.OrganizationID, in.WorkflowID, now.UnixMilli(), out, approver); err != nil {
		return nil, err
	}
	for _, a := range approvers {
		out.ByApprover = append(out.ByApprover, *a)
	}
	slices.SortFunc(out.ByApprover, func(a, b ApproverStats) int {
		return cmp.Or(cmp.Compare(b.Answered+b.Pending, a.Answered+a.Pending), strings.Compare(a.Approver, b.Approver))
	})
	return out, nil
}

// countPending counts the open approvals, those overdue, and what waits on
// each approver and in each workflow, from the pending approvals' index.
func (s *Approvals) countPending(ctx context.Context, org, workflowID string, now int64, out *ApprovalStats, approver func(string) *ApproverStats) error {
	workflows := map[string]*WorkflowLoad{}
	opt := cardflow.ListOptions[cardflow.ApprovalKey]{Limit: cardflow.MaxLimit}
	for range maxStatsPendingPages {
		page, err := s.store.ListPendingApprovals(ctx, org, cardflow.ApprovalFilter{WorkflowID: workflowID}, opt)
		if err != nil {
			return err
		}
		for _, a := range page.Items {
			w := workflows[a.WorkflowID]
			if w == nil {
				w = &WorkflowLoad{WorkflowID: a.WorkflowID}
				workflows[a.WorkflowID] = w
			}
			out.Pending++
			w.Pending++
			if a.IsOverdue(now) {
				out.Overdue++
				w.Overdue++
			}
			for _, who := range a.Awaiting() {
				approver(strings.ToLower(strings.TrimSpace(who))).Pending++
			}
		}
		if page.LastKey == nil {
			opt.After = nil
			break
		}
		opt.After = page.LastKey
	}
	out.PendingPartial = opt.After != nil
	for _, w := range workflows {
		out.ByWorkflow = append(out.ByWorkflow, *w)
	}
	slices.SortFunc(out.ByWorkflow, func(a, b WorkflowLoad) int {
		return cmp.Or(cmp.Compare(b.Overdue, a.Overdue), cmp.Compare(b.Pending, a.Pending), strings.Compare(a.WorkflowID, b.WorkflowID))
	})
	return nil
}

// statsRange reads the days asked for: the last DefaultStatsDays up to
// today when neither is given, DefaultStatsDays from from or up to to when
// one is.
func statsRange(fromText, toText string, now time.Time) (from, to time.Time, err error) {
	day := func(name, v string) (time.Time, error) {
		t, err := time.Parse(cardflow.StatsDayLayout, v)
		if err != nil {
			return time.Time{}, cardflow.Errorf(cardflow.EINVALID, "%s must be a day such as 2026-11-29, got %q", name, v)
		}
		return t, nil
	}
	span := time.Duration(DefaultStatsDays-1) * 24 * time.Hour
	switch {
	case fromText == "" && toText == "":
		to = now.Truncate(24 * time.Hour)
		from = to.Add(-span)
	case toText == "":
		if from, err = day("from", fromText); err != nil {
			return
		}
		to = from.Add(span)
	case fromText == "":
		if to, err = day("to", toText); err != nil {
			return
		}
		from = to.Add(-span)
	default:
		if from, err = day("from", fromText); err != nil {
			return
		}
		if to, err = day("to", toText); err != nil {
			return
		}
	}
	switch n := int(to.Sub(from)/(24*time.Hour)) + 1; {
	case n < 1:
		err = cardflow.Errorf(cardflow.EINVALID, "from %s is after to %s", from.Format(cardflow.StatsDayLayout), to.Format(cardflow.StatsDayLayout))
	case n > cardflow.MaxStatsDays:
		err = cardflow.Errorf(cardflow.EINVALID, "from %s to %s covers %d days; statistics cover at most %d", from.Format(cardflow.StatsDayLayout), to.Format(cardflow.StatsDayLayout), n, cardflow.MaxStatsDays)
	}
	return
}
