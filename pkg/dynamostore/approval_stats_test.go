package dynamostore_test

import (
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestApprovalStatsRequests counts the requests that keep and read the
// approval statistics: a decision is one transaction with its aggregates,
// and a read is one BatchGetItem per 100 days, never a Scan or a Query.
func TestApprovalStatsRequests(t *testing.T) {
	counter := &requestCounter{counts: map[string]int{}}
	s := newStore(t, counter.clientOption)
	ctx := t.Context()
	org := "org-" + cardflow.NewID(time.Now())
	ex := cardflow.NewID(time.Now())
	a := &cardflow.Approval{ApprovalID: cardflow.ApprovalIDOf(ex, 1), OrganizationID: org, WorkflowID: "WF1", ExecutionID: ex,
		Approvers: []string{"ann@example.com"}, Policy: cardflow.PolicyFirst, Status: cardflow.ApprovalPending, CreatedOn: 1700000000000}
	if err := s.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	counter.take()
	days := func(n int) []string {
		return cardflow.StatsDays(time.UnixMilli(1700000000000).Add(-time.Duration(n-1)*24*time.Hour), time.UnixMilli(1700000000000))
	}
	steps := []struct {
		name string
		do   func() error
		want map[string]int
	}{
		{"an answer that does not decide", func() error {
			a.Answers = append(a.Answers, cardflow.ApprovalAnswer{Approver: "ann@example.com", At: 1700000001000, Decision: cardflow.DecisionApprove})
			return s.PutApproval(ctx, a)
		}, map[string]int{"PutItem": 1}},
		{"the decision", func() error {
			a.Status, a.DecidedOn = cardflow.ApprovalApproved, 1700000001000
			return s.PutApproval(ctx, a)
		}, map[string]int{"TransactWriteItems": 1}},
		{"a decided approval written again", func() error {
			a.Sent = []string{"ann@example.com"}
			return s.PutApproval(ctx, a)
		}, map[string]int{"TransactWriteItems": 1, "PutItem": 1}},
		{"stats of 30 days", func() error {
			_, err := s.ApprovalStats(ctx, org, "", days(30))
			return err
		}, map[string]int{"BatchGetItem": 1}},
		{"stats of a workflow, 366 days", func() error {
			_, err := s.ApprovalStats(ctx, org, "WF1", days(366))
			return err
		}, map[string]int{"BatchGetItem": 4}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := format(counter.take()); got != format(st.want) {
			t.Errorf("%s: got requests %s, want %s", st.name, got, format(st.want))
		}
	}
	got, err := s.ApprovalStats(ctx, org, "WF1", days(1))
	if err != nil || len(got) != 1 || got[0].Counts[cardflow.ApprovalApproved] != 1 {
		t.Errorf("stats after the decision: got %+v, %v; want one approved", got, err)
	}
}
