package engine

import (
	"context"
	"fmt"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
)

// openWait starts a card or wait step: the execution is recorded as waiting
// first, then the card goes out and the wait opens on the process record.
// If the process dies in between, checkWait finds the wait not yet open and
// opens it then.
func (r *run) openWait(ctx context.Context, n *node, started int64) (*Result, error) {
	ex := r.ex
	p, err := r.e.store.GetProcess(ctx, ex.OrganizationID, ex.State.ProcessID)
	if err != nil {
		return nil, err
	}
	var input any
	if n.step.Type == cardflow.StepCard {
		d, err := r.cardDelivery(ctx, n)
		if err != nil {
			return nil, r.leave(ctx, n, outcome{reason: err.Error()}, started)
		}
		input = map[string]any{"card_id": d.CardID, "card_version": d.CardVersion, "data": d.Data}
	}
	ex.State.Phase, ex.State.Wait = cardflow.PhaseWaiting, p.Waits+1
	ex.State.WakeAt = 0
	if n.timeout > 0 {
		ex.State.WakeAt = r.e.now().Add(n.timeout).UnixMilli()
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
	return nil, nil
}

// cardDelivery resolves the step's card and expands it with the step's data.
func (r *run) cardDelivery(ctx context.Context, n *node) (*cardflow.Delivery, error) {
	ex := r.ex
	id, _ := n.step.Config["card_id"].(string)
	var card *cardflow.Card
	var err error
	if v, ok := n.step.Config["card_version"].(float64); ok {
		card, err = r.e.store.GetCard(ctx, ex.OrganizationID, id, int(v))
	} else {
		card, err = r.e.store.GetLatestActiveCard(ctx, ex.OrganizationID, id)
	}
	if err != nil {
		return nil, fmt.Errorf("card %s: %s", id, cardflow.ErrorMessage(err))
	}
	var data any = map[string]any{}
	if n.data != nil {
		if data, err = n.data.Eval(ctx, r.vars()); err != nil {
			return nil, fmt.Errorf("config.data: %v", err)
		}
	}
	// The card's ${...} bindings read the step's data: the delivery
	// carries the card as the approver will see it.
	payload, err := cards.ExpandCard(card.CardPayload, data)
	if err != nil {
		return nil, fmt.Errorf("card %s version %d: %s", card.CardID, card.CardVersion, cardflow.ErrorMessage(err))
	}
	return &cardflow.Delivery{
		DeliveryID:     cardflow.NewID(r.e.now()),
		OrganizationID: ex.OrganizationID, WorkflowID: ex.WorkflowID, ExecutionID: ex.WorkflowExecutionID,
		StepID: n.step.ID, ProcessID: ex.State.ProcessID,
		CardID: card.CardID, CardVersion: card.CardVersion, CardPayload: payload, Data: data,
		CreatedOn: r.millis(), Wait: ex.State.Wait,
		Teams: cardflow.TeamsProfile(ex.State.Integrations, n.step.Config),
	}, nil
}

// checkWait looks at the wait the execution is in: opens it if a crash left
// it unopened, leaves the step if a resume or the deadline claimed it, and
// otherwise tells the runner to wait.
func (r *run) checkWait(ctx context.Context, n *node) (*Result, error) {
	ex := r.ex
	p, err := r.e.store.GetProcess(ctx, ex.OrganizationID, ex.State.ProcessID)
	if err != nil {
		return nil, err
	}
	if p.Waits < ex.State.Wait {
		if p, err = r.open(ctx, n, p); err != nil {
			if cardflow.ErrorCode(err) == cardflow.EINVALID {
				// The step's delivery cannot work as configured (a
				// missing secret, a webhook that refuses the card):
				// retrying will not help, so the step fails.
				log := ex.CondensedLogs[n.step.ID]
				return nil, r.leave(ctx, n, outcome{input: log.Input, reason: "delivery: " + cardflow.ErrorMessage(err)}, log.StartedOn)
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
	switch {
	case w.Resume != nil:
		msg := "by " + w.Resume.Actor
		if w.Resume.Source != "" {
			msg += " from " + w.Resume.Source
		}
		r.event(cardflow.EventResumed, n, msg)
		// The resume changed the execution, as a cancel does.
		ex.ModifiedBy = &w.Resume.Actor
		return nil, r.leave(ctx, n, outcome{input: input, output: w.Resume.Payload}, started)
	case w.TimedOut:
		return nil, r.leave(ctx, n, outcome{input: input, exit: cardflow.ExitTimeout, reason: fmt.Sprintf("timed out after %v", n.step.Config["timeout"])}, started)
	case w.Deadline > 0 && r.millis() >= w.Deadline:
		w.TimedOut = true
		if err := r.e.store.PutProcess(ctx, p); err != nil {
			return nil, err // a conflict means a resume came first: Advance reads again
		}
		return nil, nil
	}
	return &Result{Status: cardflow.ExecWaiting, WakeAt: w.Deadline, Wait: w, ProcessID: p.ProcessID}, nil
}

// open sends the step's card and opens the wait on the process record,
// taking over a resume that came early enough.
func (r *run) open(ctx context.Context, n *node, p *cardflow.Process) (*cardflow.Process, error) {
	ex := r.ex
	if n.step.Type == cardflow.StepCard {
		d, err := r.cardDelivery(ctx, n)
		if err == nil {
			err = r.e.deliver.Deliver(ctx, d)
		}
		if err != nil {
			return nil, fmt.Errorf("deliver the card of step %s: %w", n.step.ID, err)
		}
	}
	for {
		now := r.millis()
		p.Waits = ex.State.Wait
		p.Wait = &cardflow.Wait{Seq: ex.State.Wait, StepID: n.step.ID, OpenedOn: now, Deadline: ex.State.WakeAt}
		if early := p.Early; early != nil {
			p.Early = nil
			if now-early.ReceivedOn <= r.e.early.Milliseconds() {
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
