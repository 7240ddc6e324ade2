package app_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// sampleCounter counts the schema samples written, apart or with a start.
type sampleCounter struct {
	cardflow.Store
	puts atomic.Int64
}

func (s *sampleCounter) PutSchema(ctx context.Context, sc *cardflow.Schema) error {
	s.puts.Add(1)
	return s.Store.PutSchema(ctx, sc)
}

func (s *sampleCounter) StartExecutionWithSample(ctx context.Context, e *cardflow.Execution, p *cardflow.Process, idem *cardflow.Idempotency, sc *cardflow.Schema) error {
	if sc != nil {
		s.puts.Add(1)
	}
	return s.Store.StartExecutionWithSample(ctx, e, p, idem, sc)
}

// TestTriggerRecordsChangedSamples writes a version's schema sample when
// a trigger changes what the record shows, and not when it would change
// modified_on alone.
func TestTriggerRecordsChangedSamples(t *testing.T) {
	onEachStore(t, func(t *testing.T, open func(testing.TB) cardflow.Store) {
		triggerSamples(t, &sampleCounter{Store: open(t)})
	})
}

// triggerSamples triggers with inputs and actors that change the sample
// or not, counting the samples store writes.
func triggerSamples(t *testing.T, store *sampleCounter) {
	svc, err := app.New(store, app.Deps{Runner: idleRunner{}})
	if err != nil {
		t.Fatal(err)
	}
	// An organization of its own: the DynamoDB tables are shared.
	org := "org-" + cardflow.NewID(time.Now())
	as := func(actor string) context.Context {
		return cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
			OrganizationID: org, WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: actor,
		})
	}
	// Stored directly: a trigger needs an ACTIVE version, not a checked one.
	w := &cardflow.Workflow{OrganizationID: org, WorkflowName: "sample", WorkflowSteps: []cardflow.Step{
		{ID: "start", Name: "start", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
	}}
	if err := store.SaveWorkflowVersion(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PublishWorkflow(context.Background(), org, w.WorkflowID, 1, "ann", 1); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		actor, body string
		wantPut     bool
		wantBy      string
	}{
		{"ann", `{"item": "Desk", "amount": 100}`, true, "ann"},
		{"ann", `{"amount": 100, "item": "Desk"}`, false, "ann"},
		{"ann", `{"item": "Desk", "amount": 200}`, true, "ann"},
		{"bob", `{"item": "Desk", "amount": 200}`, true, "bob"},
		{"bob", ``, false, "bob"},
	} {
		before := store.puts.Load()
		if _, err := svc.Trigger(as(c.actor), app.TriggerInput{WorkflowID: w.WorkflowID, Body: []byte(c.body)}); err != nil {
			t.Fatalf("trigger %d: %v", i, err)
		}
		if got := store.puts.Load() > before; got != c.wantPut {
			t.Errorf("trigger %d by %s with %s: got schema written %v, want %v", i, c.actor, c.body, got, c.wantPut)
		}
		sc, err := store.GetSchema(context.Background(), org, w.WorkflowID, 1)
		if err != nil {
			t.Fatalf("trigger %d: %v", i, err)
		}
		by := sc.CreatedBy
		if sc.ModifiedBy != nil {
			by = *sc.ModifiedBy
		}
		if by != c.wantBy {
			t.Errorf("trigger %d: got the sample last recorded by %s, want %s", i, by, c.wantBy)
		}
	}
}
