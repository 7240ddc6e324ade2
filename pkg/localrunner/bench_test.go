package localrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/localmode"
)

// clients is how many callers per CPU trigger at once in the benchmarks.
const clients = 16

// benchStack is a local stack on a store file in a temporary directory.
func benchStack(b *testing.B) (*localmode.Stack, context.Context) {
	b.Helper()
	store, err := boltstore.Open(filepath.Join(b.TempDir(), "cardflow.db"))
	if err != nil {
		b.Fatal(err)
	}
	st, err := localmode.NewStack(store, store, localmode.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: "bench", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "bench",
	})
	return st, ctx
}

func benchPublish(b *testing.B, st *localmode.Stack, ctx context.Context, steps []cardflow.Step) string {
	b.Helper()
	var conns []cardflow.Connection
	for i := 1; i < len(steps); i++ {
		conns = append(conns, cardflow.Connection{From: steps[i-1].ID, To: steps[i].ID})
	}
	w, err := st.Service.SaveWorkflow(ctx, app.SaveWorkflowInput{WorkflowName: "bench", WorkflowSteps: steps, WorkflowConnections: conns})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Service.PublishWorkflow(ctx, w.WorkflowID, 1); err != nil {
		b.Fatal(err)
	}
	return w.WorkflowID
}

// awaitAll polls until every execution has finished.
func awaitAll(b *testing.B, st *localmode.Stack, ctx context.Context, wf string, ids []string) {
	b.Helper()
	for _, id := range ids {
		for {
			ex, err := st.Service.GetExecution(ctx, wf, id)
			if err != nil {
				b.Fatal(err)
			}
			if ex.Status == cardflow.ExecSucceeded {
				break
			}
			if !ex.Open() {
				b.Fatalf("execution %s ended %s", id, ex.Status)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// BenchmarkSynchronousExecutions measures durable executions of a 10-step
// synchronous workflow, each step recorded in the store file, from trigger
// to SUCCEEDED.
func BenchmarkSynchronousExecutions(b *testing.B) {
	st, ctx := benchStack(b)
	steps := []cardflow.Step{{ID: "start", Name: "start", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}}}
	for i := range 8 {
		steps = append(steps, cardflow.Step{ID: fmt.Sprintf("s%d", i), Name: "transform", Type: "transform",
			Config: map[string]any{"output": map[string]any{"n": "{{ input.n + 1.0 }}", "order": "{{ input.order }}"}}})
	}
	steps = append(steps, cardflow.Step{ID: "done", Name: "done", Type: "end", Config: map[string]any{"status": "SUCCEEDED", "output": "{{ steps.s7.output }}"}})
	wf := benchPublish(b, st, ctx, steps)
	body, _ := json.Marshal(map[string]any{"n": 1, "order": "PO-1"})
	measure(b, st, ctx, wf, func() (string, error) {
		out, err := st.Service.Trigger(ctx, app.TriggerInput{WorkflowID: wf, Body: body})
		if err != nil {
			return "", err
		}
		return out.ExecutionID, nil
	})
}

// BenchmarkResumedExecutions measures executions of a workflow with one wait,
// each resumed through the resume use case as soon as it was triggered.
func BenchmarkResumedExecutions(b *testing.B) {
	st, ctx := benchStack(b)
	wf := benchPublish(b, st, ctx, []cardflow.Step{
		{ID: "start", Name: "start", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
		{ID: "answer", Name: "answer", Type: "wait", Config: map[string]any{"timeout": "PT1H"}},
		{ID: "done", Name: "done", Type: "end", Config: map[string]any{"status": "SUCCEEDED", "output": "{{ steps.answer.output }}"}},
	})
	var n atomic.Int64
	measure(b, st, ctx, wf, func() (string, error) {
		pid := fmt.Sprintf("p-%d", n.Add(1))
		out, err := st.Service.Trigger(ctx, app.TriggerInput{WorkflowID: wf, ProcessID: pid})
		if err != nil {
			return "", err
		}
		_, err = st.Service.Resume(ctx, pid, []byte(`{"source": "SAP", "ok": true}`))
		return out.ExecutionID, err
	})
}

// measure starts b.N executions with start from concurrent callers (as over
// HTTP), waits until all have finished, and reports executions per second.
func measure(b *testing.B, st *localmode.Stack, ctx context.Context, wf string, start func() (string, error)) {
	var mu sync.Mutex
	ids := make([]string, 0, b.N)
	b.SetParallelism(clients)
	b.ResetTimer()
	begin := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id, err := start()
			if err != nil {
				b.Error(err)
				return
			}
			mu.Lock()
			ids = append(ids, id)
			mu.Unlock()
		}
	})
	awaitAll(b, st, ctx, wf, ids)
	b.ReportMetric(float64(len(ids))/time.Since(begin).Seconds(), "executions/s")
}
