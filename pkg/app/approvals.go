package app

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// MaxCommentLength bounds an approver's comment.
const MaxCommentLength = 2000

// ApprovalAnswer is one answer to an approval, from any channel.
type ApprovalAnswer struct {
	ApprovalID string
	// IDs are who the channel vouches the person is: the API key's person,
	// the Teams account's object id and UPN.
	IDs      []string
	Actor    string
	Channel  string
	Decision string
	Comment  string
}

// ApprovalResult is what came of an answer that counted.
type ApprovalResult struct {
	Approval *cardflow.Approval
	// Decided is set when this answer decided the approval.
	Decided bool
}

// answerApproval records an answer when it counts, and claims the step's
// wait once the policy decides. A refusal changes nothing but the audit
// trail, and is returned as the error.
func (s *Answers) answerApproval(ctx context.Context, org string, in ApprovalAnswer) (*ApprovalResult, error) {
	decision, ok := cardflow.ParseDecision(in.Decision)
	if !ok {
		return nil, cardflow.Errorf(cardflow.EINVALID, "decision must be approve or reject")
	}
	if utf8.RuneCountInString(in.Comment) > MaxCommentLength {
		return nil, cardflow.Errorf(cardflow.EINVALID, "comment is longer than %d characters", MaxCommentLength)
	}
	checked := false
	for {
		a, err := s.store.GetApproval(ctx, org, in.ApprovalID)
		if err != nil {
			return nil, err
		}
		now := s.millis()
		if !checked {
			checked = true
			if s.closeEnded(ctx, a) {
				continue // closed: judge the answer again
			}
		}
		var refusal *cardflow.Refusal
		if a.Open() && a.Deadline > 0 && now >= a.Deadline {
			// Past its deadline the step is over even before the runner
			// marks it so.
			refusal = &cardflow.Refusal{Reason: cardflow.RefusedDecided, Message: fmt.Sprintf("approval %s timed out", a.ApprovalID)}
		} else {
			refusal = a.Answer(in.IDs, cardflow.ApprovalAnswer{Actor: in.Actor, At: now, Decision: decision, Comment: in.Comment, Channel: in.Channel})
		}
		if refusal != nil {
			s.refused(ctx, a, in.Actor, in.Channel, refusal)
			return nil, refusal.Error()
		}
		err = s.store.PutApproval(ctx, a)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue // another answer came first: judge this one again
		}
		if err != nil {
			return nil, err
		}
		msg := fmt.Sprintf("%s through %s", decision, in.Channel)
		if last := a.Answers[len(a.Answers)-1]; last.OnBehalfOf != "" {
			msg += ", on behalf of " + last.OnBehalfOf
		}
		if in.Comment != "" {
			msg += ": " + in.Comment
		}
		s.audit(ctx, a, cardflow.Event{At: now, Type: cardflow.EventApprovalAnswered, Actor: in.Actor, Message: msg})
		s.observe.CardAnswered(ctx, a.OrganizationID, string(decision), time.Duration(now-a.CreatedOn)*time.Millisecond)
		decided := !a.Open()
		s.deliverNext(ctx, a)
		if decided {
			if err := s.claimApproval(ctx, a, in.Actor); err != nil {
				return nil, err
			}
		}
		return &ApprovalResult{Approval: a, Decided: decided}, nil
	}
}

// claimApproval resumes the approval step with its decision: it claims the
// step's wait, or keeps the decision for the wait about to open (the card
// goes out a moment before it does). A wait claimed already (by its
// deadline, by resumeworkflow) needs nothing: the step reads the decision
// from the approval record as it leaves.
func (s *Answers) claimApproval(ctx context.Context, a *cardflow.Approval, actor string) error {
	res := &cardflow.Resume{Source: cardflow.SourceApproval, Payload: a.Output(), Actor: actor, ReceivedOn: s.millis()}
	for {
		proc, err := s.store.GetProcess(ctx, a.OrganizationID, a.ProcessID)
		if err != nil {
			return err
		}
		if proc.ExecutionID != a.ExecutionID || proc.Closed {
			return nil
		}
		w := proc.Wait
		switch {
		case proc.Waits == a.Wait-1:
			proc.Early = res
		case w == nil || w.Seq != a.Wait || w.Claimed():
			return nil
		default:
			w.Resume = res
		}
		err = s.store.PutProcess(ctx, proc)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue
		}
		if err != nil || proc.Early == res {
			return err
		}
		return s.runner.Wake(ctx, cardflow.ExecutionRef{OrganizationID: a.OrganizationID, WorkflowID: a.WorkflowID, ExecutionID: a.ExecutionID}, w)
	}
}

// audit adds an approval's event to its execution's log. The runner owns
// an execution while it runs a step, so the event is added only while the
// execution waits, sleeps or has finished; otherwise (a late answer while
// later steps run) it is logged, and the approval record keeps every
// answer that counted. A failure to add it is logged, never the caller's
// error: the answer itself is stored.
func (s *Answers) audit(ctx context.Context, a *cardflow.Approval, ev cardflow.Event) {
	ev.StepID, ev.Step = a.StepID, a.StepName
	for range 5 {
		ex, err := s.store.GetExecution(ctx, a.OrganizationID, a.WorkflowID, a.ExecutionID)
		if err != nil {
			s.log.WarnContext(ctx, "approval event not added to the execution's log", "approval", a.ApprovalID, "type", ev.Type, "error", err)
			return
		}
		if ex.Open() && ex.State.Phase == "" {
			s.log.InfoContext(ctx, "approval event while the execution runs a step", "approval", a.ApprovalID, "type", ev.Type, "actor", ev.Actor, "message", ev.Message)
			return
		}
		ex.WorkflowEventLog.Events = append(ex.WorkflowEventLog.Events, ev)
		if n := len(ex.WorkflowEventLog.Events); n > maxEvents {
			ex.WorkflowEventLog.Events = append(ex.WorkflowEventLog.Events[:0:0], ex.WorkflowEventLog.Events[n-maxEvents:]...)
		}
		ex.WorkflowEventLog.Total++
		ex.ModifiedOn = max(s.millis(), ex.ModifiedOn+1)
		err = s.store.PutExecution(ctx, ex)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue
		}
		if err != nil {
			s.log.WarnContext(ctx, "approval event not added to the execution's log", "approval", a.ApprovalID, "type", ev.Type, "error", err)
			return
		}
		if s.notify != nil {
			s.notify.ExecutionChanged(ex.Ref())
		}
		return
	}
}

// maxEvents is the engine's bound on an execution's log (engine.MaxEvents),
// which app does not import.
const maxEvents = 200

// person returns the caller, who must hold scope and whose key must name
// a person.
func person(ctx context.Context, scope string) (*cardflow.Principal, error) {
	p, err := principal(ctx, scope)
	if err != nil {
		return nil, err
	}
	if p.Person == "" {
		return nil, cardflow.Errorf(cardflow.EFORBIDDEN, "this API key acts for no person, so it cannot answer approvals; create one with cardflow keys create --actor <person>")
	}
	return p, nil
}

// AnswerApprovalInput is the body of answerApproval.
type AnswerApprovalInput struct {
	ApprovalID string `json:"approval_id"`
	Decision   string `json:"decision"`
	Comment    string `json:"comment"`
}

// AnswerApproval answers an approval as the API key's person. It counts
// only when that person is a listed approver (else EFORBIDDEN, and
// nothing changes).
func (s *Answers) AnswerApproval(ctx context.Context, in AnswerApprovalInput) (*ApprovalResult, error) {
	p, err := person(ctx, cardflow.ScopeExecute)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.ApprovalID) == "" {
		return nil, cardflow.Errorf(cardflow.EINVALID, "approval_id is required")
	}
	if in.Decision != cardflow.DecisionApprove && in.Decision != cardflow.DecisionReject {
		return nil, cardflow.Errorf(cardflow.EINVALID, "decision must be approve or reject")
	}
	return s.answerApproval(ctx, p.OrganizationID, ApprovalAnswer{
		ApprovalID: in.ApprovalID, IDs: []string{p.Person}, Actor: p.Person, Channel: cardflow.ChannelAPI,
		Decision: in.Decision, Comment: in.Comment,
	})
}

// ReassignApprovalInput is the body of reassignApproval.
type ReassignApprovalInput struct {
	ApprovalID string `json:"approval_id"`
	To         string `json:"to"`
}

// ReassignApproval hands the key's person's part of an approval to
// another person, when the step allows it.
func (s *Answers) ReassignApproval(ctx context.Context, in ReassignApprovalInput) (*cardflow.Approval, error) {
	p, err := person(ctx, cardflow.ScopeExecute)
	if err != nil {
		return nil, err
	}
	to := strings.TrimSpace(in.To)
	switch {
	case strings.TrimSpace(in.ApprovalID) == "":
		return nil, cardflow.Errorf(cardflow.EINVALID, "approval_id is required")
	case !cardflow.IsPerson(to):
		return nil, cardflow.Errorf(cardflow.EINVALID, "to must name a person: an Entra ID object id, UPN or e-mail address")
	}
	return s.reassign(ctx, p.OrganizationID, in.ApprovalID, p.Person, to, p.Person, nil)
}

// reassign hands from's part of an approval to to, as actor, and records
// it in the approval's reassignments; standIn, when set, is recorded too
// (a delegation moves the part). Only a step with allow_reassign takes a
// reassignment that is no delegation's.
func (s *Answers) reassign(ctx context.Context, org, approvalID, from, to, actor string, standIn *cardflow.StandIn) (*cardflow.Approval, error) {
	for {
		a, err := s.store.GetApproval(ctx, org, approvalID)
		if err != nil {
			return nil, err
		}
		if !a.AllowReassign && standIn == nil {
			return nil, cardflow.Errorf(cardflow.ECONFLICT, "step %q does not allow reassignment (its config has no allow_reassign: true)", a.StepName)
		}
		now := s.millis()
		from, refusal := a.Reassign([]string{from}, to)
		if refusal != nil {
			s.refused(ctx, a, actor, "reassign", refusal)
			return nil, refusal.Error()
		}
		a.Reassignments = append(a.Reassignments, cardflow.ApprovalReassignment{From: from, To: to, Actor: actor, At: now})
		msg := fmt.Sprintf("from %s to %s", from, to)
		if standIn != nil {
			a.StandIns = append(a.StandIns, *standIn)
			msg += fmt.Sprintf(" (delegation %s)", standIn.DelegationID)
		}
		err = s.store.PutApproval(ctx, a)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue
		}
		if err != nil {
			return nil, err
		}
		s.audit(ctx, a, cardflow.Event{At: now, Type: cardflow.EventApprovalReassigned, Actor: actor, Message: msg})
		// The reassignment is stored: the card follows through the
		// runner, and a runner that cannot be reached now sends it at
		// the step's next timer.
		if err := s.nudgeApproval(ctx, a); err != nil {
			s.log.WarnContext(ctx, "the card of a reassigned approval waits for the step's next timer", "approval", a.ApprovalID, "error", cardflow.ErrorMessage(err))
		}
		return a, nil
	}
}

// GetApproval returns one approval of the caller's organization.
func (s *Approvals) GetApproval(ctx context.Context, approvalID string) (*cardflow.Approval, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	a, err := s.store.GetApproval(ctx, p.OrganizationID, approvalID)
	if err != nil {
		return nil, err
	}
	a.Overdue = a.IsOverdue(s.millis())
	return a, nil
}

// PendingApprovalsInput selects a page of getPendingApprovals.
type PendingApprovalsInput struct {
	Approver, WorkflowID string
	// OlderThan keeps approvals open at least this long; 0 keeps all.
	OlderThan time.Duration
	// Overdue, when set, keeps the approvals past their due (true) or
	// not (false).
	Overdue *bool
	Page    cardflow.ListOptions[cardflow.ApprovalKey]
}

// ListPendingApprovals lists the open approvals of the caller's
// organization, newest first. A key that acts for a person and is no admin
// key sees what waits on that person unless it names another approver: its
// inbox, not everyone's.
func (s *Approvals) ListPendingApprovals(ctx context.Context, in PendingApprovalsInput) (cardflow.Page[*cardflow.Approval, cardflow.ApprovalKey], error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return cardflow.Page[*cardflow.Approval, cardflow.ApprovalKey]{}, err
	}
	f := cardflow.ApprovalFilter{Approver: strings.TrimSpace(in.Approver), WorkflowID: in.WorkflowID}
	if f.Approver == "" && p.Person != "" && !p.Has(cardflow.ScopeAdmin) {
		f.Approver = p.Person
	}
	if in.OlderThan > 0 {
		f.CreatedBefore = s.now().Add(-in.OlderThan).UnixMilli()
	}
	f.Overdue, f.Now = in.Overdue, s.millis()
	page, err := s.store.ListPendingApprovals(ctx, p.OrganizationID, f, in.Page)
	for _, a := range page.Items {
		a.Overdue = a.IsOverdue(f.Now)
	}
	return page, err
}

// answerCardApproval answers an approval's card through Teams: the
// decision is the card's decision data or its Action.Execute verb. What
// came of it is a note for the card that replaces the approver's.
func (s *Answers) answerCardApproval(ctx context.Context, a *cardflow.CardAnswer, approvalID string) (*AnswerOutput, cardflow.CardOutcome, error) {
	decision, _ := a.Payload["decision"].(string)
	if decision == "" {
		decision, _ = a.Payload["verb"].(string)
	}
	comment, _ := a.Payload["comment"].(string)
	res, err := s.answerApproval(ctx, a.OrganizationID, ApprovalAnswer{
		ApprovalID: approvalID, IDs: a.Identities, Actor: a.Actor, Channel: cardflow.ChannelTeams, Decision: decision, Comment: comment,
	})
	switch code := cardflow.ErrorCode(err); {
	case code == cardflow.EFORBIDDEN || code == cardflow.ECONFLICT || code == cardflow.EINVALID:
		return &AnswerOutput{}, cardflow.CardOutcome{Note: s.refusalNote(ctx, a.OrganizationID, approvalID, err)}, nil
	case err != nil:
		return nil, cardflow.CardOutcome{}, err
	}
	ap := res.Approval
	d, _ := cardflow.ParseDecision(decision)
	note := fmt.Sprintf("Your answer (%s) is recorded; the approval waits for the other approvers.", d)
	if res.Decided {
		note = fmt.Sprintf("Your answer (%s) is recorded; the approval is %s.", d, strings.ToLower(ap.Status))
	}
	return &AnswerOutput{Resumed: res.Decided, StepName: ap.StepName}, cardflow.CardOutcome{Title: ap.StepName, Note: note}, nil
}
