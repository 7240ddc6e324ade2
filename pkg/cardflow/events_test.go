package cardflow

import (
	"log/slog"
	"strings"
	"testing"
)

func TestEventsOfAWrite(t *testing.T) {
	t.Parallel()
	ev := func(typ string) Event { return Event{At: 5, Type: typ, StepID: "s", Step: "S"} }
	decided := Event{At: 6, Type: EventApprovalDecided, StepID: "a", Step: "Approve", Actor: "ann@example.com", Message: "approved"}
	tests := []struct {
		name          string
		status        string // stored before the write
		total         int    // entries stored before the write
		entries       []Event
		after         string // status after the write
		want          string // types: status, ...
		wantApprovers string
	}{
		{"start and succeed in one write", "", 0, []Event{ev(EventStarted), ev(EventStepStarted), ev(EventStepFinished), ev(EventSucceeded)}, ExecSucceeded,
			"started:RUNNING succeeded:SUCCEEDED", ""},
		{"wait", ExecRunning, 1, []Event{ev(EventStarted), ev(EventWaiting)}, ExecWaiting, "waiting:WAITING", ""},
		{"sleep", ExecRunning, 1, []Event{ev(EventStarted), ev(EventSleeping)}, ExecWaiting, "waiting:WAITING", ""},
		{"resume then fail", ExecWaiting, 1, []Event{ev(EventWaiting), ev(EventResumed), ev(EventStepFinished), ev(EventStepFailed), ev(EventFailed)}, ExecFailed,
			"resumed:RUNNING failed:FAILED", ""},
		{"answers while waiting change nothing", ExecWaiting, 1, []Event{ev(EventWaiting), ev(EventApprovalAnswered), ev(EventApprovalReminded)}, ExecWaiting, "", ""},
		{"a decision resumes", ExecWaiting, 1, []Event{ev(EventWaiting), decided, ev(EventStepFinished), ev(EventSucceeded)}, ExecSucceeded,
			"resumed:RUNNING approval.decided:RUNNING succeeded:SUCCEEDED", "ann@example.com/approved"},
		{"a wait's timeout handled by an exit", ExecWaiting, 1, []Event{ev(EventWaiting), ev(EventTimedOut), ev(EventStepStarted)}, ExecRunning, "resumed:RUNNING", ""},
		{"a timeout ends it", ExecWaiting, 1, []Event{ev(EventWaiting), ev(EventTimedOut), ev(EventTimedOut)}, ExecTimedOut, "resumed:RUNNING timed_out:TIMED_OUT", ""},
		{"cancel while waiting", ExecWaiting, 1, []Event{ev(EventWaiting), ev(EventCancelled)}, ExecCancelled, "cancelled:CANCELLED", ""},
		{"redrive", ExecFailed, 2, []Event{ev(EventStarted), ev(EventFailed), ev(EventRedriven), ev(EventStepStarted)}, ExecRunning, "redriven:RUNNING", ""},
		{"nothing new", ExecRunning, 2, []Event{ev(EventStarted), ev(EventStepStarted)}, ExecRunning, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Execution{OrganizationID: "o", WorkflowID: "w", WorkflowVersion: 2, WorkflowExecutionID: "x", Status: tt.after,
				WorkflowEventLog: EventLog{Events: tt.entries, Total: len(tt.entries)}}
			got := e.EventsSince(tt.status, tt.total)
			var types, approvers []string
			ids := map[string]bool{}
			for _, p := range got {
				types = append(types, strings.TrimPrefix(strings.TrimPrefix(p.Type, "cardflow.execution."), "cardflow.")+":"+p.Status)
				if p.Approver != "" {
					approvers = append(approvers, p.Approver+"/"+p.Decision)
				}
				if ids[p.ID] {
					t.Errorf("id %s given twice", p.ID)
				}
				ids[p.ID] = true
				if p.OrganizationID != "o" || p.WorkflowID != "w" || p.WorkflowVersion != 2 || p.ExecutionID != "x" {
					t.Errorf("got event %+v, want it to name o/w/2/x", p)
				}
			}
			if g := strings.Join(types, " "); g != tt.want {
				t.Errorf("got %q, want %q", g, tt.want)
			}
			if g := strings.Join(approvers, " "); g != tt.wantApprovers {
				t.Errorf("got approvers %q, want %q", g, tt.wantApprovers)
			}
		})
	}
}

func TestWebhookSecretStaysOutOfLogsAndLists(t *testing.T) {
	t.Parallel()
	w := &Webhook{WebhookID: "W1", OrganizationID: "acme", URL: "https://hooks.example.com/x", Secret: "whsec_do-not-show",
		PreviousSecret: "whsec_nor-this", PreviousSecretUntil: 1}
	var logs strings.Builder
	slog.New(slog.NewTextHandler(&logs, nil)).Info("webhook", "webhook", w)
	if strings.Contains(logs.String(), "whsec_") || !strings.Contains(logs.String(), "W1") {
		t.Errorf("got log %q, want the webhook's id and not its secrets", logs.String())
	}
	if r := w.Redacted(); r.Secret != "" || r.PreviousSecret != "" || r.URL != w.URL || w.Secret == "" || w.PreviousSecret == "" {
		t.Errorf("got redacted %+v (original secrets %q, %q), want no secret in the copy only", r, w.Secret, w.PreviousSecret)
	}
}
