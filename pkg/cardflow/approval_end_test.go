package cardflow

import (
	"strings"
	"testing"
)

// Who triggered the execution may not answer when the step forbids
// self-approval, whatever the templated requester says; and the quorum
// counts them out.
func TestApprovalRefusesWhoTriggered(t *testing.T) {
	t.Parallel()
	three := []string{"ann@example.com", "bob@example.com", "cy@example.com"}
	type answer struct{ who, decision string }
	cases := []struct {
		name       string
		forbid     bool
		requester  string // the templated value
		policy     string
		count      int
		answers    []answer
		wantStatus string
		// wantRefused is the refusal of the last answer ("": it counts).
		wantRefused string
	}{
		{name: "the trigger's actor, input naming another", forbid: true, requester: "someone-else@example.com", policy: PolicyFirst,
			answers: []answer{{"BOB@example.com", DecisionApprove}}, wantStatus: ApprovalPending, wantRefused: RefusedSelf},
		{name: "the trigger's actor, template empty", forbid: true, policy: PolicyFirst,
			answers: []answer{{"bob@example.com", DecisionApprove}}, wantStatus: ApprovalPending, wantRefused: RefusedSelf},
		{name: "the templated requester still refused", forbid: true, requester: "cy@example.com", policy: PolicyFirst,
			answers: []answer{{"cy@example.com", DecisionApprove}}, wantStatus: ApprovalPending, wantRefused: RefusedSelf},
		{name: "self-approval allowed", policy: PolicyFirst,
			answers: []answer{{"bob@example.com", DecisionApprove}}, wantStatus: ApprovalApproved},
		{name: "another approver counts", forbid: true, requester: "someone-else@example.com", policy: PolicyFirst,
			answers: []answer{{"ann@example.com", DecisionApprove}}, wantStatus: ApprovalApproved},
		// bob triggered: of ann and cy both must approve for 2 of 3, so
		// one rejection decides.
		{name: "quorum counts the trigger's actor out", forbid: true, requester: "someone-else@example.com", policy: PolicyQuorum, count: 2,
			answers: []answer{{"ann@example.com", DecisionApprove}, {"cy@example.com", DecisionReject}}, wantStatus: ApprovalRejected},
		{name: "quorum reached without the trigger's actor", forbid: true, policy: PolicyQuorum, count: 2,
			answers: []answer{{"ann@example.com", DecisionApprove}, {"cy@example.com", DecisionApprove}}, wantStatus: ApprovalApproved},
		{name: "quorum of all cannot be reached", forbid: true, policy: PolicyQuorum, count: 3,
			answers: []answer{{"ann@example.com", DecisionApprove}}, wantStatus: ApprovalRejected},
		{name: "quorum with self-approval allowed", policy: PolicyQuorum, count: 3,
			answers: []answer{{"ann@example.com", DecisionApprove}}, wantStatus: ApprovalPending},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &Approval{ApprovalID: "A", StepName: "Approve", Approvers: three, Policy: c.policy, Count: c.count, Status: ApprovalPending,
				Requester: c.requester, TriggeredBy: "bob@example.com", ForbidSelf: c.forbid}
			var refused string
			for i, ans := range c.answers {
				r := a.Answer([]string{ans.who}, ApprovalAnswer{Actor: ans.who, At: int64(i + 1), Decision: ans.decision})
				switch {
				case r != nil && i < len(c.answers)-1:
					t.Fatalf("answer %d refused: %s", i, r.Message)
				case r != nil:
					refused = r.Reason
				}
			}
			if refused != c.wantRefused {
				t.Errorf("last answer: got refusal %q, want %q", refused, c.wantRefused)
			}
			if a.Status != c.wantStatus {
				t.Errorf("status: got %s, want %s", a.Status, c.wantStatus)
			}
		})
	}
}

// A cancelled approval takes no answer and no reassignment, and says why.
func TestApprovalCancelledRefuses(t *testing.T) {
	t.Parallel()
	a := &Approval{ApprovalID: "A", StepName: "Approve", Approvers: []string{"ann@example.com"}, Policy: PolicyFirst, Status: ApprovalCancelled, AllowReassign: true}
	r := a.Answer([]string{"ann@example.com"}, ApprovalAnswer{Decision: DecisionApprove})
	if r == nil || r.Error().Code != ECONFLICT || !strings.Contains(r.Message, "was cancelled") {
		t.Errorf("answer: got %+v, want a conflict saying it was cancelled", r)
	}
	if _, r := a.Reassign([]string{"ann@example.com"}, "bob@example.com"); r == nil || !strings.Contains(r.Message, "was cancelled") {
		t.Errorf("reassign: got %+v, want a refusal saying it was cancelled", r)
	}
	if got := a.EndNote(); !strings.Contains(got, "cancelled") {
		t.Errorf("end note: got %q, want it to say cancelled", got)
	}
	if len(a.Answers) != 0 || a.Status != ApprovalCancelled {
		t.Errorf("approval changed: %+v", a)
	}
}
