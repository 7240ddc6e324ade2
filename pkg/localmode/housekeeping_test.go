package localmode_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/localmode"
)

// TestHousekeepingRunsOnATicker writes expired idempotency records, one
// before the stack starts and one after, and waits for housekeeping to
// delete both.
func TestHousekeepingRunsOnATicker(t *testing.T) {
	t.Parallel()
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
		testenv.WaitFor(t, "housekeeping to delete idempotency record "+key, func() bool {
			_, err := store.GetIdempotency(t.Context(), "acme", key, 0)
			return cardflow.ErrorCode(err) == cardflow.ENOTFOUND
		})
	}
	expired("before-start")
	if _, err := st.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	gone("before-start")
	expired("after-start")
	gone("after-start")
}

// TestHousekeepingSkipsUnreadableRecords plants, as raw bytes in the store
// file, a process record and an execution that do not decode, both due for
// housekeeping in one organization. Housekeeping logs them by their ids,
// skips them, and does its work for another organization all the same.
func TestHousekeepingSkipsUnreadableRecords(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cardflow.db")
	store, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// start stores a finished execution with a process record as change
	// makes it.
	start := func(org, pid string, change func(p *cardflow.Process)) *cardflow.Execution {
		t.Helper()
		ex := &cardflow.Execution{WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: "wf-1", WorkflowVersion: 1,
			OrganizationID: org, Status: cardflow.ExecSucceeded, CreatedOn: 1000, State: cardflow.ExecutionState{ProcessID: pid}}
		p := &cardflow.Process{OrganizationID: org, ProcessID: pid, WorkflowID: "wf-1", ExecutionID: ex.WorkflowExecutionID}
		var idem *cardflow.Idempotency
		if pid == "PO-keyed" {
			idem = &cardflow.Idempotency{OrganizationID: org, Key: "order-1", RequestHash: "h", WorkflowID: "wf-1", ExecutionID: ex.WorkflowExecutionID, ExpiresAt: 2}
		}
		if err := store.StartExecution(t.Context(), ex, p, idem); err != nil {
			t.Fatal(err)
		}
		change(p)
		if err := store.PutProcess(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		return ex
	}
	overdue := func(p *cardflow.Process) {
		p.Waits, p.Wait = 1, &cardflow.Wait{Seq: 1, StepID: "approve", OpenedOn: 1, Deadline: 1000}
	}
	start("acme", "PO-bad-record", overdue)
	badExecution := start("acme", "PO-bad-execution", overdue)
	start("globex", "PO-done", overdue)
	start("globex", "PO-early", func(p *cardflow.Process) {
		p.Early = &cardflow.Resume{Source: cardflow.SourceSAP, Payload: map[string]any{"ok": true}, Actor: "sap", ReceivedOn: 1000}
	})
	start("globex", "PO-expired", func(p *cardflow.Process) { p.Closed, p.ExpiresAt = true, 2 })
	start("globex", "PO-keyed", func(p *cardflow.Process) { p.Closed, p.ExpiresAt = true, time.Now().Add(time.Hour).Unix() })
	store.Close()

	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte("processes")).Put([]byte("acme\x00PO-bad-record"), []byte(`{"organization_id": "acme", "secret": `)); err != nil {
			return err
		}
		return tx.Bucket([]byte("executions")).Put([]byte("acme\x00wf-1\x00"+badExecution.WorkflowExecutionID), []byte(`{"status": 7, "secret": "x"}`))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	if store, err = boltstore.Open(path, boltstore.WithLogger(log)); err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(store, store, localmode.Config{Log: log})
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	defer st.Close()
	rep, err := st.Service.Housekeep(t.Context())
	if want := (app.HousekeepReport{ProcessesClosed: 1, EarlyResumesDropped: 1, ProcessesDeleted: 1, IdempotencyDeleted: 1}); err != nil || rep != want {
		t.Errorf("housekeeping: got %+v, %v, want %+v", rep, err, want)
	}
	for _, want := range []string{
		`msg="housekeeping skips a process record that cannot be read" organization=acme process_id=PO-bad-record`,
		`msg="housekeeping skips a wait whose execution cannot be read" organization=acme workflow=wf-1 execution=` + badExecution.WorkflowExecutionID,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log: got %q, want %q", logs.String(), want)
		}
	}
	if strings.Contains(logs.String(), "secret") {
		t.Errorf("log: got %q, want nothing of the records' content", logs.String())
	}
}
