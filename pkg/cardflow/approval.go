package cardflow

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// StepApproval is the type of approval steps, which the approval use cases
// and saveWorkflow's card lookup name.
const StepApproval = "approval"

// ExitRejected is the exit an approval step leaves by when it decides
// rejected.
const ExitRejected = "rejected"

// Approval policies: how many answers decide.
const (
	// PolicyFirst: the first answer decides.
	PolicyFirst = "first"
	// PolicyAll: everyone must approve; the first rejection decides.
	PolicyAll = "all"
	// PolicyQuorum: Count approvals decide approved; it decides rejected
	// as soon as Count can no longer be reached.
	PolicyQuorum = "quorum"
	// PolicySequential: one approver after another, in list order; the
	// first rejection decides.
	PolicySequential = "sequential"
)

// Policies lists the policies in the order messages name them.
var Policies = []string{PolicyFirst, PolicyAll, PolicyQuorum, PolicySequential}

// Approval statuses. Every status but PENDING is final.
const (
	ApprovalPending  = "PENDING"
	ApprovalApproved = "APPROVED"
	ApprovalRejected = "REJECTED"
	ApprovalTimedOut = "TIMED_OUT"
	// ApprovalOverridden: an admin decided without the approvers
	// (overrideApproval; Override says how), or, on records from before
	// overrideApproval, resumeworkflow resumed the step without a decision.
	ApprovalOverridden = "OVERRIDDEN"
)

// Decisions an approver gives.
const (
	DecisionApprove = "approve"
	DecisionReject  = "reject"
)

// Channels an answer comes through.
const (
	ChannelTeams = "teams"
	ChannelAPI   = "api"
)

// Refusals: why an answer did not count. Each is counted on the approval
// record; an actor's first for a reason is an event in the execution's log.
const (
	RefusedNotApprover = "not_an_approver"
	RefusedSelf        = "self_approval"
	RefusedDecided     = "already_decided"
	RefusedAnswered    = "already_answered"
	RefusedNotYourTurn = "not_your_turn"
	RefusedReassigned  = "reassigned_too_often"
)

// Event types of approvals in an execution's log.
const (
	EventApprovalOpened   = "ApprovalOpened"
	EventApprovalAnswered = "ApprovalAnswered"
	EventApprovalRefused  = "ApprovalRefused"
	EventApprovalDecided  = "ApprovalDecided"
	// EventApprovalOverridden: an admin decided without the approvers.
	EventApprovalOverridden = "ApprovalOverridden"
	EventApprovalReassigned = "ApprovalReassigned"
)

// SourceApproval marks the resume an approval's decision makes. A
// resumeworkflow body cannot carry it (its source is TEAMS or SAP), so a
// resume without it never decides an approval.
const SourceApproval = "APPROVAL"

// Approval is the record of one open or decided approval step: who may
// answer, how many must, the card they see and every answer.
type Approval struct {
	ApprovalID     string `json:"approval_id"`
	OrganizationID string `json:"organization_id"`
	WorkflowID     string `json:"workflow_id"`
	ExecutionID    string `json:"workflow_execution_id"`
	ProcessID      string `json:"process_id"`
	StepID         string `json:"step_id"`
	StepName       string `json:"step_name"`
	// Wait is the sequence number of the wait the step opened.
	Wait int `json:"wait"`
	// The card as every approver sees it: its version and the SHA-256 of
	// the rendered card (CardHash), which each answer records.
	CardID      string         `json:"card_id"`
	CardVersion int            `json:"card_version"`
	CardHash    string         `json:"card_hash"`
	CardPayload map[string]any `json:"card_payload"`
	// Approvers are the resolved entries of the step's approvers: Entra ID
	// object ids, UPNs or e-mail addresses.
	Approvers []string `json:"approvers"`
	Policy    string   `json:"policy"`
	// Count is the quorum of PolicyQuorum.
	Count int `json:"count,omitempty"`
	// Requester may not answer (forbid_self_approval); "" when anyone
	// listed may.
	Requester     string           `json:"requester,omitempty"`
	AllowReassign bool             `json:"allow_reassign"`
	Answers       []ApprovalAnswer `json:"answers"`
	Status        string           `json:"status"`
	CreatedOn     int64            `json:"created_on"`
	// Deadline is when the step times out (epoch ms, 0: never).
	Deadline int64 `json:"deadline,omitempty"`
	// Due is when the approval becomes overdue (epoch ms, 0: never): the
	// step's due, which ends nothing. Overdue is whether it is, as of the
	// read that answers it; the use cases set it, the stores keep none.
	Due       int64  `json:"due,omitempty"`
	Overdue   bool   `json:"overdue,omitempty"`
	DecidedOn int64  `json:"decided_on,omitempty"`
	DecidedBy string `json:"decided_by,omitempty"`
	// Reminders are when the step reminds those who have not answered
	// (epoch ms, ascending); the first RemindersSent have gone out.
	Reminders     []int64             `json:"reminders,omitempty"`
	RemindersSent int                 `json:"reminders_sent,omitempty"`
	Escalation    *ApprovalEscalation `json:"escalation,omitempty"`
	// Sent are the approvers the card went to, so that those an
	// escalation or a reassignment brings in get it too.
	Sent []string `json:"sent,omitempty"`
	// Teams and Data are the delivery profile and data the step's card
	// went out with, so a later approver's copy goes out the same way.
	Teams map[string]any `json:"teams,omitempty"`
	Data  any            `json:"data,omitempty"`
	// TriggeredBy is who asked: the execution's TriggeredBy, which
	// approvers are shown. ForbidSelf is set when the step has
	// forbid_self_approval: then TriggeredBy may not answer either,
	// whatever the templated Requester says.
	TriggeredBy string `json:"triggered_by,omitempty"`
	ForbidSelf  bool   `json:"forbid_self,omitempty"`
	// Posts are the bot messages that carry a copy of the card, which are
	// updated once the step decides, times out or is resumed.
	Posts []BotPost `json:"posts,omitempty"`
	// Override, Reassignments and Refusals are the approval's own audit,
	// kept whole here apart from the execution's capped event log.
	Override      *ApprovalOverride      `json:"override,omitempty"`
	Reassignments []ApprovalReassignment `json:"reassignments,omitempty"`
	// StandIns are the delegates listed in place of an approver
	// (Delegate, setDelegation).
	StandIns []StandIn `json:"stand_ins,omitempty"`
	// Refusals counts the refused answers per actor and reason; those of
	// actors past MaxRefusalEntries are counted in RefusalsUnlisted.
	Refusals         []RefusalCount `json:"refusals,omitempty"`
	RefusalsUnlisted int            `json:"refusals_unlisted,omitempty"`
	Revision         int64          `json:"revision"`
}

// ApprovalOverride is an admin's decision without the approvers.
type ApprovalOverride struct {
	Actor    string `json:"actor"`
	At       int64  `json:"at"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// ApprovalReassignment is one approver's part handed to another person.
type ApprovalReassignment struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Actor string `json:"actor"`
	At    int64  `json:"at"`
}

// RefusalCount is how often one actor was refused for one reason.
type RefusalCount struct {
	Actor  string `json:"actor"`
	Reason string `json:"reason"`
	Count  int    `json:"count"`
	First  int64  `json:"first"`
	Last   int64  `json:"last"`
}

// MaxRefusalEntries bounds the actor and reason pairs an approval counts
// refusals for, so that its record stays small whoever tries.
const MaxRefusalEntries = 100

// CountRefusal counts a refusal of actor for reason, and reports whether
// it is that pair's first, which alone is worth an event in the
// execution's log.
func (a *Approval) CountRefusal(actor, reason string, at int64) (first bool) {
	for i := range a.Refusals {
		if r := &a.Refusals[i]; r.Reason == reason && sameID(r.Actor, actor) {
			r.Count, r.Last = r.Count+1, at
			return false
		}
	}
	if len(a.Refusals) >= MaxRefusalEntries {
		a.RefusalsUnlisted++
		return false
	}
	a.Refusals = append(a.Refusals, RefusalCount{Actor: actor, Reason: reason, Count: 1, First: at, Last: at})
	return true
}

// MaxReassignments bounds the reassignments an approval records, and so
// takes: each one hands a part on, so past this many it is a game.
const MaxReassignments = 100

// ApprovalAnswer is one answer that counted.
type ApprovalAnswer struct {
	// Approver is the listed entry the answer counted for.
	Approver string `json:"approver"`
	// Actor is who answered, as the channel names them.
	Actor string `json:"actor"`
	// OnBehalfOf is the approver a delegate answered for; "" when the
	// approver answered themselves.
	OnBehalfOf  string `json:"on_behalf_of,omitempty"`
	At          int64  `json:"at"`
	Decision    string `json:"decision"`
	Comment     string `json:"comment,omitempty"`
	Channel     string `json:"channel"`
	CardVersion int    `json:"card_version"`
	CardHash    string `json:"card_hash"`
}

// ApprovalKey is the page key of pending approval lists.
type ApprovalKey struct {
	OrganizationID string `json:"organization_id"`
	ApprovalID     string `json:"approval_id"`
}

// ApprovalFilter narrows a list of pending approvals; empty fields match
// all.
type ApprovalFilter struct {
	// Approver matches approvals that list this person (case does not
	// matter).
	Approver   string
	WorkflowID string
	// CreatedBefore matches approvals opened before this time (epoch ms).
	CreatedBefore int64
	// Overdue, when set, matches the approvals that are (true) or are not
	// (false) overdue at Now (epoch ms).
	Overdue *bool
	Now     int64
}

// IsOverdue reports whether the approval is open past its due at now
// (epoch ms).
func (a *Approval) IsOverdue(now int64) bool { return a.Open() && a.Due > 0 && a.Due <= now }

// Matches reports whether a pending approval passes the filter.
func (f ApprovalFilter) Matches(a *Approval) bool {
	if f.WorkflowID != "" && a.WorkflowID != f.WorkflowID {
		return false
	}
	if f.CreatedBefore > 0 && a.CreatedOn >= f.CreatedBefore {
		return false
	}
	if f.Overdue != nil && a.IsOverdue(f.Now) != *f.Overdue {
		return false
	}
	if f.Approver != "" {
		if _, ok := a.match([]string{f.Approver}); !ok {
			return false
		}
	}
	return true
}

// ApprovalStore persists approvals. Adapters of Store implement it; the
// contract suite covers it.
type ApprovalStore interface {
	// CreateApproval stores a new approval; ECONFLICT when its id is taken.
	CreateApproval(ctx context.Context, a *Approval) error
	GetApproval(ctx context.Context, org, approvalID string) (*Approval, error)
	// PutApproval replaces a stored approval if its stored revision equals
	// a.Revision, and increments a.Revision; ECONFLICT otherwise. When it
	// moves the approval from PENDING to a final status, the same atomic
	// change adds ApprovalStatsOf(a) to the aggregates of its day, of its
	// organization and of its workflow.
	PutApproval(ctx context.Context, a *Approval) error
	// ApprovalStats returns the aggregates of org (of workflowID alone
	// when it is not empty) of the given days (StatsDayLayout, at most
	// MaxStatsDays), in the order given; days nothing ended on are left
	// out.
	ApprovalStats(ctx context.Context, org, workflowID string, days []string) ([]ApprovalDayStats, error)
	// ListPendingApprovals lists the PENDING approvals of org that pass
	// the filter, by approval id descending (newest first).
	ListPendingApprovals(ctx context.Context, org string, f ApprovalFilter, opt ListOptions[ApprovalKey]) (Page[*Approval, ApprovalKey], error)
}

// ApprovalIDOf names the approval of an execution's wait, so the step that
// opens it again after a crash finds the one it made, and a card answer,
// which names the wait, finds it too. Execution ids are ULIDs, so approval
// ids sort by when their execution started and cannot be guessed.
func ApprovalIDOf(executionID string, wait int) string {
	return fmt.Sprintf("%s-%04d", executionID, wait)
}

// Open reports whether the approval still takes answers.
func (a *Approval) Open() bool { return a.Status == ApprovalPending }

// Refusal is why an answer does not count; Reason is one of the Refused
// constants.
type Refusal struct {
	Reason  string
	Message string
}

// Error makes a refusal the API's answer: 403 for who may not answer, 409
// for when.
func (r *Refusal) Error() *Error {
	code := ECONFLICT
	if r.Reason == RefusedNotApprover || r.Reason == RefusedSelf {
		code = EFORBIDDEN
	}
	return &Error{Code: code, Message: r.Message}
}

// Answer records the answer of the person known by ids (an object id, a
// UPN, an e-mail address: whatever the channel vouches for) when it
// counts, and decides the approval when the policy says so. The answer's
// Approver and card are filled in. A refusal changes nothing.
func (a *Approval) Answer(ids []string, ans ApprovalAnswer) *Refusal {
	if !a.Open() {
		return a.ClosedRefusal()
	}
	approver, ok := a.match(ids)
	if !ok {
		return &Refusal{RefusedNotApprover, fmt.Sprintf("you are not an approver of step %q", a.StepName)}
	}
	onBehalf := a.standsInFor(approver)
	if a.requester(append([]string{approver}, ids...)) {
		return &Refusal{RefusedSelf, fmt.Sprintf("you requested this approval, so you may not approve it (step %q forbids self-approval)", a.StepName)}
	}
	if onBehalf != "" && a.requester([]string{onBehalf}) {
		// A delegate answers as the approver: self-approval holds for both.
		return &Refusal{RefusedSelf, fmt.Sprintf("%s requested this approval, and you stand in for them, so you may not approve it (step %q forbids self-approval)", onBehalf, a.StepName)}
	}
	for _, prev := range a.Answers {
		if sameID(prev.Approver, approver) {
			return &Refusal{RefusedAnswered, fmt.Sprintf("you already answered approval %s (%s)", a.ApprovalID, prev.Decision)}
		}
	}
	if a.Policy == PolicySequential {
		if next := a.Approvers[len(a.Answers)]; !sameID(next, approver) {
			return &Refusal{RefusedNotYourTurn, fmt.Sprintf("approval %s is answered in turn, and it is %s's turn", a.ApprovalID, next)}
		}
	}
	ans.Approver, ans.OnBehalfOf, ans.CardVersion, ans.CardHash = approver, onBehalf, a.CardVersion, a.CardHash
	a.Answers = append(a.Answers, ans)
	if status := a.decide(); status != ApprovalPending {
		a.Status, a.DecidedOn, a.DecidedBy = status, ans.At, ans.Actor
	}
	return nil
}

// decide applies the policy to the answers so far.
func (a *Approval) decide() string {
	approved, rejected := 0, 0
	for _, ans := range a.Answers {
		if ans.Decision == DecisionApprove {
			approved++
		} else {
			rejected++
		}
	}
	switch a.Policy {
	case PolicyFirst:
		if rejected > 0 {
			return ApprovalRejected
		}
		if approved > 0 {
			return ApprovalApproved
		}
	case PolicyQuorum:
		if approved >= a.Count {
			return ApprovalApproved
		}
		// Who may still approve: the listed who have not answered, but
		// not the requester, whom self-approval refuses.
		open := 0
		for _, p := range a.Approvers {
			if !a.answered(p) && !a.requester([]string{p}) {
				open++
			}
		}
		if approved+open < a.Count {
			return ApprovalRejected
		}
	default: // all, sequential
		if rejected > 0 {
			return ApprovalRejected
		}
		if approved == len(a.Approvers) {
			return ApprovalApproved
		}
	}
	return ApprovalPending
}

// requester reports whether ids name one forbid_self_approval refuses:
// the templated requester, or who triggered the execution.
func (a *Approval) requester(ids []string) bool {
	return a.Requester != "" && containsID(ids, a.Requester) || a.ForbidSelf && a.TriggeredBy != "" && containsID(ids, a.TriggeredBy)
}

// answered reports whether approver has answered.
func (a *Approval) answered(approver string) bool {
	for _, ans := range a.Answers {
		if sameID(ans.Approver, approver) {
			return true
		}
	}
	return false
}

// match returns the listed approver one of ids names.
func (a *Approval) match(ids []string) (string, bool) {
	for _, approver := range a.Approvers {
		if containsID(ids, approver) {
			return approver, true
		}
	}
	return "", false
}

// Output is the approval step's output: the outcome and every answer.
func (a *Approval) Output() map[string]any {
	answers := make([]any, len(a.Answers))
	for i, ans := range a.Answers {
		m := map[string]any{
			"approver": ans.Approver, "actor": ans.Actor, "at": ans.At, "decision": ans.Decision,
			"comment": ans.Comment, "channel": ans.Channel, "card_version": ans.CardVersion, "card_hash": ans.CardHash,
		}
		answers[i] = m
	}
	out := map[string]any{
		"approval_id": a.ApprovalID, "outcome": strings.ToLower(a.Status), "policy": a.Policy,
		"approvers": a.Approvers, "answers": answers, "decided_on": a.DecidedOn,
	}
	if o := a.Override; o != nil {
		out["overridden_by"], out["reason"], out["decision"] = o.Actor, o.Reason, o.Decision
	}
	return out
}

// OverrideWith decides the approval without its approvers, as actor says:
// the answers given so far stay as they are. ECONFLICT when it is decided
// already.
func (a *Approval) OverrideWith(o ApprovalOverride) error {
	if !a.Open() {
		if a.Override != nil {
			return Errorf(ECONFLICT, "approval %s was already overridden by %s (%s)", a.ApprovalID, a.Override.Actor, a.Override.Decision)
		}
		return Errorf(ECONFLICT, "approval %s is already decided (%s)", a.ApprovalID, strings.ToLower(a.Status))
	}
	a.Override = &o
	a.Status, a.DecidedOn, a.DecidedBy = ApprovalOverridden, o.At, o.Actor
	return nil
}

// sameID compares two people's ids: object ids, UPNs and e-mail addresses
// are all case-insensitive.
func sameID(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if x != "" && sameID(x, id) {
			return true
		}
	}
	return false
}

// ParseDecision reads an approver's decision: approve or reject, as the
// API, a card's data or an Action.Execute verb says it.
func ParseDecision(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "approve", "approved":
		return DecisionApprove, true
	case "reject", "rejected":
		return DecisionReject, true
	}
	return "", false
}

// personPattern is what names a person: an Entra ID object id (a GUID), or
// a UPN or e-mail address.
var personPattern = regexp.MustCompile(`^([0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}|[^@\s]+@[^@\s]+\.[^@\s]+)$`)

// IsPerson reports whether s names a person as approvers are named.
func IsPerson(s string) bool { return personPattern.MatchString(s) }

// Reassign hands approver from's part to to. It refuses what Answer
// refuses of from, and a to already listed.
func (a *Approval) Reassign(fromIDs []string, to string) (from string, r *Refusal) {
	if !a.Open() {
		return "", a.ClosedRefusal()
	}
	from, ok := a.match(fromIDs)
	if !ok {
		return "", &Refusal{RefusedNotApprover, fmt.Sprintf("you are not an approver of step %q", a.StepName)}
	}
	for _, prev := range a.Answers {
		if sameID(prev.Approver, from) {
			return "", &Refusal{RefusedAnswered, fmt.Sprintf("you already answered approval %s (%s)", a.ApprovalID, prev.Decision)}
		}
	}
	if containsID(a.Approvers, to) {
		return "", &Refusal{RefusedAnswered, fmt.Sprintf("%s is already an approver of approval %s", to, a.ApprovalID)}
	}
	if len(a.Reassignments) >= MaxReassignments {
		return "", &Refusal{RefusedReassigned, fmt.Sprintf("approval %s was reassigned %d times, the limit", a.ApprovalID, MaxReassignments)}
	}
	for i, p := range a.Approvers {
		if sameID(p, from) {
			a.Approvers[i] = to
		}
	}
	return from, nil
}
