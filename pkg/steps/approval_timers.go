package steps

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// MaxReminders bounds an approval's reminders.
const MaxReminders = 10

// Ticker is a Waiter with timers of its own before its deadline (an
// approval's reminders and escalation). The engine calls Tick whenever it
// finds the wait open and unclaimed: when a timer is due, when a runner
// is woken without a claim (a reassignment), and after a restart.
type Ticker interface {
	Waiter
	// Tick does what is due at r.Now and says when the next timer is due.
	// An error is tried again, so what Tick does must be safe to repeat.
	Tick(ctx context.Context, r *Run, w *cardflow.Wait) (Tick, error)
}

// Tick is what a Ticker did.
type Tick struct {
	// Events go to the execution's log; the engine fills in their step.
	Events []cardflow.Event
	// Next is when to tick again (epoch ms; 0: no timer is left).
	Next int64
	// Decided is set when the tick decided the step (an escalation left a
	// quorum out of reach): the engine claims the wait.
	Decided bool
}

// escalationConfig is an approval's escalation: after a time, to people
// who are added to the approvers or replace those who have not answered.
type escalationConfig struct {
	After string   `json:"after"`
	To    []string `json:"to" want:"a list of people: Entra ID object ids, UPNs or e-mail addresses, each may be a {{ }} template"`
	Mode  string   `json:"mode"`
}

// timersConfig is the part of an approval's config its timers read.
type timersConfig struct {
	Reminders  []string          `json:"reminders" want:"a list of ISO 8601 durations after the step opens, such as [\"PT24H\", \"PT48H\"]"`
	Escalation *escalationConfig `json:"escalation" want:"an object such as {\"after\": \"PT72H\", \"to\": [\"lead@example.com\"], \"mode\": \"add\"}"`
	// Due marks the approval overdue this long after it opens, without
	// ending it; RemindWhenDue reminds those who have not answered then.
	Due           string `json:"due"`
	RemindWhenDue bool   `json:"remind_when_due"`

	reminders []time.Duration
	after     time.Duration
	due       time.Duration
}

// validate checks the timers against each other and the step's timeout
// (0: none): a timer at or after the timeout would never fire.
func (c *timersConfig) validate(timeout time.Duration, timeoutText string) error {
	if len(c.Reminders) > MaxReminders {
		return fmt.Errorf("config.reminders lists %d reminders; the limit is %d", len(c.Reminders), MaxReminders)
	}
	c.reminders = nil
	for i, s := range c.Reminders {
		d, err := duration(fmt.Sprintf("reminders[%d]", i), s)
		if err != nil {
			return err
		}
		if d == 0 {
			return fmt.Errorf("config.reminders[%d] is empty; give a duration after the step opens, such as PT24H", i)
		}
		if i > 0 && d <= c.reminders[i-1] {
			return fmt.Errorf("config.reminders[%d] %s is not later than config.reminders[%d] %s: list reminders in the order they fire", i, s, i-1, c.Reminders[i-1])
		}
		if timeout > 0 && d >= timeout {
			return fmt.Errorf("config.reminders[%d] %s is not before the step's timeout %s, so it would never fire", i, s, timeoutText)
		}
		c.reminders = append(c.reminders, d)
	}
	var err error
	if c.due, err = duration("due", c.Due); err != nil {
		return err
	}
	switch {
	case c.due > 0 && timeout > 0 && c.due >= timeout:
		return fmt.Errorf("config.due %s is not before the step's timeout %s: an approval is due before it times out", c.Due, timeoutText)
	case c.RemindWhenDue && c.due == 0:
		return fmt.Errorf("config.remind_when_due needs config.due: when the approval is due, such as PT48H")
	case c.RemindWhenDue && len(c.Reminders) >= MaxReminders:
		return fmt.Errorf("config.reminders lists %d reminders and config.remind_when_due adds one; the limit is %d", len(c.Reminders), MaxReminders)
	}
	e := c.Escalation
	if e == nil {
		return nil
	}
	if strings.TrimSpace(e.After) == "" {
		return fmt.Errorf("config.escalation.after is required: how long after the step opens it escalates, such as PT72H")
	}
	if c.after, err = duration("escalation.after", e.After); err != nil {
		return err
	}
	if timeout > 0 && c.after >= timeout {
		return fmt.Errorf("config.escalation.after %s is not before the step's timeout %s, so it would never fire", e.After, timeoutText)
	}
	if e.Mode == "" {
		e.Mode = cardflow.EscalateAdd
	}
	if !slices.Contains(cardflow.EscalationModes, e.Mode) {
		return fmt.Errorf("config.escalation.mode must be %s, not %q", strings.Join(cardflow.EscalationModes, " or "), e.Mode)
	}
	if len(e.To) == 0 {
		return fmt.Errorf("config.escalation.to must list at least one person: Entra ID object ids, UPNs or e-mail addresses")
	}
	if len(e.To) > MaxApprovers {
		return fmt.Errorf("config.escalation.to lists %d people; the limit is %d", len(e.To), MaxApprovers)
	}
	for i, p := range e.To {
		p = strings.TrimSpace(p)
		switch {
		case p == "":
			return fmt.Errorf("config.escalation.to[%d] is empty", i)
		case !strings.Contains(p, "{{") && !cardflow.IsPerson(p):
			return fmt.Errorf("config.escalation.to[%d] %q is neither an Entra ID object id nor a UPN or e-mail address", i, p)
		}
	}
	return nil
}

// approvalTimers are an approval step's timers, compiled.
type approvalTimers struct {
	reminders []time.Duration
	after     time.Duration // 0: no escalation
	due       time.Duration // 0: never overdue
	to        []*expr.Value
	mode      string
}

func (c *timersConfig) check(env *expr.Env) (*approvalTimers, error) {
	t := &approvalTimers{reminders: c.reminders, due: c.due}
	if c.RemindWhenDue && !slices.Contains(t.reminders, c.due) {
		t.reminders = append(slices.Clone(t.reminders), c.due)
		slices.Sort(t.reminders)
	}
	if e := c.Escalation; e != nil {
		t.after, t.mode = c.after, e.Mode
		for i, p := range e.To {
			v, err := env.CompileValue(strings.TrimSpace(p))
			if err != nil {
				return nil, fmt.Errorf("config.escalation.to[%d]: %w", i, err)
			}
			t.to = append(t.to, v)
		}
	}
	return t, nil
}

// arm sets the approval's timers as the step opens at opened (epoch ms),
// resolving the escalation's people.
func (t *approvalTimers) arm(ctx context.Context, r *Run, a *cardflow.Approval, opened int64) error {
	for _, d := range t.reminders {
		a.Reminders = append(a.Reminders, opened+d.Milliseconds())
	}
	if t.due > 0 {
		a.Due = opened + t.due.Milliseconds()
	}
	if t.after == 0 {
		return nil
	}
	to, err := resolvePeople(ctx, r, "escalation.to", t.to)
	if err != nil {
		return err
	}
	a.Escalation = &cardflow.ApprovalEscalation{At: opened + t.after.Milliseconds(), To: to, Mode: t.mode}
	return nil
}

// resolvePeople evaluates a list of people, each entry a person or a
// template that gives a person or a list of people; one person listed
// twice is kept once.
func resolvePeople(ctx context.Context, r *Run, key string, list []*expr.Value) ([]string, error) {
	var out []string
	for i, v := range list {
		got, err := v.Eval(ctx, r.Vars)
		if err != nil {
			return nil, fmt.Errorf("config.%s[%d]: %v", key, i, err)
		}
		items, isList := got.([]any)
		if !isList {
			items = []any{got}
		}
		for _, item := range items {
			id, ok := item.(string)
			id = strings.TrimSpace(id)
			if !ok || !cardflow.IsPerson(id) {
				return nil, fmt.Errorf("config.%s[%d] resolved to %s, not an Entra ID object id, UPN or e-mail address", key, i, describe(item))
			}
			if !slices.ContainsFunc(out, func(p string) bool { return strings.EqualFold(p, id) }) {
				out = append(out, id)
			}
		}
	}
	if len(out) > MaxApprovers {
		return nil, fmt.Errorf("config.%s resolved to %d people; the limit is %d", key, len(out), MaxApprovers)
	}
	return out, nil
}

// Tick escalates and reminds when due, and sends the card to approvers
// who do not have it yet (brought in by an escalation or a reassignment).
// A reminder is marked sent before it goes out, so a crash in between
// loses that reminder rather than sending it twice; a card is marked sent
// after it goes out, so a crash sends it twice rather than never. A
// decided approval does nothing.
func (s *approvalStep) Tick(ctx context.Context, r *Run, w *cardflow.Wait) (Tick, error) {
	ex := r.Execution
	id := cardflow.ApprovalIDOf(ex.WorkflowExecutionID, w.Seq)
	var tick Tick
	for {
		a, err := r.Approvals.GetApproval(ctx, ex.OrganizationID, id)
		if err != nil {
			return Tick{}, err
		}
		now := r.Now().UnixMilli()
		var events []cardflow.Event
		var remind []string
		if msg := a.Escalate(now); msg != "" {
			events = append(events, cardflow.Event{At: now, Type: cardflow.EventApprovalEscalated, Actor: cardflow.ActorTimer, Message: msg})
		}
		if a.DueReminder(now) {
			remind = a.Waiting()
		}
		if events == nil && remind == nil {
			tick.Next = a.NextTimer()
			break
		}
		if err := r.Approvals.PutApproval(ctx, a); cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue // an answer came meanwhile: judge the timers again
		} else if err != nil {
			return Tick{}, err
		}
		tick.Events = append(tick.Events, events...)
		if !a.Open() {
			tick.Decided = true
			return tick, nil
		}
		if len(remind) > 0 {
			if _, err := s.resend(ctx, r, a, remind, cardflow.NoticeReminder); err != nil {
				return Tick{}, err
			}
			tick.Events = append(tick.Events, cardflow.Event{At: now, Type: cardflow.EventApprovalReminded, Actor: cardflow.ActorTimer,
				Message: fmt.Sprintf("reminder %d of %d to %s", a.RemindersSent, len(a.Reminders), strings.Join(remind, ", "))})
		}
	}
	sent, err := s.sendUnsent(ctx, r, id)
	if err != nil {
		return Tick{}, err
	}
	return Tick{Events: append(tick.Events, sent...), Next: tick.Next}, nil
}

// sendUnsent sends the card to the approvers who do not have it, then
// records them as sent. When an answer changes the record meanwhile, the
// record is read again and nobody gets the card twice from one tick.
func (s *approvalStep) sendUnsent(ctx context.Context, r *Run, id string) ([]cardflow.Event, error) {
	ex := r.Execution
	var delivered []string
	notSent := map[string]string{}
	for {
		a, err := r.Approvals.GetApproval(ctx, ex.OrganizationID, id)
		if err != nil {
			return nil, err
		}
		to := a.Unsent()
		if !a.Open() || len(to) == 0 {
			break
		}
		var fresh []string
		for _, p := range to {
			if !slices.Contains(delivered, p) {
				fresh = append(fresh, p)
			}
		}
		if len(fresh) > 0 {
			failed, err := s.resend(ctx, r, a, fresh, cardflow.NoticeAdded)
			if err != nil {
				return nil, err
			}
			maps.Copy(notSent, failed)
			delivered = append(delivered, fresh...)
		}
		a.Sent = append(a.Sent, to...)
		err = r.Approvals.PutApproval(ctx, a)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	var sent, failed []string
	for _, p := range delivered {
		if reason, ok := notSent[p]; ok {
			failed = append(failed, p+": "+reason)
		} else {
			sent = append(sent, p)
		}
	}
	var events []cardflow.Event
	if len(sent) > 0 {
		events = append(events, cardflow.Event{At: r.Now().UnixMilli(), Type: cardflow.EventApprovalSent, Actor: cardflow.ActorTimer,
			Message: "card sent to " + strings.Join(sent, ", ")})
	}
	if len(failed) > 0 {
		// The approval waits on: the others' answers still count, and an
		// admin can reassign to someone the card can reach.
		events = append(events, cardflow.Event{At: r.Now().UnixMilli(), Type: cardflow.EventApprovalSent, Actor: cardflow.ActorTimer,
			Message: "card not sent to " + strings.Join(failed, "; ")})
	}
	return events, nil
}

// resend sends the approval's card, as its approvers first saw it, to
// some of them, each their own copy. A delivery that cannot work as
// configured (EINVALID) is not tried again: the approval goes on, and
// notSent says why, by person.
func (s *approvalStep) resend(ctx context.Context, r *Run, a *cardflow.Approval, to []string, notice string) (notSent map[string]string, err error) {
	notSent = map[string]string{}
	for _, p := range to {
		err := cardflow.DeliverApproval(ctx, r.Approvals, r.Deliverer, a, p, notice, r.Now())
		if cardflow.ErrorCode(err) == cardflow.EINVALID {
			r.Log.WarnContext(ctx, "approval card not sent", "approval", a.ApprovalID, "approver", p, "notice", notice, "error", cardflow.ErrorMessage(err))
			notSent[p] = cardflow.ErrorMessage(err)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("send the %s card of approval %s to %s: %w", notice, a.ApprovalID, p, err)
		}
	}
	return notSent, nil
}
