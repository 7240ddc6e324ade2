package engine

import (
	"context"
	"fmt"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/steps"
)

// openWait starts a step that waits (card, wait) once its Run gave the
// input to log: the execution is recorded as waiting first, then the wait
// opens on the process record (sending the card of a card step). If the
// process dies in between, checkWait finds the wait not yet open and opens
// it then.
func (r *run) openWait(ctx context.Context, n *node, input any, started int64) (*Result, error) {
	ex := r.ex
	p, err := r.e.store.GetProcess(ctx, ex.OrganizationID, ex.State.ProcessID)
	if err != nil {
		return nil, err
	}
	ex.State.Phase, ex.State.Wait = cardflow.PhaseWaiting, p.Waits+1
	ex.State.WakeAt = 0
	if timeout := n.waiter.Timeout(); timeout > 0 {
		ex.State.WakeAt = r.e.now().Add(timeout).UnixMilli()
	}
	ex.Status = cardflow.ExecWaiting
	if ex.CondensedLogs == nil {
		ex.CondensedLogs = map[string]cardflow.StepLog{}
	}
	ex.CondensedLogs[n.step.ID] = cardflow.StepLog{Input: condense(input), Output: nil, Status: cardflow.ExecWaiting, StartedOn: started}
	r.event(cardflow.EventWaiting, n, "process id "+ex.State.ProcessID)
	if err := r.persist(ctx); err != nil {
		return nil, err
	}
	r.opening = p
	return nil, nil
}

// checkWait looks at the wait the execution is in: opens it if a crash left
// it unopened, leaves the step if a resume or the deadline claimed it, and
// otherwise tells the runner to wait.
func (r *run) checkWait(ctx context.Context, n *node) (*Result, error) {
	ex := r.ex
	if n.waiter == nil {
		return nil, fmt.Errorf("execution %s waits in step %s, whose kind %q does not wait", ex.WorkflowExecutionID, n.step.ID, n.step.Type)
	}
	// The record openWait read, which open writes conditionally on its
	// revision: a resume that changed it meanwhile makes open read it again.
	p, err := r.opening, error(nil)
	r.opening = nil
	if p == nil {
		if p, err = r.e.store.GetProcess(ctx, ex.OrganizationID, ex.State.ProcessID); err != nil {
			return nil, err
		}
	}
	if p.Waits < ex.State.Wait {
		if p, err = r.open(ctx, n, p); err != nil {
			if cardflow.ErrorCode(err) == cardflow.EINVALID {
				// The step's delivery cannot work as configured (a
				// missing secret, a webhook that refuses the card):
				// retrying will not help, so the step fails.
				log := ex.CondensedLogs[n.step.ID]
				return nil, r.leave(ctx, n, steps.Outcome{Input: log.Input, Reason: "delivery: " + cardflow.ErrorMessage(err)}, log.StartedOn)
			}
			return nil, err
		}
	}
	w := p.Wait
	if w == nil || w.Seq != ex.State.Wait {
		return nil, fmt.Errorf("execution %s waits on wait %d of process %s, which has no such wait", ex.WorkflowExecutionID, ex.State.Wait, p.ProcessID)
	}
	started := ex.CondensedLogs[n.step.ID].StartedOn
	input := ex.CondensedLogs[n.step.ID].Input
	d, decides := n.waiter.(steps.Decider)
	switch {
	case w.Claimed() && decides:
		out, err := d.Decide(ctx, r.stepRun(n), w)
		if err != nil {
			return nil, err
		}
		if w.Resume != nil {
			ex.ModifiedBy = &w.Resume.Actor
		}
		out.Input = input
		r.outcomeEvents(n, out)
		return nil, r.leave(ctx, n, out, started)
	case w.Resume != nil:
		msg := "by " + w.Resume.Actor
		if w.Resume.Source != "" {
			msg += " from " + w.Resume.Source
		}
		r.event(cardflow.EventResumed, n, msg)
		// The resume changed the execution, as a cancel does.
		ex.ModifiedBy = &w.Resume.Actor
		return nil, r.leave(ctx, n, steps.Outcome{Input: input, Output: w.Resume.Payload}, started)
	case w.TimedOut:
		return nil, r.leave(ctx, n, steps.Outcome{Input: input, Exit: cardflow.ExitTimeout, Reason: n.waiter.TimedOut()}, started)
	case w.Deadline > 0 && r.millis() >= w.Deadline:
		w.TimedOut = true
		if err := r.e.store.PutProcess(ctx, p); err != nil {
			return nil, err // a conflict means a resume came first: Advance reads again
		}
		return nil, nil
	}
	wake := w.Deadline
	if t, ok := n.waiter.(steps.Ticker); ok {
		next, err := r.tick(ctx, n, t, p)
		if err != nil || next < 0 {
			return nil, err
		}
		if next > 0 && (wake == 0 || next < wake) {
			wake = next
		}
	}
	return &Result{Status: cardflow.ExecWaiting, WakeAt: wake, Wait: w, ProcessID: p.ProcessID}, nil
}

// tick runs the timers of a waiting step that has them (an approval's
// reminders and escalation) and logs what they did. It returns when the
// next timer is due (0: none), or -1 when the tick decided the step and
// claimed its wait, so that Advance looks at the wait again. The runners
// need nothing of their own for these timers: they call Advance at the
// WakeAt it answers, as for a deadline.
func (r *run) tick(ctx context.Context, n *node, t steps.Ticker, p *cardflow.Process) (int64, error) {
	tick, err := t.Tick(ctx, r.stepRun(n), p.Wait)
	if err != nil {
		return 0, err
	}
	if len(tick.Events) > 0 {
		if err := r.logTick(ctx, n, tick.Events); err != nil {
			return 0, err
		}
	}
	if !tick.Decided {
		return tick.Next, nil
	}
	p.Wait.Resume = &cardflow.Resume{Source: cardflow.SourceApproval, Actor: cardflow.ActorTimer, ReceivedOn: r.millis()}
	// A conflict means an answer or a resume came first: Advance reads
	// again, and the approval record holds the decision either way.
	return -1, r.e.store.PutProcess(ctx, p)
}

// open lets the step send what it sends (a card step's card) and opens the
// wait on the process record, taking over a resume that came early enough.
func (r *run) open(ctx context.Context, n *node, p *cardflow.Process) (*cardflow.Process, error) {
	ex := r.ex
	run := r.stepRun(n)
	if r.preparedFor == n.step.ID {
		run.Prepared = r.prepared
	}
	r.prepared, r.preparedFor = nil, ""
	if err := n.waiter.Open(ctx, run); err != nil {
		return nil, err
	}
	for {
		now := r.millis()
		p.Waits = ex.State.Wait
		p.Wait = &cardflow.Wait{Seq: ex.State.Wait, StepID: n.step.ID, OpenedOn: now, Deadline: ex.State.WakeAt}
		if early := p.Early; early != nil {
			p.Early = nil
			// A step that decides itself (an approval) takes only its own
			// decision early, never a resumeworkflow body.
			_, decides := n.waiter.(steps.Decider)
			if now-early.ReceivedOn <= r.e.early.Milliseconds() && (!decides || early.Source == cardflow.SourceApproval) {
				p.Wait.Resume = early
			}
		}
		err := r.e.store.PutProcess(ctx, p)
		if cardflow.ErrorCode(err) != cardflow.ECONFLICT {
			return p, err
		}
		// A resume arrived meanwhile: read it and try again.
		if p, err = r.e.store.GetProcess(ctx, ex.OrganizationID, ex.State.ProcessID); err != nil {
			return nil, err
		}
	}
}

// logTick adds a tick's events to the execution's log. What the tick did
// is stored on its own record already and will not be done again, so an
// event written meanwhile (an answer's) is read and the tick's are added
// to it rather than lost to a retry of Advance.
func (r *run) logTick(ctx context.Context, n *node, events []cardflow.Event) error {
	for attempt := 0; ; attempt++ {
		r.outcomeEvents(n, steps.Outcome{Events: events})
		err := r.persist(ctx)
		if cardflow.ErrorCode(err) != cardflow.ECONFLICT || attempt == 4 {
			return err
		}
		ex := r.ex
		fresh, err := r.e.store.GetExecution(ctx, ex.OrganizationID, ex.WorkflowID, ex.WorkflowExecutionID)
		if err != nil {
			return err
		}
		if fresh.State.Phase != cardflow.PhaseWaiting || fresh.State.Wait != ex.State.Wait {
			return cardflow.Errorf(cardflow.ECONFLICT, "execution %s moved on while its timers ran", ex.WorkflowExecutionID)
		}
		*r.ex = *fresh
	}
}
