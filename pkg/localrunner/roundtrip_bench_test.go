package localrunner_test

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/sample"
)

// BenchmarkApprovalRoundTrips is the approval round trip of the load test
// (make bench) in process, without HTTP: trigger the sample approval with
// a process id (amount 4800, so it waits at its card), resume that process
// id, and wait with WaitForExecutionJSON until it is final. One client
// gives the work of one approval (allocs/op); 32 share the store's commits.
func BenchmarkApprovalRoundTrips(b *testing.B) {
	for _, clients := range []int{1, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			st, ctx := benchStack(b)
			ids, err := sample.Load(ctx, st.Service)
			if err != nil {
				b.Fatal(err)
			}
			body := []byte(`{"requester": "load@example.com", "item": "Workstation", "amount": 4800}`)
			var n atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(max(1, clients/2)) // per CPU; this machine has two
			begin := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					pid := fmt.Sprintf("rt-%d", n.Add(1))
					out, err := st.Service.Trigger(ctx, app.TriggerInput{WorkflowID: ids.ApprovalWorkflowID, ProcessID: pid, Body: body})
					if err != nil {
						b.Error(err)
						return
					}
					if _, err := st.Service.Resume(ctx, pid, []byte(`{"source": "TEAMS", "decision": "approve"}`)); err != nil {
						b.Error(err)
						return
					}
					item, err := st.Service.WaitForExecutionJSON(ctx, app.WaitInput{
						WorkflowID: ids.ApprovalWorkflowID, WorkflowExecutionID: out.ExecutionID, Until: app.UntilFinal, Timeout: app.MaxWait,
					})
					if err != nil {
						b.Error(err)
						return
					}
					var final struct{ Status string }
					if err := json.Unmarshal(item, &final); err != nil || final.Status != "SUCCEEDED" {
						b.Errorf("execution %s ended %q (%v), want SUCCEEDED", out.ExecutionID, final.Status, err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "approvals/s")
		})
	}
}
