package boltstore_test

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestHousekeepingIndexesBuiltForOlderFiles opens a file written before the
// housekeeping indexes existed: Open builds them from the records.
func TestHousekeepingIndexesBuiltForOlderFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cardflow.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ex := &cardflow.Execution{WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: "wf-1", WorkflowVersion: 1,
		OrganizationID: "acme", Status: cardflow.ExecWaiting}
	p := &cardflow.Process{OrganizationID: "acme", ProcessID: "PO-1", WorkflowID: "wf-1", ExecutionID: ex.WorkflowExecutionID}
	idem := &cardflow.Idempotency{OrganizationID: "acme", Key: "k1", RequestHash: "h", WorkflowID: "wf-1", ExecutionID: ex.WorkflowExecutionID, ExpiresAt: 1}
	if err := s.StartExecution(t.Context(), ex, p, idem); err != nil {
		t.Fatal(err)
	}
	p.Wait = &cardflow.Wait{Seq: 1, StepID: "approve", Deadline: 1000}
	if err := s.PutProcess(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	s.Close()

	dropBuckets(t, path, "process_due", "idempotency_expiry")

	s, err = boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waits, err := s.ListOverdueWaits(t.Context(), 2000, 10)
	if err != nil || len(waits) != 1 || waits[0].ProcessID != "PO-1" {
		t.Errorf("overdue waits after reopening: got %v, %v, want PO-1", waits, err)
	}
	if n, err := s.DeleteExpiredIdempotency(t.Context(), 2000, 10); err != nil || n != 1 {
		t.Errorf("expired keys deleted after reopening: got %d, %v, want 1", n, err)
	}
}

// dropBuckets deletes buckets from the closed store file at path, as a file
// written by a version before them would lack them.
func dropBuckets(t *testing.T, path string, names ...string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range names {
			if err := tx.DeleteBucket([]byte(b)); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
}
