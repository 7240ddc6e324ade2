package boltstore_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/internal/storetest"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/execrecord"
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

// benchExecution is a finished run of a six-step approval workflow, the
// shape and size of the executions make run records: step configs with
// templates, four steps' condensed logs and ten events.
func benchExecution(org, workflowID string) *cardflow.Execution {
	type obj = map[string]any
	now := time.Now().UnixMilli()
	input := obj{"requester": "ann@example.com", "item": "Workstation", "amount": 4800.0}
	decision := obj{"source": "TEAMS", "decision": "approve", "comment": "Within budget"}
	e := &cardflow.Execution{
		WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: workflowID, WorkflowVersion: 2,
		OrganizationID: org, WorkspaceID: "ws-1", WorkflowCurrentState: "done", WorkflowTriggerType: cardflow.TriggerRequest,
		Status: cardflow.ExecSucceeded, WorkflowInputPayload: input, WorkflowOutputPayload: decision,
		CondensedLogs: map[string]cardflow.StepLog{
			"start":   {Input: input, Output: input, Status: cardflow.ExecSucceeded, StartedOn: now, FinishedOn: now},
			"check":   {Input: input, Output: obj{"next": "approve"}, Status: cardflow.ExecSucceeded, StartedOn: now, FinishedOn: now},
			"approve": {Input: obj{"requester": "ann@example.com", "item": "Workstation", "amount": 4800.0}, Output: decision, Status: cardflow.ExecSucceeded, StartedOn: now, FinishedOn: now},
			"done":    {Input: decision, Output: decision, Status: cardflow.ExecSucceeded, StartedOn: now, FinishedOn: now},
		},
		WorkflowDetails: cardflow.WorkflowDetails{
			WorkflowName: "Purchase request approval",
			WorkflowSteps: []cardflow.Step{
				{ID: "start", Name: "Request received", Type: "trigger", Config: obj{"kind": "REQUEST"}},
				{ID: "check", Name: "Amount check", Type: "condition", Config: obj{}},
				{ID: "approve", Name: "Manager approval", Type: "card", Config: obj{"card_id": cardflow.NewID(time.Now()), "timeout": "PT72H",
					"data": obj{"requester": "{{ input.requester }}", "item": "{{ input.item }}", "amount": "{{ input.amount }}"}}},
				{ID: "done", Name: "Approved", Type: "end", Config: obj{"status": "SUCCEEDED", "output": "{{ steps.approve.output }}"}},
				{ID: "auto", Name: "Auto-approved", Type: "end", Config: obj{"status": "SUCCEEDED"}},
				{ID: "expired", Name: "No answer", Type: "end", Config: obj{"status": "FAILED"}},
			},
			WorkflowConnections: []cardflow.Connection{
				{From: "start", To: "check"}, {From: "check", To: "approve", When: "input.amount > 1000"}, {From: "check", To: "auto"},
				{From: "approve", To: "done"}, {From: "approve", To: "expired", On: "timeout"},
			},
		},
		CreatedOn: now, ModifiedOn: now,
	}
	for i, ev := range []string{"ExecutionStarted", "StepStarted", "StepSucceeded", "StepStarted", "StepSucceeded", "StepStarted", "CardSent", "StepResumed", "StepSucceeded", "ExecutionSucceeded"} {
		e.WorkflowEventLog.Events = append(e.WorkflowEventLog.Events, cardflow.Event{At: now + int64(i), Type: ev, StepID: "approve", Step: "Manager approval"})
	}
	e.WorkflowEventLog.Total = len(e.WorkflowEventLog.Events)
	return e
}

// BenchmarkExecutions measures the store's share of getWorkflowExecutionById
// (GetExecutionJSON; GetExecution is the engine's read) and of a page of
// getOrganizationExecutions and getWorkflowExecutionHistory (20 of 40
// executions).
func BenchmarkExecutions(b *testing.B) {
	s, err := boltstore.Open(filepath.Join(b.TempDir(), "cardflow.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	w := &cardflow.Workflow{OrganizationID: "org-1", WorkflowName: "purchase approval"}
	if err := s.SaveWorkflowVersion(b.Context(), w); err != nil {
		b.Fatal(err)
	}
	var last *cardflow.Execution
	for range 40 {
		last = benchExecution("org-1", w.WorkflowID)
		if err := s.CreateExecution(b.Context(), last); err != nil {
			b.Fatal(err)
		}
	}
	page := cardflow.ListOptions[cardflow.ExecutionKey]{Limit: 20}
	for _, bc := range []struct {
		name string
		op   func() error
	}{
		{"GetExecution", func() error {
			_, err := s.GetExecution(b.Context(), "org-1", w.WorkflowID, last.WorkflowExecutionID)
			return err
		}},
		{"GetExecutionJSON", func() error {
			_, err := s.GetExecutionJSON(b.Context(), "org-1", w.WorkflowID, last.WorkflowExecutionID)
			return err
		}},
		{"ListExecutions", func() error { _, err := s.ListExecutions(b.Context(), "org-1", page); return err }},
		{"ListWorkflowExecutions", func() error { _, err := s.ListWorkflowExecutions(b.Context(), "org-1", w.WorkflowID, page); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.op(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestOlderLayoutsUpgraded opens store files written before executions
// were kept in parts: with the view and the engine's state in two buckets
// and list summaries beside them (format 1), with whole records holding
// state and revision, and with payloads that are not objects (no format).
// Open rewrites them into parts, so gets and lists show the executions
// recorded before, and drops the old buckets.
func TestOlderLayoutsUpgraded(t *testing.T) {
	for _, tc := range []struct {
		name string
		// plant writes the execution as that layout kept it.
		plant         func(tx *bolt.Tx, k []byte, e *cardflow.Execution) error
		format        string
		input, output string
	}{
		{"view and state", func(tx *bolt.Tx, k []byte, e *cardflow.Execution) error {
			view, _ := json.Marshal(e)
			state, _ := json.Marshal(e.State)
			return putAll(tx, map[string][]byte{"executions": view, "execution_states": state, "execution_summaries": []byte(`{}`)}, k)
		}, "1", `{"po":"4500001234"}`, ""},
		{"whole record", func(tx *bolt.Tx, k []byte, e *cardflow.Execution) error {
			record, _ := execrecord.Marshal(e)
			return putAll(tx, map[string][]byte{"executions": record}, k)
		}, "1", `{"po":"4500001234"}`, ""},
		{"payloads not objects", func(tx *bolt.Tx, k []byte, e *cardflow.Execution) error {
			var view map[string]json.RawMessage
			b, _ := json.Marshal(e)
			json.Unmarshal(b, &view)
			view["workflow_input_payload"], view["workflow_output_payload"] = json.RawMessage(`5`), json.RawMessage(`"done"`)
			b, _ = json.Marshal(view)
			state, _ := json.Marshal(e.State)
			return putAll(tx, map[string][]byte{"executions": b, "execution_states": state}, k)
		}, "", `{"value":5}`, `{"value":"done"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cardflow.db")
			s, err := boltstore.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			w := &cardflow.Workflow{OrganizationID: "org-1", WorkflowName: "purchase approval"}
			if err := s.SaveWorkflowVersion(t.Context(), w); err != nil {
				t.Fatal(err)
			}
			s.Close()
			e := benchExecution("org-1", w.WorkflowID)
			e.WorkflowInputPayload = map[string]any{"po": "4500001234"}
			e.Revision = 4
			e.State = cardflow.ExecutionState{StepID: "approve", Phase: cardflow.PhaseWaiting, ProcessID: "po-1", Outputs: map[string]any{"check": true}}
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error {
				if tc.format == "" {
					if err := tx.DeleteBucket([]byte("meta")); err != nil {
						return err
					}
				} else if err := tx.Bucket([]byte("meta")).Put([]byte("format"), []byte(tc.format)); err != nil {
					return err
				}
				k := []byte("org-1\x00" + w.WorkflowID + "\x00" + e.WorkflowExecutionID)
				for _, b := range []string{"execution_states", "execution_summaries"} {
					if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
						return err
					}
				}
				if err := tx.Bucket([]byte("org_executions")).Put([]byte("org-1\x00"+e.WorkflowExecutionID), []byte(w.WorkflowID)); err != nil {
					return err
				}
				if err := tx.Bucket([]byte("execution_revisions")).Put(k, []byte{0, 0, 0, 0, 0, 0, 0, 4}); err != nil {
					return err
				}
				return tc.plant(tx, k, e)
			})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()

			s, err = boltstore.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.GetExecution(t.Context(), "org-1", w.WorkflowID, e.WorkflowExecutionID)
			if err != nil {
				t.Fatal(err)
			}
			if tc.output == "" {
				tc.output = toJSON(e.WorkflowOutputPayload)
			}
			if in, out := toJSON(got.WorkflowInputPayload), toJSON(got.WorkflowOutputPayload); in != tc.input || out != tc.output {
				t.Errorf("payloads: got input %s and output %s, want %s and %s", in, out, tc.input, tc.output)
			}
			e.WorkflowInputPayload, e.WorkflowOutputPayload = got.WorkflowInputPayload, got.WorkflowOutputPayload
			gotJSON, _ := execrecord.Marshal(got)
			wantJSON, _ := execrecord.Marshal(e)
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("GetExecution after the upgrade:\ngot  %s\nwant %s", gotJSON, wantJSON)
			}
			for name, list := range map[string]func() (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error){
				"ListExecutions": func() (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error) {
					return s.ListExecutions(t.Context(), "org-1", cardflow.ListOptions[cardflow.ExecutionKey]{})
				},
				"ListWorkflowExecutions": func() (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error) {
					return s.ListWorkflowExecutions(t.Context(), "org-1", w.WorkflowID, cardflow.ListOptions[cardflow.ExecutionKey]{})
				},
			} {
				page, err := list()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if len(page.Items) != 1 {
					t.Fatalf("%s: got %d items, want 1", name, len(page.Items))
				}
				got := page.Items[0]
				if got.WorkflowExecutionID != e.WorkflowExecutionID || got.Status != e.Status || got.WorkflowDetails.WorkflowName != e.WorkflowDetails.WorkflowName || got.WorkflowEventLog.Total != e.WorkflowEventLog.Total {
					t.Errorf("%s: got %s %s %q with %d events, want %s %s %q with %d", name, got.WorkflowExecutionID, got.Status, got.WorkflowDetails.WorkflowName, got.WorkflowEventLog.Total,
						e.WorkflowExecutionID, e.Status, e.WorkflowDetails.WorkflowName, e.WorkflowEventLog.Total)
				}
			}
			s.Close()
			db, err = bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			db.View(func(tx *bolt.Tx) error {
				for _, b := range []string{"execution_states", "execution_summaries"} {
					if tx.Bucket([]byte(b)) != nil {
						t.Errorf("the retired bucket %s is still there", b)
					}
				}
				if got := string(tx.Bucket([]byte("meta")).Get([]byte("format"))); got != "2" {
					t.Errorf("got format %q, want 2", got)
				}
				return nil
			})
		})
	}
}

// putAll puts v at k in each named bucket.
func putAll(tx *bolt.Tx, values map[string][]byte, k []byte) error {
	for b, v := range values {
		if err := tx.Bucket([]byte(b)).Put(k, v); err != nil {
			return err
		}
	}
	return nil
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// BenchmarkGetLatestWorkflow finds the published version behind a newer
// draft, as a trigger of the sample approval does.
func BenchmarkGetLatestWorkflow(b *testing.B) {
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
			{ID: "approve", Name: "Ask approver", Type: "card", Config: map[string]any{"timeout": "48h", "data": map[string]any{"amount": "{{ input.amount }}"}}},
			{ID: "end", Name: "Done", Type: "end"},
		},
		WorkflowConnections: []cardflow.Connection{{From: "lookup", To: "approve"}, {From: "approve", To: "end"}},
	}
	for range 3 {
		if err := s.SaveWorkflowVersion(b.Context(), w); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.PublishWorkflow(b.Context(), "org-1", w.WorkflowID, 1, "bench", 1); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		got, err := s.GetLatestWorkflow(b.Context(), "org-1", w.WorkflowID)
		if err != nil || got.WorkflowVersion != 1 {
			b.Fatalf("got version %v, %v; want 1", got, err)
		}
	}
}
