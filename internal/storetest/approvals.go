package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// approval returns a pending approval of org in an execution of its own.
func approval(org, workflowID string, created int64, approvers ...string) *cardflow.Approval {
	ex := newID()
	return &cardflow.Approval{
		ApprovalID: cardflow.ApprovalIDOf(ex, 1), OrganizationID: org, WorkflowID: workflowID, ExecutionID: ex,
		ProcessID: "PO-" + ex, StepID: "approve", StepName: "Approve", Wait: 1,
		CardID: "C1", CardVersion: 2, CardHash: "abc", CardPayload: map[string]any{"type": "AdaptiveCard", "body": []any{}},
		Approvers: approvers, Policy: cardflow.PolicyAll, Status: cardflow.ApprovalPending, CreatedOn: created,
		Answers: []cardflow.ApprovalAnswer{},
	}
}

func testApprovals(t *testing.T, e env) {
	t.Run("CreateGetPut", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		a := approval(org, "WF1", 1700000000000, "ann@example.com", "bob@example.com")
		mustOK(t, "create", s.CreateApproval(t.Context(), a))
		if a.Revision != 1 {
			t.Errorf("revision after create: got %d, want 1", a.Revision)
		}
		wantCode(t, "create twice", s.CreateApproval(t.Context(), approvalCopy(a)), cardflow.ECONFLICT)
		got, err := s.GetApproval(t.Context(), org, a.ApprovalID)
		mustOK(t, "get", err)
		sameJSON(t, "approval", got, a)
		_, err = s.GetApproval(t.Context(), newOrg(), a.ApprovalID)
		wantCode(t, "get from another organization", err, cardflow.ENOTFOUND)

		stale := approvalCopy(got)
		got.Answers = append(got.Answers, cardflow.ApprovalAnswer{Approver: "ann@example.com", Actor: "ann@example.com", At: 1, Decision: cardflow.DecisionApprove, Channel: cardflow.ChannelAPI})
		// The timers' state is kept as the step's ticks change it.
		got.Reminders, got.RemindersSent, got.Sent = []int64{1700000100000, 1700000200000}, 1, []string{"ann@example.com", "bob@example.com"}
		got.Escalation = &cardflow.ApprovalEscalation{At: 1700000300000, To: []string{"lead@example.com"}, Mode: cardflow.EscalateReplace, Done: true}
		// The approval's own audit is kept with it.
		got.Reassignments = []cardflow.ApprovalReassignment{{From: "bob@example.com", To: "cy@example.com", Actor: "bob@example.com", At: 2}}
		got.Refusals, got.RefusalsUnlisted = []cardflow.RefusalCount{{Actor: "eve@example.com", Reason: cardflow.RefusedNotApprover, Count: 210, First: 3, Last: 4}}, 7
		got.Override = &cardflow.ApprovalOverride{Actor: "admin", At: 5, Decision: cardflow.DecisionReject, Reason: "frozen"}
		mustOK(t, "put", s.PutApproval(t.Context(), got))
		if got.Revision != 2 {
			t.Errorf("revision after put: got %d, want 2", got.Revision)
		}
		wantCode(t, "put at a stale revision", s.PutApproval(t.Context(), stale), cardflow.ECONFLICT)
		other := approvalCopy(got)
		other.OrganizationID = newOrg()
		wantCode(t, "put into another organization", s.PutApproval(t.Context(), other), cardflow.ENOTFOUND)
		again, err := s.GetApproval(t.Context(), org, a.ApprovalID)
		mustOK(t, "get after put", err)
		sameJSON(t, "approval after put", again, got)
	})

	t.Run("Pending", func(t *testing.T) {
		s := e.store(t)
		org, otherOrg := newOrg(), newOrg()
		var all []*cardflow.Approval
		for i := range 7 {
			approvers := []string{"ann@example.com"}
			if i%2 == 0 {
				approvers = append(approvers, "Bob@Example.com")
			}
			wf := "WF1"
			if i%3 == 0 {
				wf = "WF2"
			}
			a := approval(org, wf, int64(1700000000000+i*1000), approvers...)
			mustOK(t, "create", s.CreateApproval(t.Context(), a))
			all = append(all, a)
		}
		mustOK(t, "create in another organization", s.CreateApproval(t.Context(), approval(otherOrg, "WF1", 1, "bob@example.com")))
		// A decided approval leaves the list.
		decided := all[3]
		decided.Status = cardflow.ApprovalApproved
		mustOK(t, "decide", s.PutApproval(t.Context(), decided))

		// By id descending: ids start with their execution's ULID, so
		// newest first (ids made in one millisecond in any order).
		byID := func(idx ...int) []string {
			out := []string{}
			for _, i := range idx {
				out = append(out, all[i].ApprovalID)
			}
			slices.Sort(out)
			slices.Reverse(out)
			return out
		}
		want := byID(0, 1, 2, 4, 5, 6)
		keyOf := func(a *cardflow.Approval) cardflow.ApprovalKey {
			return cardflow.ApprovalKey{OrganizationID: org, ApprovalID: a.ApprovalID}
		}
		ids := func(items []*cardflow.Approval) []string {
			out := []string{}
			for _, a := range items {
				out = append(out, a.ApprovalID)
			}
			return out
		}
		for _, limit := range []int{1, 2, 6, 30} {
			got := walk(t, len(want), limit, func(opt cardflow.ListOptions[cardflow.ApprovalKey]) (cardflow.Page[*cardflow.Approval, cardflow.ApprovalKey], error) {
				return s.ListPendingApprovals(t.Context(), org, cardflow.ApprovalFilter{}, opt)
			}, keyOf)
			sameJSON(t, fmt.Sprintf("pending ids at limit %d", limit), ids(got), want)
		}

		cases := []struct {
			name   string
			filter cardflow.ApprovalFilter
			want   []int
		}{
			{"approver, any case", cardflow.ApprovalFilter{Approver: "BOB@example.com"}, []int{6, 4, 2, 0}},
			{"workflow", cardflow.ApprovalFilter{WorkflowID: "WF2"}, []int{6, 0}},
			{"older than", cardflow.ApprovalFilter{CreatedBefore: 1700000002000}, []int{1, 0}},
			{"all three", cardflow.ApprovalFilter{Approver: "bob@example.com", WorkflowID: "WF1", CreatedBefore: 1700000005000}, []int{4, 2}},
			{"nobody", cardflow.ApprovalFilter{Approver: "eve@example.com"}, nil},
		}
		for _, c := range cases {
			want := byID(c.want...)
			got := walk(t, len(want), 1, func(opt cardflow.ListOptions[cardflow.ApprovalKey]) (cardflow.Page[*cardflow.Approval, cardflow.ApprovalKey], error) {
				return s.ListPendingApprovals(t.Context(), org, c.filter, opt)
			}, keyOf)
			sameJSON(t, c.name, ids(got), want)
		}
	})

	t.Run("CancelWithExecution", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		open, decided := approval(org, "WF1", 1700000000000, "ann@example.com"), approval(org, "WF1", 1700000001000, "ann@example.com")
		open.TriggeredBy, open.ForbidSelf = "bob@example.com", true
		mustOK(t, "create", s.CreateApproval(t.Context(), open))
		decided.Status = cardflow.ApprovalApproved
		mustOK(t, "create decided", s.CreateApproval(t.Context(), decided))
		by := "carl"
		for _, a := range []*cardflow.Approval{open, decided} {
			ex := &cardflow.Execution{OrganizationID: org, WorkflowID: "WF1", WorkflowExecutionID: a.ExecutionID, Status: cardflow.ExecCancelled, ModifiedBy: &by}
			mustOK(t, "cancel", cardflow.CancelApproval(t.Context(), s, nil, ex, a.Wait, time.UnixMilli(1700000009000)))
		}
		got, err := s.GetApproval(t.Context(), org, open.ApprovalID)
		mustOK(t, "get", err)
		if got.Status != cardflow.ApprovalCancelled || got.DecidedOn != 1700000009000 || got.DecidedBy != "carl" || got.TriggeredBy != "bob@example.com" || !got.ForbidSelf {
			t.Errorf("cancelled: got %+v, want CANCELLED by carl, asked by bob", got)
		}
		got, err = s.GetApproval(t.Context(), org, decided.ApprovalID)
		mustOK(t, "get decided", err)
		if got.Status != cardflow.ApprovalApproved {
			t.Errorf("decided: got %s, want it left APPROVED", got.Status)
		}
		page, err := s.ListPendingApprovals(t.Context(), org, cardflow.ApprovalFilter{}, cardflow.ListOptions[cardflow.ApprovalKey]{})
		mustOK(t, "pending", err)
		if len(page.Items) != 0 {
			t.Errorf("pending: got %d, want none once cancelled", len(page.Items))
		}
	})
}

func approvalCopy(a *cardflow.Approval) *cardflow.Approval {
	c := *a
	c.Answers = append([]cardflow.ApprovalAnswer{}, a.Answers...)
	return &c
}
