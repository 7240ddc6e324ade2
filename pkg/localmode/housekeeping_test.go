package localmode_test

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/localmode"
)

// TestHousekeepingRunsOnATicker writes expired idempotency records, one
// before the stack starts and one after, and waits for housekeeping to
// delete both.
func TestHousekeepingRunsOnATicker(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(store, store, localmode.Config{Housekeeping: 20 * time.Millisecond, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	defer st.Close()
	expired := func(key string) {
		t.Helper()
		ex := &cardflow.Execution{WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: "wf-1", WorkflowVersion: 1,
			OrganizationID: "acme", Status: cardflow.ExecSucceeded, CreatedOn: 1000}
		p := &cardflow.Process{OrganizationID: "acme", ProcessID: ex.WorkflowExecutionID, WorkflowID: "wf-1", ExecutionID: ex.WorkflowExecutionID}
		idem := &cardflow.Idempotency{OrganizationID: "acme", Key: key, RequestHash: "h", WorkflowID: "wf-1", ExecutionID: ex.WorkflowExecutionID, ExpiresAt: 2}
		if err := store.StartExecution(t.Context(), ex, p, idem); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(key string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			_, err := store.GetIdempotency(t.Context(), "acme", key, 0)
			if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("idempotency record %s: got %v, want it deleted by housekeeping", key, err)
			}
		}
	}
	expired("before-start")
	if _, err := st.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	gone("before-start")
	expired("after-start")
	gone("after-start")
}
