package cardflow

import (
	"fmt"
	"strings"
)

// Escalation modes: who answers once an approval escalates.
const (
	// EscalateAdd adds the escalation's people to the approvers.
	EscalateAdd = "add"
	// EscalateReplace puts the escalation's people in the place of the
	// approvers who have not answered; the answers given so far count.
	EscalateReplace = "replace"
)

// EscalationModes lists the modes in the order messages name them.
var EscalationModes = []string{EscalateAdd, EscalateReplace}

// Notices: why a card goes out again while an approval is open.
const (
	NoticeReminder = "reminder"
	// NoticeAdded: the card goes to someone who became an approver
	// (escalation, reassignment).
	NoticeAdded = "added"
)

// Event types of an approval's timers.
const (
	EventApprovalReminded  = "ApprovalReminded"
	EventApprovalEscalated = "ApprovalEscalated"
	// EventApprovalSent: the card went to approvers who did not have it.
	EventApprovalSent = "ApprovalSent"
)

// ActorTimer is the actor of what an approval's timers do.
const ActorTimer = "timer"

// ApprovalEscalation is an approval's escalation, its people resolved.
type ApprovalEscalation struct {
	// At is when it escalates (epoch ms).
	At   int64    `json:"at"`
	To   []string `json:"to"`
	Mode string   `json:"mode"`
	Done bool     `json:"done,omitempty"`
}

// NextTimer is when the approval's next reminder or escalation is due
// (epoch ms), or 0 when none is left or the approval is decided.
func (a *Approval) NextTimer() int64 {
	if !a.Open() {
		return 0
	}
	var next int64
	if a.RemindersSent < len(a.Reminders) {
		next = a.Reminders[a.RemindersSent]
	}
	if e := a.Escalation; e != nil && !e.Done && (next == 0 || e.At < next) {
		next = e.At
	}
	return next
}

// DueReminder marks the reminders due at now as sent and reports whether
// any was: reminders a runner slept through go out as one.
func (a *Approval) DueReminder(now int64) bool {
	if !a.Open() {
		return false
	}
	n := a.RemindersSent
	for n < len(a.Reminders) && a.Reminders[n] <= now {
		n++
	}
	due := n > a.RemindersSent
	a.RemindersSent = n
	return due
}

// Waiting lists the approvers a reminder goes to: those who have the
// card and have not answered, and in a sequential approval only the one
// whose turn it is. Those who do not have the card yet get it instead.
func (a *Approval) Waiting() []string {
	var out []string
	for _, p := range a.Approvers {
		if a.answered(p) {
			continue
		}
		if containsID(a.Sent, p) {
			out = append(out, p)
		}
		if a.Policy == PolicySequential {
			break
		}
	}
	return out
}

// Escalate applies a due escalation: its people become approvers (added,
// or in the place of those who have not answered), and the policy decides
// again, since fewer approvers may leave a quorum out of reach. It
// returns a message for the audit trail, or "" when nothing was due.
func (a *Approval) Escalate(now int64) string {
	e := a.Escalation
	if !a.Open() || e == nil || e.Done || now < e.At {
		return ""
	}
	e.Done = true
	var kept, replaced []string
	if e.Mode == EscalateReplace {
		for _, p := range a.Approvers {
			if a.answered(p) {
				kept = append(kept, p)
			} else {
				replaced = append(replaced, p)
			}
		}
	} else {
		kept = a.Approvers
	}
	approvers := append([]string(nil), kept...)
	for _, p := range e.To {
		if !containsID(approvers, p) {
			approvers = append(approvers, p)
		}
	}
	a.Approvers = approvers
	if status := a.decide(); status != ApprovalPending {
		a.Status, a.DecidedOn, a.DecidedBy = status, now, ActorTimer
	}
	msg := fmt.Sprintf("%s %s", e.Mode, strings.Join(e.To, ", "))
	if len(replaced) > 0 {
		msg += " in place of " + strings.Join(replaced, ", ")
	}
	if !a.Open() {
		msg += "; the approval is " + strings.ToLower(a.Status)
	}
	return msg
}

// Unsent lists those who should hold the card (Recipients) and have not
// been sent it: those an escalation or a reassignment brought in, and
// under PolicySequential the approver whose turn came.
func (a *Approval) Unsent() []string {
	if a.Sent == nil {
		// Opened before cards were tracked: everyone listed then got it.
		return nil
	}
	var out []string
	for _, p := range a.Recipients() {
		if !containsID(a.Sent, p) {
			out = append(out, p)
		}
	}
	return out
}
