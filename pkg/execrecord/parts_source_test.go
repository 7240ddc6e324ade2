package execrecord

import (
	"math"
	"reflect"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Split reuses the digest of a part whose values are the ones last stored,
// and encodes the others: what it writes is what it writes when it
// encodes every part.
func TestSplitReusesUnchangedParts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(e *cardflow.Execution)
		want   []string // parts written
	}{
		{"nothing", func(*cardflow.Execution) {}, nil},
		{"status and log only", func(e *cardflow.Execution) {
			e.Status = cardflow.ExecWaiting
			e.WorkflowEventLog.Events = append(e.WorkflowEventLog.Events, cardflow.Event{At: 2, Type: cardflow.EventWaiting})
			e.WorkflowEventLog.Total++
		}, nil},
		{"an output replaced", func(e *cardflow.Execution) { e.State.Outputs["a"] = map[string]any{"ok": true} }, []string{"step/a"}},
		{"an output replaced by an equal one", func(e *cardflow.Execution) { e.State.Outputs["a"] = "x" }, nil},
		{"a new step", func(e *cardflow.Execution) {
			e.State.Outputs["c"] = []any{1.0}
			e.CondensedLogs["c"] = cardflow.StepLog{Output: []any{1.0}, Status: cardflow.ExecSucceeded, StartedOn: 3}
		}, []string{"step/c"}},
		{"a log's times", func(e *cardflow.Execution) {
			l := e.CondensedLogs["w"]
			l.FinishedOn = 9
			e.CondensedLogs["w"] = l
		}, []string{"step/w"}},
		{"zero replaced by minus zero", func(e *cardflow.Execution) { e.State.Outputs["n"] = negZero() }, []string{"step/n"}},
		{"an equal input", func(e *cardflow.Execution) { e.WorkflowInputPayload = map[string]any{"po": "4500001234"} }, nil},
		{"another input", func(e *cardflow.Execution) { e.WorkflowInputPayload = map[string]any{"po": "4500009999"} }, []string{"input"}},
		{"integrations", func(e *cardflow.Execution) { e.State.Integrations = map[string]any{} }, []string{"workflow"}},
		{"a step gone", func(e *cardflow.Execution) { delete(e.State.Outputs, "a"); delete(e.CondensedLogs, "a") }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := partsExecution()
			e.State.Outputs["n"] = 0.0
			w, err := Split(e)
			if err != nil {
				t.Fatal(err)
			}
			stored := map[string][]byte{}
			for _, read := range []bool{false, true} {
				e := e
				if read {
					// As read back from the store, not as written.
					e = joinWrite(t, stored, w, 1)
				} else {
					joinWrite(t, stored, w, 1)
					Wrote(e, w)
				}
				tc.change(e)
				got, err := Split(e)
				if err != nil {
					t.Fatal(err)
				}
				if names := names(got.Parts); !reflect.DeepEqual(names, tc.want) {
					t.Errorf("read %v: got parts %v written, want %v", read, names, tc.want)
				}
				// Every part encoded again gives the same write.
				whole := *e
				st := *storedOf(e)
				st.known = nil
				whole.Stored = &st
				want, err := Split(&whole)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Parts, want.Parts) || !reflect.DeepEqual(got.Gone, want.Gone) ||
					got.Size != want.Size || string(got.Head) != string(want.Head) || !reflect.DeepEqual(got.stored.sums, want.stored.sums) {
					t.Errorf("read %v: got parts %v gone %v size %d, want parts %v gone %v size %d",
						read, names(got.Parts), got.Gone, got.Size, names(want.Parts), want.Gone, want.Size)
				}
			}
		})
	}
}

// negZero is -0, which encodes apart from 0 though it equals it.
func negZero() float64 { return math.Copysign(0, -1) }
