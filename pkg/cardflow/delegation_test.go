package cardflow

import (
	"slices"
	"testing"
)

func TestDelegationsAdd(t *testing.T) {
	const now = 1_000_000
	base := func() *Delegations {
		return &Delegations{OrganizationID: "org", Items: []Delegation{
			{DelegationID: "ended", Approver: "cy@example.com", Delegate: "dan@example.com", StartsOn: 1, EndsOn: now - 1},
			{DelegationID: "ann", Approver: "ann@example.com", Delegate: "dan@example.com", StartsOn: now, EndsOn: now + 100},
		}}
	}
	for _, c := range []struct {
		name string
		d    Delegation
		code string
	}{
		{"another period", Delegation{Approver: "ann@example.com", Delegate: "eve@example.com", StartsOn: now + 100, EndsOn: now + 200}, ""},
		{"someone else", Delegation{Approver: "bob@example.com", Delegate: "ann@example.com", StartsOn: now, EndsOn: now + 100}, ""},
		{"overlapping", Delegation{Approver: "ANN@example.com", Delegate: "eve@example.com", StartsOn: now + 99, EndsOn: now + 200}, ECONFLICT},
		{"to oneself", Delegation{Approver: "ann@example.com", Delegate: " Ann@example.com", StartsOn: now + 100, EndsOn: now + 200}, EINVALID},
		{"empty period", Delegation{Approver: "bob@example.com", Delegate: "eve@example.com", StartsOn: now + 100, EndsOn: now + 100}, EINVALID},
		{"ended", Delegation{Approver: "bob@example.com", Delegate: "eve@example.com", StartsOn: 1, EndsOn: now}, EINVALID},
		{"no times", Delegation{Approver: "bob@example.com", Delegate: "eve@example.com"}, EINVALID},
		{"no delegate", Delegation{Approver: "bob@example.com", StartsOn: now, EndsOn: now + 1}, EINVALID},
	} {
		s := base()
		err := s.Add(c.d, now)
		if got := ErrorCode(err); got != c.code {
			t.Errorf("%s: got %q (%v), want %q", c.name, got, err, c.code)
		}
		var ids []string
		for _, x := range s.Items {
			ids = append(ids, x.DelegationID)
		}
		want := []string{"ended", "ann"}
		if c.code == "" {
			want = []string{"ann", ""} // the ended one is dropped
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%s: got delegations %v, want %v", c.name, ids, want)
		}
	}
}

func TestDelegationsBound(t *testing.T) {
	s := &Delegations{}
	for i := range MaxDelegations {
		s.Items = append(s.Items, Delegation{Approver: "p" + string(rune('a'+i%26)) + "@example.com", StartsOn: int64(1000 + i*10), EndsOn: int64(1005 + i*10)})
	}
	if got := ErrorCode(s.Add(Delegation{Approver: "new@example.com", Delegate: "eve@example.com", StartsOn: 1, EndsOn: 1 << 40}, 1)); got != ECONFLICT {
		t.Errorf("past the bound: got %q, want %q", got, ECONFLICT)
	}
}

func TestApprovalDelegate(t *testing.T) {
	const now = 500
	ds := &Delegations{Items: []Delegation{
		{DelegationID: "1", Approver: "ann@example.com", Delegate: "dan@example.com", StartsOn: 0, EndsOn: 1000},
		{DelegationID: "2", Approver: "dan@example.com", Delegate: "eve@example.com", StartsOn: 0, EndsOn: 1000},
		{DelegationID: "3", Approver: "cy@example.com", Delegate: "fay@example.com", StartsOn: 0, EndsOn: 1000},
		{DelegationID: "4", Approver: "bob@example.com", Delegate: "gus@example.com", StartsOn: 600, EndsOn: 1000},
	}}
	for _, c := range []struct {
		name      string
		approvers []string
		want      []string
		standIns  int
	}{
		// One hop: dan stands in for ann, and his own delegation does not
		// pass it on to eve.
		{"one hop", []string{"ann@example.com", "bob@example.com"}, []string{"dan@example.com", "bob@example.com"}, 1},
		// fay is listed already: cy stays.
		{"delegate listed", []string{"cy@example.com", "fay@example.com"}, []string{"cy@example.com", "fay@example.com"}, 0},
		{"not yet", []string{"bob@example.com"}, []string{"bob@example.com"}, 0},
	} {
		a := &Approval{Approvers: slices.Clone(c.approvers), Status: ApprovalPending}
		a.Delegate(ds, now)
		if !slices.Equal(a.Approvers, c.want) || len(a.StandIns) != c.standIns {
			t.Errorf("%s: got %v with %d stand-ins, want %v with %d", c.name, a.Approvers, len(a.StandIns), c.want, c.standIns)
		}
	}

	// The delegate's answer records both; self-approval holds for both.
	a := &Approval{StepName: "s", Approvers: []string{"ann@example.com", "cy@example.com"}, Policy: PolicyAll, Status: ApprovalPending,
		TriggeredBy: "cy@example.com", ForbidSelf: true}
	a.Delegate(ds, now)
	if r := a.Answer([]string{"fay@example.com"}, ApprovalAnswer{Actor: "fay@example.com", Decision: DecisionApprove}); r == nil || r.Reason != RefusedSelf {
		t.Errorf("fay for cy, who asked: got %v, want %s", r, RefusedSelf)
	}
	if r := a.Answer([]string{"dan@example.com"}, ApprovalAnswer{Actor: "dan@example.com", Decision: DecisionApprove}); r != nil {
		t.Fatalf("dan for ann: got %v", r)
	}
	if got := a.Answers[0]; got.Approver != "dan@example.com" || got.OnBehalfOf != "ann@example.com" {
		t.Errorf("dan's answer: got %+v, want for ann", got)
	}
}
