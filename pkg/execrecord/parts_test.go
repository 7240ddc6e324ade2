package execrecord

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func partsExecution() *cardflow.Execution {
	return &cardflow.Execution{
		WorkflowExecutionID: "ex-1", WorkflowID: "wf-1", OrganizationID: "org-1", Status: cardflow.ExecRunning,
		WorkflowEventLog:     cardflow.EventLog{Events: []cardflow.Event{{At: 1, Type: cardflow.EventStarted}}, Total: 1},
		WorkflowInputPayload: map[string]any{"po": "4500001234"},
		WorkflowDetails:      cardflow.WorkflowDetails{WorkflowName: "approval", WorkflowSteps: []cardflow.Step{{ID: "a", Name: "A", Type: "transform"}}},
		CondensedLogs:        map[string]cardflow.StepLog{"a": {Input: nil, Output: "x", Status: cardflow.ExecSucceeded}, "w": {Status: cardflow.ExecWaiting}},
		State: cardflow.ExecutionState{StepID: "b", ProcessID: "p", Outputs: map[string]any{"a": "x", "n": nil},
			Integrations: map[string]any{"erp": map[string]any{"url": "https://erp"}}},
	}
}

func recordOf(t *testing.T, e *cardflow.Execution) string {
	t.Helper()
	b, err := Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// joinWrite reads back what a write stores, as a store does.
func joinWrite(t *testing.T, stored map[string][]byte, w *Write, revision int64) *cardflow.Execution {
	t.Helper()
	for _, p := range w.Parts {
		stored[p.Name] = p.Value
	}
	for _, name := range w.Gone {
		delete(stored, name)
	}
	var parts []Part
	for name, v := range stored {
		parts = append(parts, Part{Name: name, Value: v})
	}
	got, err := Join(w.Head, parts, revision)
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	return got
}

func TestSplitJoin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(e *cardflow.Execution)
	}{
		{"as is", func(*cardflow.Execution) {}},
		{"empty maps", func(e *cardflow.Execution) {
			e.CondensedLogs, e.State.Outputs = map[string]cardflow.StepLog{}, map[string]any{}
		}},
		{"nil maps", func(e *cardflow.Execution) { e.CondensedLogs, e.State.Outputs, e.State.Integrations = nil, nil, nil }},
		{"no input", func(e *cardflow.Execution) { e.WorkflowInputPayload = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := partsExecution()
			tc.change(e)
			e.Revision = 3
			w, err := Split(e)
			if err != nil {
				t.Fatal(err)
			}
			got := joinWrite(t, map[string][]byte{}, w, 3)
			if g, want := recordOf(t, got), recordOf(t, e); g != want {
				t.Errorf("joined:\ngot  %s\nwant %s", g, want)
			}
		})
	}
}

func TestSplitWritesWhatChanged(t *testing.T) {
	t.Parallel()
	e := partsExecution()
	stored := map[string][]byte{}
	w, err := Split(e)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(w.Parts), 5; got != want {
		t.Fatalf("first write: got %d parts, want %d (input, workflow and 3 steps)", got, want)
	}
	read := joinWrite(t, stored, w, 1)

	read.State.Outputs["b"] = map[string]any{"ok": true}
	read.CondensedLogs["b"] = cardflow.StepLog{Output: map[string]any{"ok": true}}
	delete(read.CondensedLogs, "w")
	w, err = Split(read)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Parts) != 1 || w.Parts[0].Name != PartStep+"b" || len(w.Gone) != 1 || w.Gone[0] != PartStep+"w" {
		t.Errorf("second write: got parts %v gone %v, want step/b written and step/w gone", names(w.Parts), w.Gone)
	}
	Wrote(read, w)
	if w, _ = Split(read); len(w.Parts)+len(w.Gone) != 0 {
		t.Errorf("write without change: got parts %v gone %v, want none", names(w.Parts), w.Gone)
	}
}

func names(parts []Part) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p.Name)
	}
	return out
}

func TestSplitCap(t *testing.T) {
	t.Parallel()
	e := partsExecution()
	big := strings.Repeat("x", 300<<10)
	e.State.Outputs = map[string]any{"a": big, "b": big, "c": big}
	w, err := Split(e)
	if err != nil {
		t.Fatalf("under the cap: %v", err)
	}
	Wrote(e, w)
	e.State.Outputs["d"] = big
	_, err = Split(e)
	want := "execution state would be 1.2 MB; an execution may hold at most 1 MB"
	if cardflow.ErrorCode(err) != cardflow.ETOOLARGE || cardflow.ErrorMessage(err) != want {
		t.Errorf("over the cap: got %v, want %s: %s", err, cardflow.ETOOLARGE, want)
	}
	// A write that does not grow the state passes, so an execution over
	// the cap (stored before it) can still end.
	delete(e.State.Outputs, "d")
	e.Status = cardflow.ExecFailed
	if _, err := Split(e); err != nil {
		t.Errorf("write that does not grow: got %v, want none", err)
	}
}

func TestJoinUnreadablePart(t *testing.T) {
	t.Parallel()
	e := partsExecution()
	w, err := Split(e)
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000)
	parts := []Part{{Name: PartStep + "a", Value: []byte(`{"output":` + deep + `}`)}}
	for _, p := range w.Parts {
		if p.Name != PartStep+"a" {
			parts = append(parts, p)
		}
	}
	_, err = Join(w.Head, parts, 2)
	var ue *cardflow.UnreadableError
	if !errors.As(err, &ue) || ue.Head == nil {
		t.Fatalf("got %v, want an UnreadableError with a head", err)
	}
	rw, err := Split(ue.Head)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(rw.Parts); len(got) != 1 || got[0] != PartStep+"a" {
		t.Errorf("write of the head: got parts %v, want only the pruned step/a", got)
	}
	var out any
	if err := json.Unmarshal(rw.Parts[0].Value, &out); err != nil {
		t.Errorf("pruned part: %v", err)
	}
}

// JSON writes what json.Marshal gives of the joined execution,
// whatever the values hold: characters json.Marshal escapes, no logs, no
// input, a modifier.
func TestExecutionJSONIsMarshal(t *testing.T) {
	t.Parallel()
	by := `ann "<&>" ` + "\u2028 ü"
	for _, tc := range []struct {
		name   string
		change func(*cardflow.Execution)
	}{
		{"as built", func(*cardflow.Execution) {}},
		{"escaped characters everywhere", func(e *cardflow.Execution) {
			e.WorkflowDetails.WorkflowName = `<b>"x"</b> & ` + "\u2029"
			e.WorkflowInputPayload = map[string]any{"html": "<script>&", "sep": "\u2028", "n": 1.5}
			e.CondensedLogs["<a&b>"] = cardflow.StepLog{Output: map[string]any{"x": "</x>"}}
			e.WorkflowOutputPayload = map[string]any{"y": "a\tb"}
			e.WorkflowEventLog.Events[0].Message = "<&>"
			e.ModifiedBy = &by
		}},
		{"no logs, no input, no output", func(e *cardflow.Execution) {
			e.CondensedLogs, e.WorkflowInputPayload, e.WorkflowOutputPayload = nil, nil, nil
			e.State.Outputs = nil
		}},
		{"empty logs", func(e *cardflow.Execution) { e.CondensedLogs = map[string]cardflow.StepLog{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := partsExecution()
			tc.change(e)
			w, err := Split(e)
			if err != nil {
				t.Fatal(err)
			}
			got, err := JSON(w.Head, w.Parts)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	t.Run("an input part that is not JSON", func(t *testing.T) {
		w, err := Split(partsExecution())
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range w.Parts {
			if p.Name == PartInput {
				w.Parts[i].Value = []byte(`{"po": `)
			}
		}
		if _, err := JSON(w.Head, w.Parts); !errors.Is(err, cardflow.ErrUnreadable) {
			t.Errorf("got %v, want an unreadable execution", err)
		}
	})
}
