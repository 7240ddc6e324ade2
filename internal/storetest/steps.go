package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/execrecord"
)

// Sizes of the long execution of ManySteps and MeasureSteps: a 60 KB input
// and 190 steps, as the workflow that showed writes growing with the
// steps before them had.
const (
	LongInputBytes = 60 << 10
	LongSteps      = 190
	// longEvents is how many events the long execution keeps, as the
	// engine keeps its last 200.
	longEvents = 200
)

// longExecution returns an execution with a 60 KB input and no steps run.
func longExecution(org, workflowID string) *cardflow.Execution {
	ex := execution(org, workflowID)
	ex.Status = cardflow.ExecRunning
	ex.WorkflowInputPayload = map[string]any{"document": strings.Repeat("a", LongInputBytes)}
	ex.CondensedLogs, ex.State.Outputs = map[string]cardflow.StepLog{}, map[string]any{}
	ex.WorkflowDetails.WorkflowSteps = []cardflow.Step{{ID: "start", Name: "Start", Type: "trigger"}}
	return ex
}

// finishStep changes ex as the engine does when step i finishes: its
// output and log, two events (the log keeping its last 200), the current
// step.
func finishStep(ex *cardflow.Execution, i int) {
	id := fmt.Sprintf("step%03d", i)
	out := map[string]any{"index": i, "note": fmt.Sprintf("checked line %d of the order", i)}
	ex.State.Outputs[id] = out
	ex.CondensedLogs[id] = cardflow.StepLog{Input: map[string]any{"line": i}, Output: out, Status: cardflow.ExecSucceeded,
		StartedOn: 1700000000000 + int64(i), FinishedOn: 1700000000001 + int64(i)}
	log := &ex.WorkflowEventLog
	for _, typ := range []string{cardflow.EventStepStarted, cardflow.EventStepFinished} {
		log.Events = append(log.Events, cardflow.Event{At: 1700000000000 + int64(i), Type: typ, StepID: id, Step: "Step " + id})
		log.Total++
	}
	if len(log.Events) > longEvents {
		log.Events = append(log.Events[:0:0], log.Events[len(log.Events)-longEvents:]...)
	}
	ex.State.StepID, ex.State.StepsRun = fmt.Sprintf("step%03d", i+1), i
	ex.WorkflowCurrentState = "Step " + ex.State.StepID
	ex.ModifiedOn = 1700000000002 + int64(i)
}

func record(t *testing.T, ex *cardflow.Execution) string {
	t.Helper()
	b, err := execrecord.Marshal(ex)
	mustOK(t, "encode", err)
	return string(b)
}

// testManySteps writes an execution one step at a time, as the engine
// does, partly from what it read back: every read gives back exactly what
// was written, revisions still guard writes, and another organization
// still finds nothing.
func testManySteps(t *testing.T, e env) {
	s := e.store(t)
	ctx := t.Context()
	org := newOrg()
	wf := workflows.create(t, s, org, 1)
	ex := longExecution(org, wf)
	mustOK(t, "start", s.StartExecution(ctx, ex, process(ex, "PO-long-"+ex.WorkflowExecutionID), nil))
	for i := 1; i <= LongSteps; i++ {
		if i%50 == 0 {
			// Go on from a read, as the next Advance of the engine does.
			got, err := s.GetExecution(ctx, org, wf, ex.WorkflowExecutionID)
			mustOK(t, "get", err)
			if g, w := record(t, got), record(t, ex); g != w {
				t.Fatalf("after step %d: got\n%.2000s\nwant\n%.2000s", i-1, g, w)
			}
			ex = got
		}
		finishStep(ex, i)
		mustOK(t, fmt.Sprintf("put step %d", i), s.PutExecution(ctx, ex))
	}
	ex.Status, ex.WorkflowOutputPayload = cardflow.ExecSucceeded, map[string]any{"lines": LongSteps}
	mustOK(t, "finish", s.PutExecution(ctx, ex))
	got, err := s.GetExecution(ctx, org, wf, ex.WorkflowExecutionID)
	mustOK(t, "get the finished execution", err)
	if g, w := record(t, got), record(t, ex); g != w {
		t.Fatalf("finished execution: got\n%.2000s\nwant\n%.2000s", g, w)
	}
	if got.Revision != LongSteps+2 || len(got.State.Outputs) != LongSteps || len(got.CondensedLogs) != LongSteps {
		t.Errorf("got revision %d with %d outputs and %d logs, want revision %d with %d of each",
			got.Revision, len(got.State.Outputs), len(got.CondensedLogs), LongSteps+2, LongSteps)
	}

	// A writer that read before the last step conflicts, whatever it changed.
	stale := longExecution(org, wf)
	stale.WorkflowExecutionID, stale.Revision = ex.WorkflowExecutionID, ex.Revision-1
	finishStep(stale, 1)
	wantCode(t, "put of a stale execution", s.PutExecution(ctx, stale), cardflow.ECONFLICT)
	again, err := s.GetExecution(ctx, org, wf, ex.WorkflowExecutionID)
	mustOK(t, "get after the conflict", err)
	if g, w := record(t, again), record(t, ex); g != w {
		t.Errorf("after the conflict: got\n%.2000s\nwant\n%.2000s", g, w)
	}

	foreign := newOrg()
	_, err = s.GetExecution(ctx, foreign, wf, ex.WorkflowExecutionID)
	wantCode(t, "get from another organization", err, cardflow.ENOTFOUND)
	theirs := *got
	theirs.OrganizationID = foreign
	finishStep(&theirs, LongSteps+1)
	wantCode(t, "put from another organization", s.PutExecution(ctx, &theirs), cardflow.ENOTFOUND)
	if again, err = s.GetExecution(ctx, org, wf, ex.WorkflowExecutionID); err != nil || record(t, again) != record(t, ex) {
		t.Errorf("after another organization's put: got %v, want the execution unchanged", err)
	}
}

// MeasureSteps runs the long execution on s, one PutExecution per step,
// and returns what written (the bytes the store has written so far, as
// the adapter counts them) grew by in each step's write: element i is
// step i+1's.
func MeasureSteps(t *testing.T, s cardflow.Store, written func() int64) []int64 {
	t.Helper()
	ctx := t.Context()
	org := newOrg()
	wf := workflows.create(t, s, org, 1)
	ex := longExecution(org, wf)
	mustOK(t, "start", s.StartExecution(ctx, ex, process(ex, "PO-measure-"+ex.WorkflowExecutionID), nil))
	perStep := make([]int64, LongSteps)
	for i := 1; i <= LongSteps; i++ {
		finishStep(ex, i)
		before := written()
		mustOK(t, fmt.Sprintf("put step %d", i), s.PutExecution(ctx, ex))
		perStep[i-1] = written() - before
	}
	return perStep
}

// CheckStepWrites checks what MeasureSteps measured: no step writes the
// input again, and step 190 writes no more than step 10 did, but for what
// the event log (which keeps up to 200 events) grew by in between and
// slack for the store's own overhead (pages, attribute names).
func CheckStepWrites(t *testing.T, perStep []int64, slack int64) {
	t.Helper()
	for i, n := range perStep {
		if n >= LongInputBytes {
			t.Errorf("step %d wrote %d bytes, want less than the %d-byte input", i+1, n, LongInputBytes)
		}
	}
	early, late := fmt.Sprintf("step%03d", 10), fmt.Sprintf("step%03d", LongSteps)
	// The events the log gained from step 10 to step 190, as encoded.
	growth := int64(0)
	for i := 11; i <= min(LongSteps, longEvents/2); i++ {
		growth += int64(len(fmt.Sprintf(`{"at":1700000000000,"type":"StepFinished","step_id":"step%03d","step":"Step step%03d"},`, i, i)) * 2)
	}
	if got, most := perStep[LongSteps-1], perStep[9]+growth+slack; got > most {
		t.Errorf("%s wrote %d bytes, %s %d: want at most %d more (the event log's growth and %d of slack)",
			late, got, early, perStep[9], growth+slack, slack)
	}
}
