package app

import (
	"context"
	"encoding/json"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// AnswerInput is an approver's answer to one card: it may claim only the
// wait that card was sent for, never a later wait of the same process.
type AnswerInput struct {
	ProcessID   string
	ExecutionID string
	// Wait is the sequence number of the wait the card was sent for.
	Wait int
	// Payload becomes the card step's output; its source is TEAMS.
	Payload map[string]any
}

// AnswerOutput is where an answer left the card's wait.
type AnswerOutput struct {
	// Resumed is set when this answer claimed the wait.
	Resumed bool
	// Wait is the card's wait as it stands: Resume is the answer that
	// claimed it (this one or an earlier one), TimedOut its deadline.
	Wait *cardflow.Wait
	// StepName names the card step.
	StepName string
}

// AnswerCard resumes the execution waiting on a card with the approver's
// answer, the way Resume does, but only the wait the card was sent for. An
// answer to a wait already claimed changes nothing and reports who
// claimed it, so a second click shows the first decision.
func (s *Runs) AnswerCard(ctx context.Context, in AnswerInput) (*AnswerOutput, error) {
	p, err := principal(ctx, cardflow.ScopeExecute)
	if err != nil {
		return nil, err
	}
	payload := make(map[string]any, len(in.Payload)+1)
	for k, v := range in.Payload {
		payload[k] = v
	}
	payload["source"] = cardflow.SourceTeams
	// The answer is stored, on the process record and as the card step's
	// output, so it nests no deeper than any stored value may. It was
	// decoded from JSON, so it encodes.
	b, _ := json.Marshal(payload)
	if err := cardflow.CheckNesting("the answer", b); err != nil {
		return nil, err
	}
	res := &cardflow.Resume{Source: cardflow.SourceTeams, Payload: payload, Actor: p.Actor, ReceivedOn: s.millis()}
	for {
		proc, err := s.store.GetProcess(ctx, p.OrganizationID, in.ProcessID)
		if err != nil {
			return nil, err
		}
		if proc.ExecutionID != in.ExecutionID {
			return nil, cardflow.Errorf(cardflow.ECONFLICT, "this card belongs to an earlier execution of process id %s, which has finished", in.ProcessID)
		}
		w := proc.Wait
		switch {
		case proc.Waits == in.Wait-1 && !proc.Closed:
			// The card went out a moment before its wait opened: keep the
			// answer for the wait, as Resume keeps an early resume.
			out, err := s.answerEarly(ctx, proc, in.Wait, res)
			if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
				continue // the wait opened meanwhile: claim it
			}
			return out, err
		case proc.Waits < in.Wait:
			return nil, cardflow.Errorf(cardflow.ECONFLICT, "the card's request is not open for answers yet; try again in a moment")
		case w == nil || w.Seq != in.Wait:
			return nil, cardflow.Errorf(cardflow.ECONFLICT, "this card's request was settled and the workflow has moved on")
		case w.Claimed():
			return s.answerOutput(ctx, proc, w, false)
		case w.Deadline > 0 && res.ReceivedOn >= w.Deadline:
			// Past its deadline the wait is over, as for Resume, even before
			// the runner marks it.
			over := *w
			over.TimedOut = true
			return s.answerOutput(ctx, proc, &over, false)
		case proc.Closed:
			return nil, cardflow.Errorf(cardflow.ECONFLICT, "the execution %s of this card has ended; there is nothing to answer", proc.ExecutionID)
		}
		w.Resume = res
		err = s.store.PutProcess(ctx, proc)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue // a resume, a timeout or a cancel came first: look again
		}
		if err != nil {
			return nil, err
		}
		ref := cardflow.ExecutionRef{OrganizationID: proc.OrganizationID, WorkflowID: proc.WorkflowID, ExecutionID: proc.ExecutionID}
		if err := s.runner.Wake(ctx, ref, w); err != nil {
			return nil, err
		}
		return s.answerOutput(ctx, proc, w, true)
	}
}

// answerEarly keeps an answer for the wait about to open, unless one is
// kept already.
func (s *Runs) answerEarly(ctx context.Context, proc *cardflow.Process, wait int, res *cardflow.Resume) (*AnswerOutput, error) {
	w := &cardflow.Wait{Seq: wait}
	if e := proc.Early; e != nil && res.ReceivedOn-e.ReceivedOn <= s.earlyResume.Milliseconds() {
		w.Resume = e
		return s.answerOutput(ctx, proc, w, false)
	}
	proc.Early = res
	if err := s.store.PutProcess(ctx, proc); err != nil {
		return nil, err
	}
	w.Resume = res
	return s.answerOutput(ctx, proc, w, true)
}

// answerOutput adds the card step's name to a claimed wait.
func (s *Runs) answerOutput(ctx context.Context, proc *cardflow.Process, w *cardflow.Wait, resumed bool) (*AnswerOutput, error) {
	ex, err := s.store.GetExecution(ctx, proc.OrganizationID, proc.WorkflowID, proc.ExecutionID)
	if err != nil {
		return nil, err
	}
	step := w.StepID
	if step == "" {
		step = ex.State.StepID
	}
	out := &AnswerOutput{Resumed: resumed, Wait: w, StepName: step}
	for _, st := range ex.WorkflowDetails.WorkflowSteps {
		if st.ID == step {
			out.StepName = st.Name
		}
	}
	return out, nil
}
