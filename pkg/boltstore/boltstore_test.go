package boltstore_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) cardflow.Store {
		s, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	})
}

func TestOpenFileInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "cardflow.db")
	first, err := boltstore.Open(path)
	if err != nil {
		t.Fatalf("first Open: %v", err)
	}
	defer first.Close()

	// bbolt takes an flock, which a second open file conflicts with even in
	// the same process, so this stands in for a second cardflow process.
	start := time.Now()
	second, err := boltstore.Open(path, boltstore.WithLockTimeout(50*time.Millisecond))
	if err == nil {
		second.Close()
		t.Fatal("second Open: got no error, want UNAVAILABLE")
	}
	if got := cardflow.ErrorCode(err); got != cardflow.EUNAVAILABLE {
		t.Errorf("second Open: got code %q (%v), want %q", got, err, cardflow.EUNAVAILABLE)
	}
	if msg := cardflow.ErrorMessage(err); !strings.Contains(msg, "in use by another process") || !strings.Contains(msg, path) {
		t.Errorf("second Open: got message %q, want it to name %s and say it is in use by another process", msg, path)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("second Open: waited %v, want about the 50ms lock timeout", waited)
	}

	if err := first.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	third, err := boltstore.Open(path)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	third.Close()
}

func TestReopenKeepsRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cardflow.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	w := &cardflow.Workflow{OrganizationID: "org-1", WorkflowName: "kept"}
	if err := s.SaveWorkflowVersion(t.Context(), w); err != nil {
		t.Fatalf("SaveWorkflowVersion: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s, err = boltstore.Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	got, err := s.GetWorkflow(t.Context(), "org-1", w.WorkflowID, 1)
	if err != nil {
		t.Fatalf("GetWorkflow after reopen: %v", err)
	}
	if got.WorkflowName != "kept" {
		t.Errorf("workflow after reopen: got name %q, want %q", got.WorkflowName, "kept")
	}
}

// BenchmarkGetWorkflow measures the store's share of a getWorkflowById round
// trip (target: well under 50µs).
func BenchmarkGetWorkflow(b *testing.B) {
	s, err := boltstore.Open(filepath.Join(b.TempDir(), "cardflow.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	w := &cardflow.Workflow{
		OrganizationID: "org-1",
		WorkflowName:   "purchase approval",
		WorkflowSteps: []cardflow.Step{
			{ID: "lookup", Name: "Look up order", Type: "erp", Config: map[string]any{"entity": "PurchaseOrder"}},
			{ID: "approve", Name: "Ask approver", Type: "card", Config: map[string]any{"timeout": "48h"}},
			{ID: "end", Name: "Done", Type: "end"},
		},
		WorkflowConnections: []cardflow.Connection{{From: "lookup", To: "approve"}, {From: "approve", To: "end"}},
		WorkflowSchema:      map[string]any{"type": "object", "required": []any{"order_id"}},
	}
	if err := s.SaveWorkflowVersion(b.Context(), w); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.GetWorkflow(b.Context(), "org-1", w.WorkflowID, 1); err != nil {
			b.Fatal(err)
		}
	}
}
