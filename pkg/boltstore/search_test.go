package boltstore_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/storetest"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestSearchIndexBuiltOnOpen opens a file whose executions were written
// before searches existed (its search buckets removed) and finds them.
func TestSearchIndexBuiltOnOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cardflow.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	wf := &cardflow.Workflow{OrganizationID: "acme", WorkflowName: "old"}
	if err := s.SaveWorkflowVersion(ctx, wf); err != nil {
		t.Fatal(err)
	}
	for i, status := range []string{cardflow.ExecFailed, cardflow.ExecSucceeded, cardflow.ExecFailed} {
		ex := &cardflow.Execution{OrganizationID: "acme", WorkflowID: wf.WorkflowID, WorkflowVersion: 1, WorkflowExecutionID: cardflow.NewID(time.Now()),
			Status: status, CreatedOn: int64(1000 + i), State: cardflow.ExecutionState{ProcessID: "PO-1"}}
		if err := s.CreateExecution(ctx, ex); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	dropBuckets(t, path, "execution_search", "execution_search_of")

	s, err = boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		f    cardflow.ExecutionFilter
		want int
	}{
		{cardflow.ExecutionFilter{Status: cardflow.ExecFailed}, 2},
		{cardflow.ExecutionFilter{ProcessID: "PO-1"}, 3},
		{cardflow.ExecutionFilter{WorkflowID: wf.WorkflowID, Status: cardflow.ExecSucceeded}, 1},
	} {
		page, err := s.SearchExecutions(ctx, "acme", tc.f, cardflow.ListOptions[cardflow.SearchKey]{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != tc.want {
			t.Errorf("search %+v after reopening: got %d executions, want %d", tc.f, len(page.Items), tc.want)
		}
	}
}

// BenchmarkSearch is the store's share of a searchExecutions page of 20
// over 1,000 executions of one organization.
func BenchmarkSearch(b *testing.B) {
	s, err := boltstore.Open(filepath.Join(b.TempDir(), "cardflow.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.BenchSearch(b, s, func() {}, func(*testing.B) {})
}
