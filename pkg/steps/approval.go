package steps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// Approval sends a card as the card step does and waits until its listed
// approvers decide by its policy. It leaves by its default connection when
// approved, by on: rejected when rejected, by on: timeout when no decision
// came in time; its output is the approval's outcome and every answer.
// Answers arrive through the approval use cases (pkg/app), which record
// them on the approval record and claim the wait once the policy decides.
var Approval = Define[approvalConfig](cardflow.StepApproval, cardflow.StepTraits{
	Exits: []string{cardflow.ExitRejected, cardflow.ExitTimeout, cardflow.ExitError}, Delivers: true, PersonalCopies: true,
}, approvalSchema)

// MaxApprovers bounds an approval's list, so its record and output stay
// small.
const MaxApprovers = 50

type approvalConfig struct {
	cardConfig
	Approvers          []string `json:"approvers" want:"a list of people: Entra ID object ids, UPNs or e-mail addresses, each may be a {{ }} template"`
	Policy             *string  `json:"policy"`
	Count              *int     `json:"count" want:"a positive whole number"`
	ForbidSelfApproval string   `json:"forbid_self_approval"`
	AllowReassign      bool     `json:"allow_reassign"`
	timersConfig
}

func (c *approvalConfig) Validate() error {
	if c.CardID == nil {
		return fmt.Errorf("config.card_id is required for an approval step")
	}
	if err := c.cardConfig.Validate(); err != nil {
		return err
	}
	if len(c.Approvers) == 0 {
		return fmt.Errorf("config.approvers must list at least one approver: Entra ID object ids, UPNs or e-mail addresses")
	}
	if len(c.Approvers) > MaxApprovers {
		return fmt.Errorf("config.approvers lists %d approvers; the limit is %d", len(c.Approvers), MaxApprovers)
	}
	templated := false
	for i, a := range c.Approvers {
		a = strings.TrimSpace(a)
		switch {
		case a == "":
			return fmt.Errorf("config.approvers[%d] is empty", i)
		case strings.Contains(a, "{{"):
			templated = true
		case !cardflow.IsPerson(a):
			return fmt.Errorf("config.approvers[%d] %q is neither an Entra ID object id nor a UPN or e-mail address", i, a)
		}
		for _, prev := range c.Approvers[:i] {
			if strings.EqualFold(strings.TrimSpace(prev), a) {
				return fmt.Errorf("config.approvers[%d] %q is listed twice", i, a)
			}
		}
	}
	if c.Policy == nil {
		return fmt.Errorf("config.policy is required for an approval step: %s", strings.Join(cardflow.Policies, ", "))
	}
	if !slices.Contains(cardflow.Policies, *c.Policy) {
		return fmt.Errorf("config.policy must be %s, not %q", strings.Join(cardflow.Policies, ", "), *c.Policy)
	}
	switch {
	case *c.Policy == cardflow.PolicyQuorum && c.Count == nil:
		return fmt.Errorf("config.count is required with policy quorum: how many approvals decide")
	case *c.Policy != cardflow.PolicyQuorum && c.Count != nil:
		return fmt.Errorf("config.count applies to policy quorum only")
	case c.Count != nil && *c.Count < 1:
		return fmt.Errorf("config.count must be a positive whole number")
	case c.Count != nil && !templated && *c.Count > len(c.Approvers):
		return fmt.Errorf("config.count is %d, more than the %d approvers listed", *c.Count, len(c.Approvers))
	}
	return c.timersConfig.validate(c.timeout, c.Timeout)
}

func (c *approvalConfig) Check(env *expr.Env) (Step, error) {
	card, err := c.cardConfig.Check(env)
	if err != nil {
		return nil, err
	}
	s := &approvalStep{cardStep: card.(*cardStep), policy: *c.Policy, allowReassign: c.AllowReassign}
	if c.Count != nil {
		s.count = *c.Count
	}
	for i, a := range c.Approvers {
		v, err := env.CompileValue(strings.TrimSpace(a))
		if err != nil {
			return nil, fmt.Errorf("config.approvers[%d]: %w", i, err)
		}
		s.approvers = append(s.approvers, v)
	}
	if s.requester, err = compileValue(env, "forbid_self_approval", nilIfEmpty(c.ForbidSelfApproval)); err != nil {
		return nil, err
	}
	if s.timers, err = c.timersConfig.check(env); err != nil {
		return nil, err
	}
	return s, nil
}

func nilIfEmpty(s string) any {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return s
}

type approvalStep struct {
	*cardStep
	approvers     []*expr.Value
	policy        string
	count         int
	requester     *expr.Value // nil: self-approval is allowed
	allowReassign bool
	timers        *approvalTimers
}

// people is who the step's approvers are in this run: each entry resolved,
// a template to a person or a list of people.
type people struct {
	approvers []string
	requester string
}

func (s *approvalStep) resolve(ctx context.Context, r *Run) (*people, error) {
	p := &people{}
	add := func(i int, v any) error {
		id, ok := v.(string)
		id = strings.TrimSpace(id)
		if !ok || !cardflow.IsPerson(id) {
			return fmt.Errorf("config.approvers[%d] resolved to %s, not an Entra ID object id, UPN or e-mail address", i, describe(v))
		}
		for _, prev := range p.approvers {
			if strings.EqualFold(prev, id) {
				return nil // one person listed twice answers once
			}
		}
		p.approvers = append(p.approvers, id)
		return nil
	}
	for i, a := range s.approvers {
		v, err := a.Eval(ctx, r.Vars)
		if err != nil {
			return nil, fmt.Errorf("config.approvers[%d]: %v", i, err)
		}
		list, isList := v.([]any)
		if !isList {
			list = []any{v}
		}
		for _, item := range list {
			if err := add(i, item); err != nil {
				return nil, err
			}
		}
	}
	if len(p.approvers) > MaxApprovers {
		return nil, fmt.Errorf("config.approvers resolved to %d approvers; the limit is %d", len(p.approvers), MaxApprovers)
	}
	if s.policy == cardflow.PolicyQuorum && s.count > len(p.approvers) {
		return nil, fmt.Errorf("config.count is %d, more than the %d approvers the list resolved to", s.count, len(p.approvers))
	}
	if s.requester != nil {
		v, err := s.requester.Eval(ctx, r.Vars)
		if err != nil {
			return nil, fmt.Errorf("config.forbid_self_approval: %v", err)
		}
		if v != nil {
			req, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("config.forbid_self_approval resolved to %s, not a person's id", describe(v))
			}
			p.requester = strings.TrimSpace(req)
		}
	}
	return p, nil
}

// describe names a value in a message without repeating much of it.
func describe(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return fmt.Sprintf("a %d-byte value", len(b))
	}
	return string(b)
}

// Run resolves the card and the approvers, so a step that cannot open
// fails before it waits; the input shows who is asked.
func (s *approvalStep) Run(ctx context.Context, r *Run) Outcome {
	b, err := s.prepare(ctx, r)
	if err != nil {
		return Outcome{Reason: err.Error()}
	}
	p, err := s.resolve(ctx, r)
	if err != nil {
		return Outcome{Reason: err.Error()}
	}
	if err := cardflow.CheckApproverTargets(cardflow.TeamsProfile(r.Execution.State.Integrations, s.delivery), p.approvers); err != nil {
		return Outcome{Reason: fmt.Sprintf("config.approvers: %s", cardflow.ErrorMessage(err))}
	}
	msg := fmt.Sprintf("policy %s; approvers %s", s.policy, strings.Join(p.approvers, ", "))
	if s.policy == cardflow.PolicyQuorum {
		msg = fmt.Sprintf("policy quorum of %d; approvers %s", s.count, strings.Join(p.approvers, ", "))
	}
	return Outcome{
		Input: map[string]any{
			"card_id": b.card.CardID, "card_version": b.card.CardVersion, "data": b.data,
			"approvers": p.approvers, "policy": s.policy,
		},
		Events:   []cardflow.Event{{Type: cardflow.EventApprovalOpened, Message: msg}},
		Prepared: b,
	}
}

// Open records the approval, then sends its card: the one Run expanded,
// or expanded again when the wait opens in a later Advance. After a crash
// it finds the record it made and sends the card again, as a card step
// does.
func (s *approvalStep) Open(ctx context.Context, r *Run) error {
	prepared, ok := r.Prepared.(*preparedCard)
	var err error
	if !ok {
		prepared, err = s.prepare(ctx, r)
	}
	if err != nil {
		return fmt.Errorf("deliver the card of step %s: %w", r.StepID, err)
	}
	d := prepared.delivery(r, s.delivery)
	p, err := s.resolve(ctx, r)
	if err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "%s", err.Error())
	}
	ex := r.Execution
	b, err := json.Marshal(d.CardPayload)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	a := &cardflow.Approval{
		ApprovalID: cardflow.ApprovalIDOf(ex.WorkflowExecutionID, ex.State.Wait), OrganizationID: ex.OrganizationID,
		WorkflowID: ex.WorkflowID, ExecutionID: ex.WorkflowExecutionID, ProcessID: ex.State.ProcessID,
		StepID: r.StepID, StepName: ex.StepName(r.StepID), Wait: ex.State.Wait,
		CardID: d.CardID, CardVersion: d.CardVersion, CardHash: hex.EncodeToString(sum[:]), CardPayload: d.CardPayload,
		Approvers: p.approvers, Policy: s.policy, Count: s.count, Requester: p.requester, AllowReassign: s.allowReassign,
		Answers: []cardflow.ApprovalAnswer{}, Status: cardflow.ApprovalPending,
		CreatedOn: r.Now().UnixMilli(), Deadline: ex.State.WakeAt, Teams: d.Teams, Data: d.Data,
		TriggeredBy: ex.TriggeredBy, ForbidSelf: s.requester != nil,
	}
	if r.Delegations != nil {
		// Resolved once, as the approval opens: a delegation set later
		// moves it only when asked to (setDelegation's move_pending).
		ds, err := r.Delegations.GetDelegations(ctx, a.OrganizationID)
		if err != nil {
			return err
		}
		a.Delegate(ds, a.CreatedOn)
	}
	a.Sent = slices.Clone(a.Recipients())
	if err := s.timers.arm(ctx, r, a, a.CreatedOn); err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "%s", err.Error())
	}
	return deliverApproval(ctx, r, a)
}

// observeDecision tells the observer how the approval the step leaves by
// ended; a cancelled one is no decision.
func observeDecision(ctx context.Context, r *Run, a *cardflow.Approval) {
	if r.Observe == nil || a.Status == cardflow.ApprovalCancelled {
		return
	}
	r.Observe.ApprovalDecided(ctx, a.OrganizationID, strings.ToLower(a.Status), time.Duration(a.DecidedOn-a.CreatedOn)*time.Millisecond)
}

// Decide leaves the claimed wait as the approval record says: by its
// decision once it has one (even when the deadline claimed the wait a
// moment after the deciding answer, or an admin's override), else by the
// timeout. A resume that is not the approval's never decides it.
func (s *approvalStep) Decide(ctx context.Context, r *Run, w *cardflow.Wait) (Outcome, error) {
	ex := r.Execution
	for {
		a, err := r.Approvals.GetApproval(ctx, ex.OrganizationID, cardflow.ApprovalIDOf(ex.WorkflowExecutionID, w.Seq))
		if err != nil {
			return Outcome{}, err
		}
		if !a.Open() {
			updateApprovalCards(ctx, r, a)
			observeDecision(ctx, r, a)
		}
		switch {
		case a.Status == cardflow.ApprovalApproved || a.Status == cardflow.ApprovalRejected:
			out := Outcome{Output: a.Output(), Events: []cardflow.Event{{
				Type: cardflow.EventApprovalDecided, Actor: a.DecidedBy, Message: strings.ToLower(a.Status),
			}}}
			if a.Status == cardflow.ApprovalRejected {
				out.Exit = cardflow.ExitRejected
			}
			return out, nil
		case a.Status == cardflow.ApprovalCancelled:
			// Its execution ended meanwhile: this run's write of the
			// step fails, and the record stays as the end left it.
			return Outcome{}, cardflow.Errorf(cardflow.ECONFLICT, "approval %s was cancelled when its execution ended", a.ApprovalID)
		case a.Status == cardflow.ApprovalTimedOut:
			return Outcome{Output: a.Output(), Exit: cardflow.ExitTimeout, Reason: s.TimedOut()}, nil
		case a.Status == cardflow.ApprovalOverridden && a.Override != nil:
			o := a.Override
			out := Outcome{Output: a.Output(), Events: []cardflow.Event{{
				Type: cardflow.EventApprovalOverridden, Actor: o.Actor, Message: fmt.Sprintf("%s without the approvers: %s", o.Decision, o.Reason),
			}}}
			if o.Decision == cardflow.DecisionReject {
				out.Exit = cardflow.ExitRejected
			}
			return out, nil
		case a.Status == cardflow.ApprovalOverridden:
			// A resume that is not the approval's decides nothing: the
			// step fails rather than pass its body on as approved.
			return Outcome{Output: a.Output(), Reason: "the approval was resumed without a decision; approvals are decided through answerApproval, or by an admin through overrideApproval"}, nil
		}
		// Still pending: the wait was claimed by its deadline, or by a
		// resume that is not the approval's. Record which, so the approval
		// takes no more answers.
		a.DecidedOn = r.Now().UnixMilli()
		if w.Resume != nil {
			a.Status, a.DecidedBy = cardflow.ApprovalOverridden, w.Resume.Actor
		} else {
			a.Status = cardflow.ApprovalTimedOut
		}
		if err := r.Approvals.PutApproval(ctx, a); err != nil && cardflow.ErrorCode(err) != cardflow.ECONFLICT {
			return Outcome{}, err
		}
		// Written, or an answer came meanwhile: read it again.
	}
}

var approvalSchema = object("Sends a card to its approvers and waits until they decide by its policy.", []string{"card_id", "approvers", "policy"}, approvalProperties())

// approvalProperties are the config keys of an approval step: a card
// step's, the approvers and policy, and the timers.
func approvalProperties() map[string]Schema {
	props := cardProperties()
	people := list("People: Entra ID object ids, UPNs or e-mail addresses; each may be a {{ }} template.", typed("string", "A person."))
	props["approvers"] = people
	props["policy"] = enum("Who decides: first answer, all, a quorum of count, or each in turn (sequential).", cardflow.Policies...)
	props["count"] = Schema{"type": "integer", "minimum": 1, "description": "With policy quorum: how many approvals decide."}
	props["forbid_self_approval"] = typed("string", "A template giving the requester, who may then not approve, such as {{ input.requested_by }}.")
	props["allow_reassign"] = typed("boolean", "Whether an approver may hand the approval to someone else.")
	props["reminders"] = list("ISO 8601 durations after the step opens when the approvers who have not answered are reminded, such as PT24H.", typed("string", "A duration."))
	props["escalation"] = object("After a time, people are added to the approvers or replace those who have not answered.", []string{"after", "to"}, map[string]Schema{
		"after": typed("string", "An ISO 8601 duration after the step opens."),
		"to":    people,
		"mode":  enum("add (default) or replace.", cardflow.EscalationModes...),
	})
	props["due"] = typed("string", "An ISO 8601 duration after the step opens, before timeout, after which the approval is overdue; it ends nothing.")
	props["remind_when_due"] = typed("boolean", "Whether the approvers who have not answered are reminded when the approval becomes overdue (needs due).")
	return props
}
