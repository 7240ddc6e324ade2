package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// run is one Advance call on one execution.
type run struct {
	e  *Engine
	ex *cardflow.Execution
	g  *graph
}

// outcome is how a step ended.
type outcome struct {
	input  any
	output any
	// exit is "" for success, or cardflow.ExitError / ExitTimeout.
	exit string
	// next overrides the default exit (a condition's branch).
	next string
	// reason says why a step failed.
	reason string
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

// persist writes the execution; the store checks its revision.
func (r *run) persist(ctx context.Context) error {
	r.ex.ModifiedOn = r.millis()
	return r.e.store.PutExecution(ctx, r.ex)
}

// runStep runs the step the execution is in. Synchronous steps return a nil
// Result: the loop goes on with the next step.
func (r *run) runStep(ctx context.Context, n *node) (*Result, error) {
	ex := r.ex
	ex.State.StepsRun++
	ex.WorkflowCurrentState = n.step.Name
	r.event(cardflow.EventStepStarted, n, "")
	started := r.millis()
	var out outcome
	switch n.step.Type {
	case cardflow.StepTrigger:
		out = outcome{input: ex.WorkflowInputPayload, output: ex.WorkflowInputPayload}
	case cardflow.StepTransform:
		out = r.transform(ctx, n)
	case cardflow.StepCondition:
		out = r.condition(ctx, n)
	case cardflow.StepHTTP:
		out = r.httpCall(ctx, n)
	case cardflow.StepERP:
		out = r.erpCall(ctx, n)
	case cardflow.StepCard, cardflow.StepWait:
		return r.openWait(ctx, n, started)
	case cardflow.StepDelay:
		return r.startSleep(ctx, n, started)
	case cardflow.StepEnd:
		return r.end(ctx, n, started)
	default:
		out = outcome{reason: fmt.Sprintf("unknown step type %q", n.step.Type)}
	}
	return nil, r.leave(ctx, n, out, started)
}

// leave records a finished step and moves to the exit its outcome names.
func (r *run) leave(ctx context.Context, n *node, out outcome, started int64) error {
	if out.reason == "" && out.output != nil {
		if b, err := json.Marshal(out.output); err != nil {
			out = outcome{input: out.input, reason: "its output is not JSON: " + err.Error()}
		} else if len(b) > MaxOutputBytes {
			out = outcome{input: out.input, reason: fmt.Sprintf("its output is %d KB, more than the %d KB a step may pass on", len(b)>>10, MaxOutputBytes>>10)}
		} else if err := cardflow.CheckNesting("its output", b); err != nil {
			out = outcome{input: out.input, reason: cardflow.ErrorMessage(err)}
		}
	}
	status := cardflow.ExecSucceeded
	next := n.next
	if out.reason != "" {
		// A failure leaves by the error exit, a timeout by the timeout
		// exit; without that exit the execution ends with the step.
		exit, event, final, verb := cardflow.ExitError, cardflow.EventStepFailed, cardflow.ExecFailed, "failed: "
		if out.exit == cardflow.ExitTimeout {
			exit, event, final, verb = cardflow.ExitTimeout, cardflow.EventTimedOut, cardflow.ExecTimedOut, ""
		}
		status = final
		if out.output == nil {
			out.output = map[string]any{"error": out.reason}
		}
		r.event(event, n, out.reason)
		to, ok := n.exits[exit]
		if !ok {
			r.log(n, out, status, started)
			return r.finish(ctx, n, final, map[string]any{"error": out.reason, "step": n.step.ID},
				fmt.Sprintf("step %s (%s) %s%s", n.step.ID, n.step.Name, verb, out.reason))
		}
		next = to
	} else {
		r.event(cardflow.EventStepFinished, n, "")
		if out.next != "" {
			next = out.next
		}
	}
	r.log(n, out, status, started)
	ex := r.ex
	if ex.State.Outputs == nil {
		ex.State.Outputs = map[string]any{}
	}
	ex.State.Outputs[n.step.ID] = out.output
	ex.State.StepID, ex.State.Phase, ex.State.WakeAt, ex.State.Wait = next, "", 0, 0
	ex.Status = cardflow.ExecRunning
	if to := r.g.steps[next]; to != nil {
		ex.WorkflowCurrentState = to.step.Name
	}
	return r.persist(ctx)
}

// log records a step's condensed input and output.
func (r *run) log(n *node, out outcome, status string, started int64) {
	if r.ex.CondensedLogs == nil {
		r.ex.CondensedLogs = map[string]cardflow.StepLog{}
	}
	r.ex.CondensedLogs[n.step.ID] = cardflow.StepLog{
		Input: condense(out.input), Output: condense(out.output), Status: status,
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
	return r.finish(ctx, n, cardflow.ExecFailed, map[string]any{"error": reason, "step": n.step.ID},
		fmt.Sprintf("step %s (%s) failed: %s", n.step.ID, n.step.Name, reason))
}

// finish closes the process record, then ends the execution. In that order a
// crash in between leaves an open execution whose end runs again, never a
// finished execution holding its process id.
func (r *run) finish(ctx context.Context, n *node, status string, output any, msg string) error {
	if err := cardflow.CloseProcess(ctx, r.e.store, r.ex, r.e.now()); err != nil {
		return err
	}
	ex := r.ex
	ex.Status = status
	ex.WorkflowOutputPayload = output
	ex.WorkflowCurrentState = n.step.Name
	ex.State.StepID, ex.State.Phase, ex.State.WakeAt, ex.State.Wait = "", "", 0, 0
	typ := map[string]string{cardflow.ExecSucceeded: cardflow.EventSucceeded, cardflow.ExecTimedOut: cardflow.EventTimedOut}[status]
	if typ == "" {
		typ = cardflow.EventFailed
	}
	r.event(typ, n, msg)
	return r.persist(ctx)
}

func (r *run) transform(ctx context.Context, n *node) outcome {
	if n.output == nil {
		return outcome{output: nil}
	}
	v, err := n.output.Eval(ctx, r.vars())
	if err != nil {
		return outcome{reason: "config.output: " + err.Error()}
	}
	return outcome{output: v}
}

func (r *run) condition(ctx context.Context, n *node) outcome {
	vars := r.vars()
	for _, b := range n.branches {
		ok, err := b.when.EvalBool(ctx, vars)
		if err != nil {
			return outcome{reason: fmt.Sprintf("when of the connection to %s: %v", b.to, err)}
		}
		if ok {
			return outcome{output: map[string]any{"next": b.to}, next: b.to}
		}
	}
	return outcome{output: map[string]any{"next": n.next}}
}

func (r *run) end(ctx context.Context, n *node, started int64) (*Result, error) {
	status, _ := n.step.Config["status"].(string)
	if status == "" {
		status = cardflow.ExecSucceeded
	}
	var output any
	if n.output != nil {
		v, err := n.output.Eval(ctx, r.vars())
		if err != nil {
			return nil, r.fail(ctx, n, "config.output: "+err.Error())
		}
		output = v
	}
	r.event(cardflow.EventStepFinished, n, "")
	r.log(n, outcome{output: output}, status, started)
	msg := ""
	if status == cardflow.ExecFailed {
		msg = fmt.Sprintf("ended in step %s (%s)", n.step.ID, n.step.Name)
	}
	if err := r.finish(ctx, n, status, output, msg); err != nil {
		return nil, err
	}
	return &Result{Status: status}, nil
}

// startSleep puts the execution to sleep in a delay step.
func (r *run) startSleep(ctx context.Context, n *node, started int64) (*Result, error) {
	wake := r.e.now().Add(n.duration)
	if n.until != nil {
		v, err := n.until.Eval(ctx, r.vars())
		if err != nil {
			return nil, r.leave(ctx, n, outcome{reason: "config.until: " + err.Error()}, started)
		}
		t, err := timeOf(v)
		if err != nil {
			return nil, r.leave(ctx, n, outcome{reason: "config.until: " + err.Error()}, started)
		}
		wake = t
	}
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
	out := outcome{output: map[string]any{"until": time.UnixMilli(wake).UTC().Format(time.RFC3339Nano)}}
	return nil, r.leave(ctx, n, out, started)
}

// timeOf reads a point in time: an RFC 3339 string or epoch milliseconds.
func timeOf(v any) (time.Time, error) {
	switch t := v.(type) {
	case string:
		if p, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return p, nil
		}
		if ms, err := strconv.ParseInt(t, 10, 64); err == nil {
			return time.UnixMilli(ms), nil
		}
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time", t)
	case float64:
		return time.UnixMilli(int64(t)), nil
	case int64:
		return time.UnixMilli(t), nil
	}
	return time.Time{}, fmt.Errorf("got %T, want an RFC 3339 time or epoch milliseconds", v)
}
