package localrunner_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// BenchmarkApprovalAnswerToNextStep measures, on the local stack (bbolt,
// local runner), the time from the deciding answer of a two-approver
// approval (answerApproval as the second approver) until the execution
// has run the step after the approval. It reports the p50 and p99 of
// that time; each iteration is one approval, triggered and half answered
// outside the timing.
func BenchmarkApprovalAnswerToNextStep(b *testing.B) {
	st, ctx := benchStack(b)
	card, err := st.Service.SaveCard(ctx, app.SaveCardInput{CardName: "approve", CardPayload: map[string]any{
		"type": "AdaptiveCard", "version": "1.5", "body": []any{map[string]any{"type": "TextBlock", "text": "Approve ${amount}?"}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Service.PublishCard(ctx, card.CardID, card.CardVersion); err != nil {
		b.Fatal(err)
	}
	wf := benchPublish(b, st, ctx, []cardflow.Step{
		{ID: "start", Name: "Requested", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
		{ID: "approve", Name: "Both approve", Type: cardflow.StepApproval, Config: map[string]any{
			"card_id": card.CardID, "data": map[string]any{"amount": "{{ input.amount }}"},
			"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all", "timeout": "PT1H",
		}},
		{ID: "done", Name: "Approved", Type: "end", Config: map[string]any{"status": "SUCCEEDED"}},
	})
	as := func(person string) context.Context {
		return cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
			OrganizationID: "bench", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: person, Person: person,
		})
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		out, err := st.Service.Trigger(ctx, app.TriggerInput{WorkflowID: wf, Body: []byte(`{"amount": 500}`)})
		if err != nil {
			b.Fatal(err)
		}
		id := cardflow.ApprovalIDOf(out.ExecutionID, 1)
		for {
			if _, err := st.Store.GetApproval(context.Background(), "bench", id); err == nil {
				break
			}
			time.Sleep(100 * time.Microsecond)
		}
		if _, err := st.Service.AnswerApproval(as("ann@example.com"), app.AnswerApprovalInput{ApprovalID: id, Decision: "approve"}); err != nil {
			b.Fatal(err)
		}
		ref := cardflow.ExecutionRef{OrganizationID: "bench", WorkflowID: wf, ExecutionID: out.ExecutionID}
		changed, stop := st.Changes.Watch(ref)
		b.StartTimer()
		begin := time.Now()
		if _, err := st.Service.AnswerApproval(as("bob@example.com"), app.AnswerApprovalInput{ApprovalID: id, Decision: "approve"}); err != nil {
			b.Fatal(err)
		}
		for {
			ex, err := st.Store.GetExecution(context.Background(), "bench", wf, out.ExecutionID)
			if err != nil {
				b.Fatal(err)
			}
			if ex.Status == cardflow.ExecSucceeded {
				break
			}
			<-changed
		}
		lat = append(lat, time.Since(begin))
		b.StopTimer()
		stop()
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
