package sfnrunner_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
)

// personContext acts for person in the cost benchmarks' organization.
func personContext(person string) context.Context {
	return cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: approvalOrg, WorkspaceID: approvalOrg + "-ws", Scopes: cardflow.AllScopes, Actor: person, Person: person,
	})
}

// approvalStepWorkflow publishes a workflow whose approval step asks
// approvers (policy all) and reminds them after reminders.
func approvalStepWorkflow(tb testing.TB, svc *app.Service, approvers []any, reminders []any) string {
	tb.Helper()
	ctx := costContext()
	card, err := svc.SaveCard(ctx, app.SaveCardInput{CardName: "approve", CardPayload: map[string]any{
		"type": "AdaptiveCard", "version": "1.5", "body": []any{map[string]any{"type": "TextBlock", "text": "Approve ${amount}?"}},
	}})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := svc.PublishCard(ctx, card.CardID, card.CardVersion); err != nil {
		tb.Fatal(err)
	}
	config := map[string]any{"card_id": card.CardID, "data": map[string]any{"amount": "{{ input.amount }}"},
		"approvers": approvers, "policy": "all", "timeout": "PT1H"}
	if len(reminders) > 0 {
		config["reminders"] = reminders
	}
	wf, err := svc.SaveWorkflow(ctx, app.SaveWorkflowInput{WorkflowName: "approval cost", WorkflowSteps: []cardflow.Step{
		{ID: "start", Name: "Requested", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
		{ID: "approve", Name: "Approval", Type: cardflow.StepApproval, Config: config},
		{ID: "done", Name: "Approved", Type: "end", Config: map[string]any{"status": "SUCCEEDED"}},
	}, WorkflowConnections: []cardflow.Connection{{From: "start", To: "approve"}, {From: "approve", To: "done"}}})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := svc.PublishWorkflow(ctx, wf.WorkflowID, wf.WorkflowVersion); err != nil {
		tb.Fatal(err)
	}
	return wf.WorkflowID
}

// runApprovalStep triggers the workflow, and once Park holds its token
// has each approver approve through the API; with remind it waits for the
// reminder (and the park after it) before the last answer. It returns the
// execution id and the time the use cases took.
func runApprovalStep(tb testing.TB, svc *app.Service, watch cardflow.Store, outbox *boltstore.Store, workflowID string, approvers []string, remind bool) (string, time.Duration) {
	tb.Helper()
	pid := "PO-" + cardflow.NewID(time.Now())
	begin := time.Now()
	out, err := svc.Trigger(costContext(), app.TriggerInput{WorkflowID: workflowID, ProcessID: pid, Body: []byte(approvalInput)})
	if err != nil {
		tb.Fatal(err)
	}
	spent := time.Since(begin)
	token := func() string {
		p, err := watch.GetProcess(context.Background(), approvalOrg, pid)
		if err != nil {
			tb.Fatal(err)
		}
		if p.Wait == nil {
			return ""
		}
		return p.Wait.Token
	}
	poll := func(what string, cond func() bool) {
		for deadline := time.Now().Add(approvalTimeout); !cond(); time.Sleep(pollInterval) {
			if time.Now().After(deadline) {
				tb.Fatalf("waited in vain for %s", what)
			}
		}
	}
	poll("the park task", func() bool { return token() != "" })
	id := cardflow.ApprovalIDOf(out.ExecutionID, 1)
	for i, person := range approvers {
		if remind && i == len(approvers)-1 {
			first := token()
			poll("the reminder", func() bool {
				ds, _, err := outbox.ListDeliveries(context.Background(), approvalOrg, 100, "")
				if err != nil {
					tb.Fatal(err)
				}
				return slices.ContainsFunc(ds, func(d *cardflow.Delivery) bool {
					return d.ExecutionID == out.ExecutionID && d.Notice == cardflow.NoticeReminder
				})
			})
			poll("the park after the reminder", func() bool { t := token(); return t != "" && t != first })
		}
		begin = time.Now()
		if _, err := svc.AnswerApproval(personContext(person), app.AnswerApprovalInput{ApprovalID: id, Decision: "approve"}); err != nil {
			tb.Fatal(err)
		}
		spent += time.Since(begin)
	}
	poll("the execution to succeed", func() bool {
		ex, err := watch.GetExecution(context.Background(), approvalOrg, workflowID, out.ExecutionID)
		if err != nil {
			tb.Fatal(err)
		}
		return ex.Status == cardflow.ExecSucceeded
	})
	return out.ExecutionID, spent
}

// BenchmarkApprovalCost runs an approval step end to end (trigger, one
// answer per approver through the API, end) on the fake Step Functions and
// DynamoDB Local, with one and two approvers, and two with a reminder
// that fires before the last answer. It reports per approval what AWS
// bills and the cost of 1,000 approvals at list prices; the differences
// between the runs are the cost per approver and per reminder.
func BenchmarkApprovalCost(b *testing.B) {
	_, prefix := dynamostoretest.Tables(b)
	var capacity capacityCounter
	ctx := context.Background()
	client, err := dynamoclient.New(ctx, os.Getenv("DYNAMODB_ENDPOINT"), "", capacity.clientOption)
	if err != nil {
		b.Fatal(err)
	}
	store, err := dynamostore.New(client, dynamostore.WithTablePrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}
	plain, err := dynamoclient.New(ctx, os.Getenv("DYNAMODB_ENDPOINT"), "")
	if err != nil {
		b.Fatal(err)
	}
	watch, err := dynamostore.New(plain, dynamostore.WithTablePrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}
	outbox := boltStore(b, "outbox.db")
	st := newStack(b, store, outbox)
	svc := st.harness.Service
	for _, tc := range []struct {
		name      string
		approvers []string
		remind    bool
	}{
		{"approvers=1", []string{"ann@example.com"}, false},
		{"approvers=2", []string{"ann@example.com", "bob@example.com"}, false},
		{"approvers=2,reminders=1", []string{"ann@example.com", "bob@example.com"}, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var approvers, reminders []any
			for _, p := range tc.approvers {
				approvers = append(approvers, p)
			}
			if tc.remind {
				reminders = []any{"PT1S"}
			}
			wf := approvalStepWorkflow(b, svc, approvers, reminders)
			runApprovalStep(b, svc, watch, outbox, wf, tc.approvers, tc.remind) // warm up
			capacity.take()
			st.billed.Store(0)
			var transitions, invocations int
			var apiMs int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id, spent := runApprovalStep(b, svc, watch, outbox, wf, tc.approvers, tc.remind)
				c := awaitMachine(b, st.fake, id)
				transitions += c.Transitions
				for _, k := range c.Invocations {
					invocations += k
				}
				apiMs += (spent.Nanoseconds() + 999_999) / 1_000_000
			}
			b.StopTimer()
			read, write := capacity.take()
			// triggerworkflow and one answerApproval per approver, each a
			// request to API Gateway and its Lambda function.
			api := float64(1 + len(tc.approvers))
			reportCost(b, "approval", "op", usage{transitions: transitions, invocations: invocations, lambdaMs: st.billed.Load() + apiMs,
				read: read, write: write, apiLambdas: api, apiRequests: api})
		})
	}
}
