package sfnrunner_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
)

// BenchmarkApprovalAnswerToNextStep times, on the Step Functions path (the
// fake running the real definition and handlers in process, the records in
// DynamoDB Local), a two-approver approval from the deciding answer through
// the API to the end step having run: the answer claims the wait and ends
// the parked task, the machine routes to Advance, which leaves the approval
// and runs the end step. The end is read from the execution's modified_on,
// so polling adds nothing to the time.
func BenchmarkApprovalAnswerToNextStep(b *testing.B) {
	_, prefix := dynamostoretest.Tables(b)
	client, err := dynamoclient.New(context.Background(), os.Getenv("DYNAMODB_ENDPOINT"), "")
	if err != nil {
		b.Fatal(err)
	}
	store, err := dynamostore.New(client, dynamostore.WithTablePrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}
	outbox := boltStore(b, "outbox.db")
	st := newStack(b, store, outbox)
	svc := st.harness.Service
	wf := approvalStepWorkflow(b, svc, []any{"ann@example.com", "bob@example.com"}, nil)
	poll := func(what string, cond func() bool) {
		for deadline := time.Now().Add(approvalTimeout); !cond(); time.Sleep(pollInterval) {
			if time.Now().After(deadline) {
				b.Fatalf("waited in vain for %s", what)
			}
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		pid := "PO-" + cardflow.NewID(time.Now())
		out, err := svc.Trigger(costContext(), app.TriggerInput{WorkflowID: wf, ProcessID: pid, Body: []byte(approvalInput)})
		if err != nil {
			b.Fatal(err)
		}
		poll("the park task", func() bool {
			p, err := store.GetProcess(context.Background(), approvalOrg, pid)
			return err == nil && p.Wait != nil && p.Wait.Token != ""
		})
		id := cardflow.ApprovalIDOf(out.ExecutionID, 1)
		if _, err := svc.AnswerApproval(personContext("ann@example.com"), app.AnswerApprovalInput{ApprovalID: id, Decision: "approve"}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		begin := time.Now()
		if _, err := svc.AnswerApproval(personContext("bob@example.com"), app.AnswerApprovalInput{ApprovalID: id, Decision: "approve"}); err != nil {
			b.Fatal(err)
		}
		var end int64
		poll("the end step", func() bool {
			ex, err := store.GetExecution(context.Background(), approvalOrg, wf, out.ExecutionID)
			if err != nil {
				b.Fatal(err)
			}
			end = ex.ModifiedOn
			return ex.Status == cardflow.ExecSucceeded
		})
		lat = append(lat, time.UnixMilli(end).Sub(begin))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(0, "ns/op") // the time of an iteration includes the polling
}
