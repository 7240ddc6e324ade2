package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// testApprovalStats seeds approvals that end in every way on two days, in
// two workflows and two organizations, and reads the aggregates back.
func testApprovalStats(t *testing.T, e env) {
	s := e.store(t)
	ctx := t.Context()
	org, otherOrg := newOrg(), newOrg()
	day1 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC).UnixMilli()
	day2 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC).UnixMilli()
	const minute, hour = int64(60_000), int64(3_600_000)

	// end creates an approval opened at opened, then ends it with the
	// answers given, as the use cases do: PutApproval at its revision.
	end := func(org, wf string, opened int64, status string, decided int64, answers ...cardflow.ApprovalAnswer) *cardflow.Approval {
		t.Helper()
		a := approval(org, wf, opened, "ann@example.com", "Bob@Example.com")
		mustOK(t, "create", s.CreateApproval(ctx, a))
		a.Answers, a.Status, a.DecidedOn = answers, status, decided
		mustOK(t, "end "+status, s.PutApproval(ctx, a))
		return a
	}
	ans := func(who, decision string, at int64) cardflow.ApprovalAnswer {
		return cardflow.ApprovalAnswer{Approver: who, Actor: who, At: at, Decision: decision, Channel: cardflow.ChannelAPI}
	}
	approved := end(org, "WF1", day1, cardflow.ApprovalApproved, day1+2*minute,
		ans("ann@example.com", cardflow.DecisionApprove, day1+minute), ans("Bob@Example.com", cardflow.DecisionApprove, day1+2*minute))
	end(org, "WF1", day1, cardflow.ApprovalRejected, day1+2*hour, ans("Bob@Example.com", cardflow.DecisionReject, day1+2*hour))
	end(org, "WF2", day2-hour, cardflow.ApprovalTimedOut, day2)
	end(org, "WF2", day2-3*hour, cardflow.ApprovalOverridden, day2)
	end(org, "WF1", day2, cardflow.ApprovalCancelled, day2+minute)
	end(otherOrg, "WF1", day1, cardflow.ApprovalApproved, day1+minute, ans("ann@example.com", cardflow.DecisionApprove, day1+minute))
	// A pending approval counts nowhere; a decided one written again (its
	// posted copies, say) counts once.
	mustOK(t, "create pending", s.CreateApproval(ctx, approval(org, "WF1", day1, "ann@example.com")))
	approved.Posts = []cardflow.BotPost{{ActivityID: "a1", ConversationID: "c1"}}
	mustOK(t, "put decided again", s.PutApproval(ctx, approved))

	b := cardflow.StatsBucket
	days := []string{"2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"}
	want := []cardflow.ApprovalDayStats{{
		Day:    "2026-11-02",
		Counts: map[string]int64{cardflow.ApprovalApproved: 1, cardflow.ApprovalRejected: 1},
		Cycle:  cardflow.Histogram{b(2 * minute): 1, b(2 * hour): 1},
		Approvers: map[string]*cardflow.ApproverDayStats{
			"ann@example.com": {Answered: 1, Approved: 1, Cycle: cardflow.Histogram{b(minute): 1}},
			"bob@example.com": {Answered: 2, Approved: 1, Rejected: 1, Cycle: cardflow.Histogram{b(2 * minute): 1, b(2 * hour): 1}},
		},
	}, {
		Day:       "2026-11-03",
		Counts:    map[string]int64{cardflow.ApprovalTimedOut: 1, cardflow.ApprovalOverridden: 1, cardflow.ApprovalCancelled: 1},
		Cycle:     cardflow.Histogram{b(3 * hour): 1},
		Approvers: map[string]*cardflow.ApproverDayStats{},
	}}
	got, err := s.ApprovalStats(ctx, org, "", days)
	mustOK(t, "stats", err)
	sameJSON(t, "stats of the organization", got, want)

	got, err = s.ApprovalStats(ctx, org, "WF2", days)
	mustOK(t, "stats of WF2", err)
	sameJSON(t, "stats of WF2", got, []cardflow.ApprovalDayStats{{
		Day: "2026-11-03", Counts: map[string]int64{cardflow.ApprovalTimedOut: 1, cardflow.ApprovalOverridden: 1},
		Cycle: cardflow.Histogram{b(3 * hour): 1}, Approvers: map[string]*cardflow.ApproverDayStats{},
	}})

	got, err = s.ApprovalStats(ctx, newOrg(), "", days)
	mustOK(t, "stats of an organization with none", err)
	sameJSON(t, "stats of an organization with none", got, []cardflow.ApprovalDayStats{})
	got, err = s.ApprovalStats(ctx, otherOrg, "", days)
	mustOK(t, "stats of the other organization", err)
	if len(got) != 1 || got[0].Counts[cardflow.ApprovalApproved] != 1 || len(got[0].Counts) != 1 {
		t.Errorf("stats of the other organization: got %+v, want its one approval alone", got)
	}
	// The aggregates are no approvals.
	_, err = s.GetApproval(ctx, org, "stats##2026-11-02")
	wantCode(t, "an aggregate read as an approval", err, cardflow.ENOTFOUND)

	_, err = s.ApprovalStats(ctx, org, "", make([]string, cardflow.MaxStatsDays+1))
	wantCode(t, "too many days", err, cardflow.EINVALID)
}

// testApprovalsOverdue lists pending approvals by whether they are past
// their due.
func testApprovalsOverdue(t *testing.T, e env) {
	s := e.store(t)
	ctx := t.Context()
	org := newOrg()
	const now = int64(1700000100000)
	var ids []string
	for _, due := range []int64{0, now - 1, now, now + 1} {
		a := approval(org, "WF1", 1700000000000, "ann@example.com")
		a.Due, a.Overdue = due, true // Overdue is the reader's to set, never kept
		mustOK(t, "create", s.CreateApproval(ctx, a))
		ids = append(ids, a.ApprovalID)
	}
	yes, no := true, false
	cases := []struct {
		name    string
		overdue *bool
		want    []string
	}{
		{"overdue", &yes, []string{ids[1], ids[2]}},
		{"not overdue", &no, []string{ids[0], ids[3]}},
		{"either", nil, ids},
	}
	for _, c := range cases {
		page, err := s.ListPendingApprovals(ctx, org, cardflow.ApprovalFilter{Overdue: c.overdue, Now: now}, cardflow.ListOptions[cardflow.ApprovalKey]{Limit: 30})
		mustOK(t, c.name, err)
		var got []string
		for _, a := range page.Items {
			got = append(got, a.ApprovalID)
			if a.Overdue {
				t.Errorf("%s: approval %s came back with overdue set; the stores keep none", c.name, a.ApprovalID)
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		sameJSON(t, c.name, got, want)
	}
}
