package cardflow

import (
	"fmt"
	"time"
)

// EventRedriven is the log entry of a redrive, with the actor who asked.
const EventRedriven = "ExecutionRedriven"

// Redrivable reports whether a redrive may continue the execution: it
// returns the step the execution failed in, or a conflict that says why
// not. An execution that its workflow ended FAILED (an end step with that
// status) has no failed step: running its end again would end it the same.
func (e *Execution) Redrivable() (*Step, error) {
	if e.Status != ExecFailed && e.Status != ExecTimedOut {
		return nil, Errorf(ECONFLICT, "execution %s is %s; only FAILED or TIMED_OUT executions can be redriven", e.WorkflowExecutionID, e.Status)
	}
	id := e.State.FailedStep
	if id == "" {
		// Records from before FailedStep was kept name the step in their
		// output, as every failure writes it: {"error": ..., "step": ...}.
		if _, failure := e.WorkflowOutputPayload["error"]; failure {
			id, _ = e.WorkflowOutputPayload["step"].(string)
		}
	}
	for i, s := range e.WorkflowDetails.WorkflowSteps {
		if id != "" && s.ID == id {
			return &e.WorkflowDetails.WorkflowSteps[i], nil
		}
	}
	return nil, Errorf(ECONFLICT, "execution %s ended %s as its workflow says, in step %q; there is no failed step to continue from", e.WorkflowExecutionID, e.Status, e.WorkflowCurrentState)
}

// Redrive makes a failed execution RUNNING again in the step it failed
// in, which runs anew; the outputs of the steps before it stay, and so do
// its id and history. It records who asked, and counts the run.
func (e *Execution) Redrive(step *Step, actor string, now time.Time) {
	ms := now.UnixMilli()
	e.Status = ExecRunning
	e.WorkflowCurrentState = step.Name
	e.WorkflowOutputPayload = map[string]any{}
	e.ModifiedBy, e.ModifiedOn = &actor, max(ms, e.ModifiedOn+1)
	e.State.StepID, e.State.Phase, e.State.WakeAt, e.State.Wait = step.ID, "", 0, 0
	e.State.FailedStep = ""
	e.State.Run++
	e.WorkflowEventLog.Events = append(e.WorkflowEventLog.Events, Event{
		At: ms, Type: EventRedriven, StepID: step.ID, Step: step.Name, Actor: actor,
		Message: fmt.Sprintf("by %s: continues from step %s (%s), run %d", actor, step.ID, step.Name, e.State.Run+1),
	})
	e.WorkflowEventLog.Total++
}

// Redriven reports whether the execution's latest event is its redrive:
// it is RUNNING again and no step has run since, so a repeated redrive
// request only hands it to the runner again.
func (e *Execution) Redriven() bool {
	evs := e.WorkflowEventLog.Events
	return e.Status == ExecRunning && len(evs) > 0 && evs[len(evs)-1].Type == EventRedriven
}

// RunRef is the execution's key with the run a runner is to start.
func (e *Execution) RunRef() ExecutionRef {
	ref := e.Ref()
	ref.Run = e.State.Run
	return ref
}

// ReopenProcess makes the process record of a failed execution its own
// and open again, before a redrive. A record another open execution holds
// is a conflict; one another execution held and closed is taken back.
// Its waits go on counting past every wait the execution opened before
// (there are fewer than its events), so an old card's answer cannot
// resume a new wait.
func ReopenProcess(p *Process, ex *Execution) error {
	if p.ExecutionID != ex.WorkflowExecutionID && !p.Closed {
		return Errorf(ECONFLICT, "process id %s belongs to execution %s, which is still open; redrive execution %s once that one has finished", p.ProcessID, p.ExecutionID, ex.WorkflowExecutionID)
	}
	if p.ExecutionID != ex.WorkflowExecutionID {
		p.Waits = max(p.Waits, ex.WorkflowEventLog.Total)
	}
	p.WorkflowID, p.ExecutionID = ex.WorkflowID, ex.WorkflowExecutionID
	p.Closed, p.ExpiresAt, p.Wait, p.Early = false, 0, nil, nil
	return nil
}
