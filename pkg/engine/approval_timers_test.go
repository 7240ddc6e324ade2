package engine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/engine"
)

// approvalRun starts an execution whose approval step has config (the card
// filled in) and advances it into its wait.
func (f *fixture) approvalRun(config obj) (cardflow.ExecutionRef, engine.Result) {
	f.t.Helper()
	config["card_id"] = "CARD"
	defs := []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("approve", cardflow.StepApproval, config),
		step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.approve.output }}"}),
		step("no", "end", obj{"status": "FAILED", "output": "{{ steps.approve.output }}"}),
	}
	f.card(defs)
	ref := f.start(defs, []cardflow.Connection{{From: "start", To: "approve"}, {From: "approve", To: "done"}, {From: "approve", To: "no", On: cardflow.ExitRejected}}, obj{"amount": 12.0}, nil)
	return ref, f.advance(ref)
}

// answer records person's decision on the approval as the approvals use
// case does, without claiming the wait.
func (f *fixture) answer(ref cardflow.ExecutionRef, person, decision string) *cardflow.Approval {
	f.t.Helper()
	ctx := context.Background()
	a, err := f.store.GetApproval(ctx, f.org, cardflow.ApprovalIDOf(ref.ExecutionID, 1))
	if err != nil {
		f.t.Fatal(err)
	}
	if r := a.Answer([]string{person}, cardflow.ApprovalAnswer{Actor: person, At: f.clock.now().UnixMilli(), Decision: decision, Channel: cardflow.ChannelAPI}); r != nil {
		f.t.Fatalf("answer of %s: %s", person, r.Message)
	}
	if err := f.store.PutApproval(ctx, a); err != nil {
		f.t.Fatal(err)
	}
	return a
}

// sent lists the approval cards in the outbox, one copy per approver, as
// "notice: approver".
func (f *fixture) sent(ref cardflow.ExecutionRef) []string {
	f.t.Helper()
	ds, _, err := f.outbox.ListDeliveries(context.Background(), f.org, 100, "")
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		if d.ExecutionID == ref.ExecutionID {
			notice := d.Notice
			if notice == "" {
				notice = "card"
			}
			out = append(out, notice+": "+d.Approver)
		}
	}
	slices.Sort(out)
	return out
}

// timerEvents lists the execution's reminder, escalation and sending
// events as "type actor: message".
func (f *fixture) timerEvents(ref cardflow.ExecutionRef) []string {
	f.t.Helper()
	var out []string
	for _, ev := range f.get(ref).WorkflowEventLog.Events {
		switch ev.Type {
		case cardflow.EventApprovalReminded, cardflow.EventApprovalEscalated, cardflow.EventApprovalSent, cardflow.EventApprovalDecided:
			out = append(out, ev.Type+" "+ev.Actor+": "+ev.Message)
		}
	}
	return out
}

func wantList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

// TestApprovalReminders: each reminder fires at its time, goes only to
// the approvers who have not answered, and is in the audit trail; the
// runner is told to come back at the next timer, then at the deadline.
func TestApprovalReminders(t *testing.T) { onEachStore(t, testApprovalReminders) }

func testApprovalReminders(t *testing.T, b backend) {
	f := newFixture(t, b)
	opened := f.clock.now()
	ref, res := f.approvalRun(obj{"approvers": []any{"ann@example.com", "bob@example.com", "cy@example.com"}, "policy": "all",
		"reminders": []any{"PT24H", "PT48H"}, "timeout": "PT72H"})
	if want := opened.Add(24 * time.Hour).UnixMilli(); res.Status != cardflow.ExecWaiting || res.WakeAt != want {
		t.Fatalf("opened: got %+v, want WAITING until the first reminder %d", res, want)
	}
	f.answer(ref, "bob@example.com", cardflow.DecisionApprove)

	f.clock.add(24*time.Hour - time.Second)
	if res := f.advance(ref); res.WakeAt != opened.Add(24*time.Hour).UnixMilli() {
		t.Errorf("a second early: got %+v, want the same wake", res)
	}
	copies := []string{"card: ann@example.com", "card: bob@example.com", "card: cy@example.com"}
	wantList(t, "before the first reminder", f.sent(ref), copies)

	f.clock.add(time.Second)
	if res := f.advance(ref); res.WakeAt != opened.Add(48*time.Hour).UnixMilli() {
		t.Errorf("after the first reminder: got %+v, want to wake at the second", res)
	}
	f.answer(ref, "cy@example.com", cardflow.DecisionApprove)
	f.clock.add(25 * time.Hour) // the runner woke late
	if res := f.advance(ref); res.WakeAt != opened.Add(72*time.Hour).UnixMilli() {
		t.Errorf("after the second reminder: got %+v, want to wake at the deadline", res)
	}
	f.advance(ref) // nothing more is due
	wantList(t, "cards", f.sent(ref), append(copies,
		"reminder: ann@example.com",
		"reminder: ann@example.com",
		"reminder: cy@example.com",
	))
	wantList(t, "events", f.timerEvents(ref), []string{
		"ApprovalReminded timer: reminder 1 of 2 to ann@example.com, cy@example.com",
		"ApprovalReminded timer: reminder 2 of 2 to ann@example.com",
	})
}

// TestApprovalTimerAfterDecision: a reminder due after the approval
// decided sends nothing.
func TestApprovalTimerAfterDecision(t *testing.T) { onEachStore(t, testApprovalTimerAfterDecision) }

func testApprovalTimerAfterDecision(t *testing.T, b backend) {
	f := newFixture(t, b)
	ref, _ := f.approvalRun(obj{"approvers": []any{"ann@example.com"}, "policy": "first",
		"reminders": []any{"PT1H"}, "escalation": obj{"after": "PT2H", "to": []any{"lead@example.com"}}})
	if a := f.answer(ref, "ann@example.com", cardflow.DecisionApprove); a.Open() {
		t.Fatalf("got %s, want decided", a.Status)
	}
	f.clock.add(3 * time.Hour)
	if res := f.advance(ref); res.Status != cardflow.ExecWaiting || res.WakeAt != 0 {
		t.Errorf("got %+v, want WAITING for the claim with no timer", res)
	}
	wantList(t, "cards", f.sent(ref), []string{"card: ann@example.com"})
	wantList(t, "events", f.timerEvents(ref), nil)
}

// TestApprovalEscalation: at its time an escalation adds people, or puts
// them in the place of those who have not answered; they get the card,
// the audit trail says so, and an escalation that leaves a quorum out of
// reach decides the step.
func TestApprovalEscalation(t *testing.T) { onEachStore(t, testApprovalEscalation) }

func testApprovalEscalation(t *testing.T, b backend) {
	three := []any{"ann@example.com", "bob@example.com", "cy@example.com"}
	for _, tc := range []struct {
		name      string
		config    obj
		approvers []string
		cards     []string
		events    []string
		status    string
	}{
		{
			name:      "add",
			config:    obj{"approvers": three, "policy": "all", "escalation": obj{"after": "PT72H", "to": []any{"lead@example.com", "BOB@example.com"}, "mode": "add"}},
			approvers: []string{"ann@example.com", "bob@example.com", "cy@example.com", "lead@example.com"},
			cards:     []string{"added: lead@example.com", "card: ann@example.com", "card: bob@example.com", "card: cy@example.com"},
			events: []string{
				"ApprovalEscalated timer: add lead@example.com, BOB@example.com",
				"ApprovalSent timer: card sent to lead@example.com",
			},
			status: cardflow.ExecWaiting,
		},
		{
			name:      "replace",
			config:    obj{"approvers": three, "policy": "quorum", "count": 2, "escalation": obj{"after": "PT72H", "to": []any{"{{ input.manager }}"}, "mode": "replace"}},
			approvers: []string{"ann@example.com", "lead@example.com"},
			cards:     []string{"added: lead@example.com", "card: ann@example.com", "card: bob@example.com", "card: cy@example.com"},
			events: []string{
				"ApprovalEscalated timer: replace lead@example.com in place of bob@example.com, cy@example.com",
				"ApprovalSent timer: card sent to lead@example.com",
			},
			status: cardflow.ExecWaiting,
		},
		{
			name:      "replace leaves the quorum out of reach",
			config:    obj{"approvers": three, "policy": "quorum", "count": 3, "escalation": obj{"after": "PT72H", "to": []any{"lead@example.com"}, "mode": "replace"}},
			approvers: []string{"ann@example.com", "lead@example.com"},
			cards:     []string{"card: ann@example.com", "card: bob@example.com", "card: cy@example.com"},
			events: []string{
				"ApprovalEscalated timer: replace lead@example.com in place of bob@example.com, cy@example.com; the approval is rejected",
				"ApprovalDecided timer: rejected",
			},
			status: cardflow.ExecFailed,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, b)
			opened := f.clock.now()
			ref := f.startWithManager(tc.config)
			if res := f.advance(ref); res.WakeAt != opened.Add(72*time.Hour).UnixMilli() {
				t.Fatalf("opened: got %+v, want to wake at the escalation", res)
			}
			f.answer(ref, "ann@example.com", cardflow.DecisionApprove)
			f.clock.add(72 * time.Hour)
			if res := f.advance(ref); res.Status != tc.status {
				t.Errorf("status: got %+v, want %s", res, tc.status)
			}
			a, err := f.store.GetApproval(context.Background(), f.org, cardflow.ApprovalIDOf(ref.ExecutionID, 1))
			if err != nil {
				t.Fatal(err)
			}
			wantList(t, "approvers", a.Approvers, tc.approvers)
			wantList(t, "cards", f.sent(ref), tc.cards)
			wantList(t, "events", f.timerEvents(ref), tc.events)
		})
	}
}

// startWithManager starts an approval run whose input names a manager.
func (f *fixture) startWithManager(config obj) cardflow.ExecutionRef {
	f.t.Helper()
	config["card_id"] = "CARD"
	defs := []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("approve", cardflow.StepApproval, config),
		step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.approve.output }}"}),
		step("no", "end", obj{"status": "FAILED", "output": "{{ steps.approve.output }}"}),
	}
	f.card(defs)
	return f.start(defs, []cardflow.Connection{{From: "start", To: "approve"}, {From: "approve", To: "done"}, {From: "approve", To: "no", On: cardflow.ExitRejected}},
		obj{"amount": 12.0, "manager": "lead@example.com"}, nil)
}
