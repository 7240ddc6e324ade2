package localmode_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/localmode"
)

// TestTriggerTooDeepToStoreLeavesNothing triggers through the use case,
// which does not check nesting as the HTTP API does, with an input 10,000
// levels deep. The store refuses an input it could not read back, so the
// trigger fails before anything is written: no execution,
// no process record, no Idempotency-Key and no sample, and the process id
// and the key start an execution afterwards.
func TestTriggerTooDeepToStoreLeavesNothing(t *testing.T) {
	t.Parallel()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(store, store, localmode.Config{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	defer st.Close()
	ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: "acme", WorkspaceID: "acme-ws", Scopes: cardflow.AllScopes, Actor: "test",
	})
	svc := st.Service
	w, err := svc.SaveWorkflow(ctx, app.SaveWorkflowInput{WorkflowName: "deep", WorkflowSteps: []cardflow.Step{
		{ID: "start", Name: "Start", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
		{ID: "done", Name: "Done", Type: "end", Config: map[string]any{"status": "SUCCEEDED"}},
	}, WorkflowConnections: []cardflow.Connection{{From: "start", To: "done"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishWorkflow(ctx, w.WorkflowID, w.WorkflowVersion); err != nil {
		t.Fatal(err)
	}
	in := app.TriggerInput{WorkflowID: w.WorkflowID, ProcessID: "PO-deep", IdempotencyKey: "key-deep",
		Body: []byte(strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000))}
	if out, err := svc.Trigger(ctx, in); err == nil {
		t.Fatalf("trigger: got execution %s, want an error", out.ExecutionID)
	}

	page, err := svc.ListWorkflowExecutions(ctx, w.WorkflowID, cardflow.ListOptions[cardflow.ExecutionKey]{Limit: 10})
	if err != nil || len(page.Items) != 0 {
		t.Errorf("executions: got %d, %v, want none", len(page.Items), err)
	}
	for _, c := range []struct {
		what string
		err  error
	}{
		{"process record", errOf(store.GetProcess(ctx, "acme", "PO-deep"))},
		{"Idempotency-Key", errOf(store.GetIdempotency(ctx, "acme", "key-deep", time.Now().UnixMilli()))},
		{"sample", errOf(store.GetSchema(ctx, "acme", w.WorkflowID, w.WorkflowVersion))},
	} {
		if got := cardflow.ErrorCode(c.err); got != cardflow.ENOTFOUND {
			t.Errorf("%s: got %v, want none", c.what, c.err)
		}
	}

	in.Body = []byte(`{"amount": 1}`)
	out, err := svc.Trigger(ctx, in)
	if err != nil {
		t.Fatalf("trigger with the process id and key again: %v", err)
	}
	testenv.WaitFor(t, "the execution to succeed", func() bool {
		ex, err := svc.GetExecution(ctx, w.WorkflowID, out.ExecutionID)
		if err != nil {
			t.Fatal(err)
		}
		return ex.Status == cardflow.ExecSucceeded
	})
}

func errOf[T any](_ T, err error) error { return err }
