package cardflow

import (
	"fmt"
	"slices"
	"testing"
)

func TestApprovalPolicies(t *testing.T) {
	t.Parallel()
	type answer struct{ who, decision string }
	three := []string{"ann@example.com", "bob@example.com", "cy@example.com"}
	cases := []struct {
		policy  string
		count   int
		answers []answer
		want    string
	}{
		{PolicyFirst, 0, []answer{{"bob@example.com", DecisionApprove}}, ApprovalApproved},
		{PolicyFirst, 0, []answer{{"cy@example.com", DecisionReject}}, ApprovalRejected},
		{PolicyAll, 0, []answer{{"ann@example.com", DecisionApprove}, {"cy@example.com", DecisionApprove}}, ApprovalPending},
		{PolicyAll, 0, []answer{{"ann@example.com", DecisionApprove}, {"cy@example.com", DecisionApprove}, {"bob@example.com", DecisionApprove}}, ApprovalApproved},
		{PolicyAll, 0, []answer{{"ann@example.com", DecisionApprove}, {"cy@example.com", DecisionReject}}, ApprovalRejected},
		{PolicyQuorum, 2, []answer{{"ann@example.com", DecisionApprove}}, ApprovalPending},
		{PolicyQuorum, 2, []answer{{"ann@example.com", DecisionApprove}, {"cy@example.com", DecisionApprove}}, ApprovalApproved},
		{PolicyQuorum, 2, []answer{{"ann@example.com", DecisionReject}}, ApprovalPending},
		{PolicyQuorum, 2, []answer{{"ann@example.com", DecisionReject}, {"bob@example.com", DecisionReject}}, ApprovalRejected},
		{PolicySequential, 0, []answer{{"ann@example.com", DecisionApprove}, {"bob@example.com", DecisionApprove}}, ApprovalPending},
		{"quorum-requester", 2, []answer{{"ann@example.com", DecisionApprove}, {"bob@example.com", DecisionReject}}, ApprovalRejected},
		{PolicySequential, 0, []answer{{"ann@example.com", DecisionApprove}, {"bob@example.com", DecisionApprove}, {"cy@example.com", DecisionApprove}}, ApprovalApproved},
		{PolicySequential, 0, []answer{{"ann@example.com", DecisionReject}}, ApprovalRejected},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %d %v", c.policy, c.count, c.answers), func(t *testing.T) {
			a := &Approval{ApprovalID: "A", Approvers: three, Policy: c.policy, Count: c.count, Status: ApprovalPending, CardVersion: 2, CardHash: "h"}
			if c.policy == "quorum-requester" {
				// cy requested it, so cannot make the quorum.
				a.Policy, a.Requester = PolicyQuorum, "cy@example.com"
			}
			for i, ans := range c.answers {
				if r := a.Answer([]string{ans.who}, ApprovalAnswer{Actor: ans.who, At: int64(i + 1), Decision: ans.decision}); r != nil {
					t.Fatalf("answer %d refused: %s", i, r.Message)
				}
			}
			if a.Status != c.want {
				t.Errorf("status: got %s, want %s", a.Status, c.want)
			}
			if got := a.Answers[0]; got.CardVersion != 2 || got.CardHash != "h" {
				t.Errorf("answer card: got %d %q, want 2 \"h\"", got.CardVersion, got.CardHash)
			}
		})
	}
}

func TestApprovalRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		policy string
		before []string // who approved first
		ids    []string
		want   string
	}{
		{"not listed", PolicyAll, nil, []string{"eve@example.com"}, RefusedNotApprover},
		{"no identity", PolicyAll, nil, nil, RefusedNotApprover},
		{"requester", PolicyAll, nil, []string{"REQ@example.com"}, RefusedSelf},
		{"twice", PolicyAll, []string{"ann@example.com"}, []string{"Ann@Example.com"}, RefusedAnswered},
		{"out of turn", PolicySequential, nil, []string{"bob@example.com"}, RefusedNotYourTurn},
		{"decided", PolicyFirst, []string{"ann@example.com"}, []string{"bob@example.com"}, RefusedDecided},
		{"object id matches", PolicyAll, nil, []string{"00000000-0000-0000-0000-00000000000B"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &Approval{ApprovalID: "A", StepName: "Approve", Status: ApprovalPending, Policy: c.policy, Requester: "req@example.com",
				Approvers: []string{"ann@example.com", "bob@example.com", "req@example.com", "00000000-0000-0000-0000-00000000000b"}}
			for _, who := range c.before {
				if r := a.Answer([]string{who}, ApprovalAnswer{Decision: DecisionApprove}); r != nil {
					t.Fatalf("setup answer refused: %s", r.Message)
				}
			}
			n := len(a.Answers)
			r := a.Answer(c.ids, ApprovalAnswer{Decision: DecisionApprove})
			got := ""
			if r != nil {
				got = r.Reason
				if len(a.Answers) != n {
					t.Errorf("a refused answer was recorded")
				}
			}
			if got != c.want {
				t.Errorf("refusal: got %q, want %q", got, c.want)
			}
		})
	}
}

func TestApprovalUnsent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		policy  string
		sent    []string
		answers []ApprovalAnswer
		want    []string
	}{
		{"opened before cards were tracked", PolicyAll, nil, nil, nil},
		{"all sent", PolicyAll, []string{"ann@example.com", "BOB@example.com"}, nil, nil},
		{"one brought in", PolicyAll, []string{"ann@example.com"}, nil, []string{"bob@example.com"}},
		{"sequential, first one's turn", PolicySequential, []string{"ann@example.com"}, nil, nil},
		{"sequential, next one's turn", PolicySequential, []string{"ann@example.com"},
			[]ApprovalAnswer{{Approver: "ann@example.com", Decision: DecisionApprove}}, []string{"bob@example.com"}},
	} {
		a := &Approval{Approvers: []string{"ann@example.com", "bob@example.com"}, Policy: tc.policy, Status: ApprovalPending, Sent: tc.sent, Answers: tc.answers}
		if got := a.Unsent(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
