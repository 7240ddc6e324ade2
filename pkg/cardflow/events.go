package cardflow

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Types of the events published on every change of an execution's status
// and every approval decision. On AWS they are EventBridge detail types
// (source SourceName); webhooks receive them in the body's "type".
const (
	EventTypeStarted         = "cardflow.execution.started"
	EventTypeWaiting         = "cardflow.execution.waiting"
	EventTypeResumed         = "cardflow.execution.resumed"
	EventTypeSucceeded       = "cardflow.execution.succeeded"
	EventTypeFailed          = "cardflow.execution.failed"
	EventTypeCancelled       = "cardflow.execution.cancelled"
	EventTypeTimedOut        = "cardflow.execution.timed_out"
	EventTypeRedriven        = "cardflow.execution.redriven"
	EventTypeApprovalDecided = "cardflow.approval.decided"

	// EventSource is the source of every event cardflow publishes.
	EventSource = "cardflow"
)

// Published is one published event: a change of an execution's status or
// an approval's decision. It is written with the change that caused it, in
// the same atomic write (the outbox), and published from there, at least
// once; ID is the same on every delivery, so receivers drop repeats.
type Published struct {
	ID              string `json:"id"`
	Type            string `json:"type"`
	OrganizationID  string `json:"organization_id"`
	WorkflowID      string `json:"workflow_id"`
	WorkflowVersion int    `json:"workflow_version"`
	ExecutionID     string `json:"workflow_execution_id"`
	// Status is the execution's status after the change.
	Status string `json:"status"`
	// Time is when the change happened (epoch ms).
	Time int64 `json:"time"`
	// StepID and Step name the step of a wait, resume or decision.
	StepID string `json:"step_id,omitempty"`
	Step   string `json:"step,omitempty"`
	// Approver and Decision are set on approval decisions: who decided
	// and how (approved, rejected, overridden).
	Approver string `json:"approver,omitempty"`
	Decision string `json:"decision,omitempty"`
}

// Webhook is an organization's receiver of its events (local mode). Secret
// signs each delivery; it is shown once, when the webhook is added or its
// secret rotated, and kept only in the store, never in lists, logs or
// errors.
type Webhook struct {
	WebhookID      string `json:"webhook_id"`
	OrganizationID string `json:"organization_id"`
	URL            string `json:"url"`
	Secret         string `json:"secret,omitempty"`
	// PreviousSecret is the secret a rotation replaced: deliveries carry
	// its signature too until PreviousSecretUntil (epoch ms), so that a
	// receiver can switch to the new secret in its own time.
	PreviousSecret      string `json:"previous_secret,omitempty"`
	PreviousSecretUntil int64  `json:"previous_secret_until,omitempty"`
	CreatedOn           int64  `json:"created_on"`
}

// Secrets returns the secrets deliveries are signed with at now: the
// current one, and the previous one while its rotation lets it sign.
func (w *Webhook) Secrets(now time.Time) []string {
	if w.PreviousSecret != "" && now.UnixMilli() < w.PreviousSecretUntil {
		return []string{w.Secret, w.PreviousSecret}
	}
	return []string{w.Secret}
}

// LogValue logs w without its secret, should a webhook ever be logged.
func (w *Webhook) LogValue() slog.Value {
	return slog.GroupValue(slog.String("webhook_id", w.WebhookID), slog.String("organization_id", w.OrganizationID), slog.String("url", w.URL))
}

// Redacted returns w without its secret, as lists show it.
func (w *Webhook) Redacted() *Webhook {
	c := *w
	c.Secret, c.PreviousSecret = "", ""
	return &c
}

// EventStore keeps the outbox of events to publish and the webhooks of
// local mode. Adapters write an execution's events (execrecord.Write.Events)
// in the same atomic write as the execution, so a change stored is a change
// published, even when the process dies right after it.
type EventStore interface {
	// ListPendingEvents returns at most limit events not yet published
	// whose ids sort after after ("" starts at the first), in id order:
	// one execution's events in the order they happened.
	ListPendingEvents(ctx context.Context, after string, limit int) ([]*Published, error)
	// DeletePendingEvents removes published events; removing a missing
	// one is not an error.
	DeletePendingEvents(ctx context.Context, events []*Published) error

	// CreateWebhook stores a new webhook; its id must be unused.
	CreateWebhook(ctx context.Context, w *Webhook) error
	// ListWebhooks lists the webhooks of one organization, or of all when
	// org is "", with their secrets.
	ListWebhooks(ctx context.Context, org string) ([]*Webhook, error)
	// DeleteWebhook removes a webhook of org; ENOTFOUND when org has none
	// with that id.
	DeleteWebhook(ctx context.Context, org, webhookID string) error
	// RotateWebhookSecret gives a webhook of org the secret secret, in one
	// atomic write: the secret it had becomes its PreviousSecret, valid
	// until previousUntil (epoch ms). It returns the webhook as stored;
	// ENOTFOUND when org has none with that id.
	RotateWebhookSecret(ctx context.Context, org, webhookID, secret string, previousUntil int64) (*Webhook, error)
}

// EventID is the id of the event of the seq-th entry of an execution's
// log (counting from 1). It is the same however often the event is
// delivered, and sorts an execution's events in order.
func EventID(executionID string, seq int) string {
	return fmt.Sprintf("%s-%06d", executionID, seq)
}

// resumes are the log entries that show a waiting execution going on.
var resumes = map[string]bool{
	EventResumed: true, EventStepFinished: true, EventStepFailed: true, EventTimedOut: true,
	EventApprovalDecided: true, EventApprovalOverridden: true,
}

// EventsSince returns the events of the log entries e gained since it was
// stored with status and total entries: each change of status, named by
// the entry that made it, and each approval decision. An execution's
// write carries them (pkg/execrecord), so that its store keeps them with
// it.
func (e *Execution) EventsSince(status string, total int) []*Published {
	n := e.WorkflowEventLog.Total - total
	if n <= 0 {
		return nil
	}
	entries := e.WorkflowEventLog.Events
	first := max(len(entries)-n, 0)
	seq := e.WorkflowEventLog.Total - (len(entries) - first)
	var out []*Published
	add := func(ev Event, seq int, typ, st string) {
		out = append(out, &Published{
			ID: EventID(e.WorkflowExecutionID, seq), Type: typ, OrganizationID: e.OrganizationID,
			WorkflowID: e.WorkflowID, WorkflowVersion: e.WorkflowVersion, ExecutionID: e.WorkflowExecutionID,
			Status: st, Time: ev.At, StepID: ev.StepID, Step: ev.Step,
		})
	}
	for i, ev := range entries[first:] {
		seq++
		last := first+i == len(entries)-1
		if status == ExecWaiting && resumes[ev.Type] {
			status = ExecRunning
			add(ev, seq, EventTypeResumed, status)
			// A resume and a decision share the entry: the decision's
			// event gets an id of its own.
			if ev.Type == EventApprovalDecided || ev.Type == EventApprovalOverridden {
				add(ev, seq, EventTypeApprovalDecided, status)
				out[len(out)-1].ID += "-decision"
				decision(out[len(out)-1], ev)
			}
			continue
		}
		typ := ""
		switch ev.Type {
		case EventStarted:
			typ, status = EventTypeStarted, ExecRunning
		case EventRedriven:
			typ, status = EventTypeRedriven, ExecRunning
		case EventWaiting, EventSleeping:
			if status != ExecWaiting {
				typ, status = EventTypeWaiting, ExecWaiting
			}
		case EventApprovalDecided, EventApprovalOverridden:
			add(ev, seq, EventTypeApprovalDecided, status)
			decision(out[len(out)-1], ev)
		case EventSucceeded:
			typ, status = EventTypeSucceeded, ExecSucceeded
		case EventFailed:
			typ, status = EventTypeFailed, ExecFailed
		case EventCancelled:
			typ, status = EventTypeCancelled, ExecCancelled
		case EventTimedOut:
			// A step's timeout that a timeout exit handles is no change
			// of the execution's status; the last entry of one that ended
			// the execution is.
			if last && e.Status == ExecTimedOut {
				typ, status = EventTypeTimedOut, ExecTimedOut
			}
		}
		if typ != "" {
			add(ev, seq, typ, status)
		}
	}
	return out
}

// decision fills in who decided an approval and how.
func decision(p *Published, ev Event) {
	p.Approver = ev.Actor
	p.Decision = strings.ToLower(ev.Message)
	if ev.Type == EventApprovalOverridden {
		p.Decision = "overridden"
	}
}
