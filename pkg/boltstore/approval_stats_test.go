package boltstore_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestApprovalStatsReads checks that a statistics read is one read
// transaction, whatever the days it covers.
func TestApprovalStatsReads(t *testing.T) {
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	a := &cardflow.Approval{ApprovalID: cardflow.ApprovalIDOf(cardflow.NewID(time.Now()), 1), OrganizationID: "org-a", WorkflowID: "WF1",
		Approvers: []string{"ann@example.com"}, Policy: cardflow.PolicyFirst, Status: cardflow.ApprovalPending, CreatedOn: 1700000000000}
	if err := s.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	a.Status, a.DecidedOn = cardflow.ApprovalApproved, 1700000001000
	if err := s.PutApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	end := time.UnixMilli(1700000001000)
	for _, n := range []int{1, 30, cardflow.MaxStatsDays} {
		before := boltstore.ReadTransactions(s)
		got, err := s.ApprovalStats(ctx, "org-a", "", cardflow.StatsDays(end.Add(-time.Duration(n-1)*24*time.Hour), end))
		if err != nil || len(got) != 1 {
			t.Fatalf("%d days: got %+v, %v; want the day of the decision", n, got, err)
		}
		if reads := boltstore.ReadTransactions(s) - before; reads != 1 {
			t.Errorf("%d days: got %d read transactions, want 1", n, reads)
		}
	}
}
