package cardflow_test

import (
	"fmt"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestCountRefusal: refusals are counted per actor (any case) and reason;
// only a pair's first is reported as first, and pairs past the cap are
// counted together.
func TestCountRefusal(t *testing.T) {
	t.Parallel()
	a := &cardflow.Approval{}
	for i, c := range []struct {
		actor, reason string
		first         bool
	}{
		{"eve@example.com", cardflow.RefusedNotApprover, true},
		{"EVE@example.com", cardflow.RefusedNotApprover, false},
		{"eve@example.com", cardflow.RefusedNotYourTurn, true},
		{"bob@example.com", cardflow.RefusedNotApprover, true},
		{"eve@example.com", cardflow.RefusedNotApprover, false},
	} {
		if got := a.CountRefusal(c.actor, c.reason, int64(i)); got != c.first {
			t.Errorf("refusal %d (%s, %s): first = %v, want %v", i, c.actor, c.reason, got, c.first)
		}
	}
	if got := a.Refusals[0]; got.Count != 3 || got.First != 0 || got.Last != 4 {
		t.Errorf("eve's not_an_approver: got %+v, want 3 from 0 to 4", got)
	}
	for i := len(a.Refusals); i < cardflow.MaxRefusalEntries; i++ {
		a.CountRefusal(fmt.Sprintf("p%d@example.com", i), cardflow.RefusedNotApprover, 9)
	}
	if got := a.CountRefusal("late@example.com", cardflow.RefusedNotApprover, 10); got || len(a.Refusals) != cardflow.MaxRefusalEntries || a.RefusalsUnlisted != 1 {
		t.Errorf("past the cap: first %v, %d entries, %d unlisted; want false, %d, 1", got, len(a.Refusals), a.RefusalsUnlisted, cardflow.MaxRefusalEntries)
	}
}

// TestOverrideWith: an override decides an open approval and keeps its
// answers; the output says how; a decided approval is a conflict.
func TestOverrideWith(t *testing.T) {
	t.Parallel()
	a := &cardflow.Approval{ApprovalID: "A", Approvers: []string{"ann@example.com", "bob@example.com"}, Policy: cardflow.PolicyAll, Status: cardflow.ApprovalPending}
	if r := a.Answer([]string{"ann@example.com"}, cardflow.ApprovalAnswer{Actor: "ann@example.com", At: 1, Decision: cardflow.DecisionApprove}); r != nil {
		t.Fatal(r.Message)
	}
	o := cardflow.ApprovalOverride{Actor: "admin", At: 2, Decision: cardflow.DecisionReject, Reason: "frozen"}
	if err := a.OverrideWith(o); err != nil {
		t.Fatal(err)
	}
	out := a.Output()
	if out["outcome"] != "overridden" || out["overridden_by"] != "admin" || out["reason"] != "frozen" || out["decision"] != cardflow.DecisionReject || len(out["answers"].([]any)) != 1 {
		t.Errorf("output: got %v, want overridden by admin, rejected, ann's answer alone", out)
	}
	if a.Status != cardflow.ApprovalOverridden || a.DecidedBy != "admin" || a.DecidedOn != 2 {
		t.Errorf("record: got %s by %s on %d", a.Status, a.DecidedBy, a.DecidedOn)
	}
	for _, c := range []*cardflow.Approval{a, {ApprovalID: "B", Status: cardflow.ApprovalApproved}} {
		if err := c.OverrideWith(o); cardflow.ErrorCode(err) != cardflow.ECONFLICT {
			t.Errorf("override of %s (%s): got %v, want ECONFLICT", c.ApprovalID, c.Status, err)
		}
	}
}
