package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/steps"
)

// run is one Advance call on one execution.
type run struct {
	e  *Engine
	ex *cardflow.Execution
	g  *graph
	// before is what the step being run may change of the execution's
	// state, as it was when the step began.
	before *before
	// pending: the execution has changes not yet stored, of local steps
	// whose write was left to a later one (see persist).
	pending bool
	// stepwise: every step is stored on its own.
	stepwise bool
	// prepared is what the Run of step preparedFor made for its Open.
	prepared    any
	preparedFor string
	// opening is the process record of the wait openWait just recorded,
	// as it read it, for checkWait to open the wait on.
	opening *cardflow.Process
}

// errStepwise says that changes of several steps, stored together, would
// take the execution past its state cap; Advance runs them again stored
// one by one.
var errStepwise = errors.New("engine: run the steps again, one write each")

// before is a step's output, log and the event log as they were before
// the step ran, so that a step whose result would take the execution past
// its size cap can be taken back.
type before struct {
	n           *node
	out         any
	log         cardflow.StepLog
	hadOut      bool
	hadLog      bool
	events      cardflow.EventLog
	modifiedBy  *string
	outputValue map[string]any
}

// remember notes what the run of step n may change.
func (r *run) remember(n *node) {
	ex := r.ex
	b := &before{n: n, modifiedBy: ex.ModifiedBy, outputValue: ex.WorkflowOutputPayload}
	b.out, b.hadOut = ex.State.Outputs[n.step.ID]
	b.log, b.hadLog = ex.CondensedLogs[n.step.ID]
	b.events = cardflow.EventLog{Events: slices.Clone(ex.WorkflowEventLog.Events), Total: ex.WorkflowEventLog.Total}
	r.before = b
}

// takeBack restores what remember noted.
func (r *run) takeBack() {
	ex, b := r.ex, r.before
	id := b.n.step.ID
	delete(ex.State.Outputs, id)
	if b.hadOut {
		ex.State.Outputs[id] = b.out
	}
	delete(ex.CondensedLogs, id)
	if b.hadLog {
		ex.CondensedLogs[id] = b.log
	}
	ex.WorkflowEventLog, ex.ModifiedBy, ex.WorkflowOutputPayload = b.events, b.modifiedBy, b.outputValue
}

func (r *run) millis() int64 { return r.e.now().UnixMilli() }

func (r *run) vars() expr.Vars {
	ex := r.ex
	return expr.Vars{
		Input: ex.WorkflowInputPayload,
		Steps: ex.State.Outputs,
		Execution: map[string]any{
			"id":               ex.WorkflowExecutionID,
			"workflow_id":      ex.WorkflowID,
			"workflow_version": ex.WorkflowVersion,
			"workflow_name":    ex.WorkflowDetails.WorkflowName,
			"process_id":       ex.State.ProcessID,
			"trigger_type":     ex.WorkflowTriggerType,
			"started_on":       ex.CreatedOn,
		},
	}
}

// event appends to the log, keeping the last MaxEvents.
func (r *run) event(typ string, n *node, msg string) {
	ev := cardflow.Event{At: r.millis(), Type: typ, Message: msg}
	if n != nil {
		ev.StepID, ev.Step = n.step.ID, n.step.Name
	}
	log := &r.ex.WorkflowEventLog
	log.Events = append(log.Events, ev)
	if len(log.Events) > MaxEvents {
		log.Events = append(log.Events[:0:0], log.Events[len(log.Events)-MaxEvents:]...)
	}
	log.Total++
}

// persist records a step's change of the execution. Each change gets a
// later modified_on than the one before, even within a millisecond, so
// that waitForExecution's since tells every change apart.
//
// When the execution goes on in this Advance with a local step, the write
// is left to a later step: running local steps again after a crash is
// unseen, so nothing is lost, and a run of them costs one synced write
// instead of one each. Everything is written before anything outside the
// execution happens: before a step that is not local, and before Advance
// returns. An end step is local: the write that stores the end closes the
// process record in the same change (cardflow.Store's PutExecution).
func (r *run) persist(ctx context.Context) error {
	r.ex.ModifiedOn = max(r.millis(), r.ex.ModifiedOn+1)
	if n := r.g.steps[r.ex.State.StepID]; !r.stepwise && r.ex.Status == cardflow.ExecRunning &&
		r.ex.State.Phase == "" && n != nil && n.local {
		r.pending = true
		return nil
	}
	return r.write(ctx)
}

// flush writes the changes persist left pending.
func (r *run) flush(ctx context.Context) error {
	if !r.pending {
		return nil
	}
	return r.write(ctx)
}

// write stores the execution; the store checks its revision. Waiting
// requests hear of it once it is stored. When the step's result would take
// the execution past the size of state it may hold
// (cardflow.MaxStateBytes, or what one stored record holds), the result is
// taken back and the execution fails with the store's reason: what it
// stores then is what it held before the step, and fits. With earlier
// steps' changes in the same write, Advance runs the steps again stored
// one by one (errStepwise), which finds the step that passed the cap.
func (r *run) write(ctx context.Context) error {
	ends := r.ex.EndsOnWrite()
	err := r.e.store.PutExecution(ctx, r.ex)
	if err == nil {
		r.pending = false
		if r.e.notify != nil {
			r.e.notify.ExecutionChanged(r.ex.Ref())
		}
		if ends {
			r.e.observe.ExecutionEnded(ctx, r.ex)
		}
		return nil
	}
	if cardflow.ErrorCode(err) == cardflow.ETOOLARGE && r.pending {
		return errStepwise
	}
	if cardflow.ErrorCode(err) != cardflow.ETOOLARGE || r.before == nil {
		return err
	}
	n := r.before.n
	r.takeBack()
	r.before = nil
	return r.fail(ctx, n, cardflow.ErrorMessage(err))
}

// stepRun is what a run of step n sees and may use: secrets of the
// execution's organization only, never another's nor the deployment's.
func (r *run) stepRun(n *node) *steps.Run {
	e := r.e
	return &steps.Run{
		Execution: r.ex, StepID: n.step.ID, Vars: r.vars(), Next: n.next, Branches: n.branches,
		Now: e.now, Client: e.client, Secrets: secrets.ForOrganization(e.secrets, r.ex.OrganizationID),
		Cards: e.store, Approvals: e.store, Delegations: e.store, Deliverer: e.deliver, Log: e.log, Observe: e.observe,
	}
}

// runStep runs the step the execution is in. Synchronous steps return a nil
// Result: the loop goes on with the next step.
func (r *run) runStep(ctx context.Context, n *node) (*Result, error) {
	ex := r.ex
	ex.State.StepsRun++
	ex.WorkflowCurrentState = n.step.Name
	r.event(cardflow.EventStepStarted, n, "")
	started := r.millis()
	stepCtx, observed := r.e.observe.StepStarted(ctx, ex, n.step.ID, n.step.Type)
	out := n.run.Run(stepCtx, r.stepRun(n))
	observed(out.Reason)
	r.outcomeEvents(n, out)
	switch {
	case out.Finish != "":
		return r.end(ctx, n, out, started)
	case out.Reason != "":
		// A step that failed leaves by its error exit, whatever its kind.
	case n.waiter != nil:
		r.prepared, r.preparedFor = out.Prepared, n.step.ID
		return r.openWait(ctx, n, out.Input, started)
	case out.Sleep != nil:
		return r.startSleep(ctx, n, *out.Sleep)
	}
	return nil, r.leave(ctx, n, out, started)
}

// unknownStep stands for a step whose kind is not registered.
type unknownStep string

func (t unknownStep) Run(context.Context, *steps.Run) steps.Outcome {
	return steps.Outcome{Reason: fmt.Sprintf("unknown step type %q", string(t))}
}

// leave records a finished step and moves to the exit its outcome names.
func (r *run) leave(ctx context.Context, n *node, out steps.Outcome, started int64) error {
	if out.Reason == "" && out.Output != nil {
		if reason := checkOutput(out.Output); reason != "" {
			out = steps.Outcome{Input: out.Input, Reason: reason}
		}
	}
	status := cardflow.ExecSucceeded
	next := n.next
	if out.Reason != "" {
		// A failure leaves by the error exit, a timeout by the timeout
		// exit; without that exit the execution ends with the step.
		exit, event, final, verb := cardflow.ExitError, cardflow.EventStepFailed, cardflow.ExecFailed, "failed: "
		if out.Exit == cardflow.ExitTimeout {
			exit, event, final, verb = cardflow.ExitTimeout, cardflow.EventTimedOut, cardflow.ExecTimedOut, ""
		}
		status = final
		if out.Output == nil {
			out.Output = map[string]any{"error": out.Reason}
		}
		r.event(event, n, out.Reason)
		to, ok := n.exits[exit]
		if !ok {
			r.log(n, out, status, started)
			r.ex.State.FailedStep = n.step.ID
			return r.finish(ctx, n, final, map[string]any{"error": out.Reason, "step": n.step.ID},
				fmt.Sprintf("step %s (%s) %s%s", n.step.ID, n.step.Name, verb, out.Reason))
		}
		next = to
	} else {
		r.event(cardflow.EventStepFinished, n, "")
		if out.Next != "" {
			next = out.Next
		}
		if out.Exit != "" {
			// A step that decided (an approval rejected) leaves by that
			// exit; without a connection there, the execution ends.
			to, ok := n.exits[out.Exit]
			if !ok {
				r.log(n, out, cardflow.ExecFailed, started)
				r.ex.State.FailedStep = n.step.ID
				return r.finish(ctx, n, cardflow.ExecFailed, map[string]any{"error": "no connection leaves on " + out.Exit, "step": n.step.ID, "output": out.Output},
					fmt.Sprintf("step %s (%s) decided %s, and no connection leaves it on %s", n.step.ID, n.step.Name, out.Exit, out.Exit))
			}
			next = to
		}
	}
	r.log(n, out, status, started)
	ex := r.ex
	if ex.State.Outputs == nil {
		ex.State.Outputs = map[string]any{}
	}
	ex.State.Outputs[n.step.ID] = out.Output
	ex.State.StepID, ex.State.Phase, ex.State.WakeAt, ex.State.Wait = next, "", 0, 0
	ex.Status = cardflow.ExecRunning
	if to := r.g.steps[next]; to != nil {
		ex.WorkflowCurrentState = to.step.Name
	}
	return r.persist(ctx)
}

// checkOutput says why a step's output cannot be passed on, or "". The
// output is encoded only up to the limit: one built of shared parts may be
// far larger written out than in memory.
func checkOutput(v any) string {
	b, over, err := cardflow.MarshalWithin(v, MaxOutputBytes)
	switch {
	case err != nil:
		return "its output is not JSON: " + err.Error()
	case over:
		return fmt.Sprintf("its output is more than the %d KB a step may pass on", MaxOutputBytes>>10)
	}
	if err := cardflow.CheckNesting("its output", b); err != nil {
		return cardflow.ErrorMessage(err)
	}
	return ""
}

// outcomeEvents appends the events a step's outcome carries.
func (r *run) outcomeEvents(n *node, out steps.Outcome) {
	for _, ev := range out.Events {
		r.event(ev.Type, n, ev.Message)
		r.ex.WorkflowEventLog.Events[len(r.ex.WorkflowEventLog.Events)-1].Actor = ev.Actor
	}
}

// log records a step's condensed input and output.
func (r *run) log(n *node, out steps.Outcome, status string, started int64) {
	if r.ex.CondensedLogs == nil {
		r.ex.CondensedLogs = map[string]cardflow.StepLog{}
	}
	r.ex.CondensedLogs[n.step.ID] = cardflow.StepLog{
		Input: condense(out.Input), Output: condense(out.Output), Status: status,
		StartedOn: started, FinishedOn: r.millis(),
	}
}

// condense keeps a value whole when its JSON fits MaxLogBytes, and otherwise
// a marked, cut-off copy of the JSON.
func condense(v any) any {
	b, err := json.Marshal(v)
	if err != nil || len(b) <= MaxLogBytes {
		return v
	}
	cut := MaxLogBytes - 256
	for cut > 0 && b[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return map[string]any{"truncated": true, "bytes": len(b), "preview": string(b[:cut])}
}

// fail ends the execution as FAILED in step n.
func (r *run) fail(ctx context.Context, n *node, reason string) error {
	r.ex.State.FailedStep = n.step.ID // a redrive runs it again
	return r.finish(ctx, n, cardflow.ExecFailed, map[string]any{"error": reason, "step": n.step.ID},
		fmt.Sprintf("step %s (%s) failed: %s", n.step.ID, n.step.Name, reason))
}

// finish ends the execution; the write that stores the end closes its
// process record in the same change, so no crash leaves a finished
// execution holding its process id. output becomes the execution's output
// payload, an object (an end step's "done" reads {"value": "done"}).
func (r *run) finish(ctx context.Context, n *node, status string, output any, msg string) error {
	ex := r.ex
	wait := ex.State.Wait
	ex.Status = status
	ex.WorkflowOutputPayload = cardflow.PayloadOf(output)
	ex.WorkflowCurrentState = n.step.Name
	ex.State.StepID, ex.State.Phase, ex.State.WakeAt, ex.State.Wait = "", "", 0, 0
	typ := map[string]string{cardflow.ExecSucceeded: cardflow.EventSucceeded, cardflow.ExecTimedOut: cardflow.EventTimedOut}[status]
	if typ == "" {
		typ = cardflow.EventFailed
	}
	r.event(typ, n, msg)
	if err := r.persist(ctx); err != nil {
		return err
	}
	// An approval the step left open (its card failed to go out) closes
	// with the execution; an answer closes one this leaves open.
	updater, _ := r.e.deliver.(cardflow.ApprovalCardUpdater)
	if err := cardflow.CancelApproval(ctx, r.e.store, updater, ex, wait, r.e.now()); err != nil {
		r.e.log.WarnContext(ctx, "the open approval of an ended execution was not closed", "execution", ex.WorkflowExecutionID, "error", cardflow.ErrorMessage(err))
	}
	return nil
}

// end finishes the execution as an end step says: with its status and
// output, or FAILED when its output did not evaluate.
func (r *run) end(ctx context.Context, n *node, out steps.Outcome, started int64) (*Result, error) {
	if out.Reason == "" && out.Output != nil {
		out.Reason = checkOutput(out.Output)
	}
	if out.Reason != "" {
		return nil, r.fail(ctx, n, out.Reason)
	}
	status := out.Finish
	r.event(cardflow.EventStepFinished, n, "")
	r.log(n, steps.Outcome{Output: out.Output}, status, started)
	msg := ""
	if status == cardflow.ExecFailed {
		msg = fmt.Sprintf("ended in step %s (%s)", n.step.ID, n.step.Name)
	}
	if err := r.finish(ctx, n, status, out.Output, msg); err != nil {
		return nil, err
	}
	return &Result{Status: status}, nil
}

// startSleep puts the execution to sleep in a delay step until wake.
func (r *run) startSleep(ctx context.Context, n *node, wake time.Time) (*Result, error) {
	ex := r.ex
	ex.State.Phase, ex.State.WakeAt = cardflow.PhaseSleeping, wake.UnixMilli()
	ex.Status = cardflow.ExecWaiting
	r.event(cardflow.EventSleeping, n, "until "+wake.UTC().Format(time.RFC3339))
	if err := r.persist(ctx); err != nil {
		return nil, err
	}
	return nil, nil
}

func (r *run) checkSleep(ctx context.Context, n *node) (*Result, error) {
	wake := r.ex.State.WakeAt
	if r.millis() < wake {
		return &Result{Status: Sleeping, WakeAt: wake}, nil
	}
	started := r.ex.ModifiedOn
	out := steps.Outcome{Output: map[string]any{"until": time.UnixMilli(wake).UTC().Format(time.RFC3339Nano)}}
	return nil, r.leave(ctx, n, out, started)
}
