package sample_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/sample"
)

// TestSampleExecutionIsARun loads the sample data and checks that its
// execution is what a run of the approval workflow leaves, the same as a
// run started afterwards through the service: the engine's events and
// condensed logs, objects as payloads, the schema record and the card in
// the outbox.
func TestSampleExecutionIsARun(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(store, store, localmode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: "org-1", WorkspaceID: "ws-1", Scopes: cardflow.AllScopes, Actor: "demo-admin"})
	ids, err := sample.Load(ctx, st.Service)
	if err != nil {
		t.Fatal(err)
	}
	svc := st.Service
	got, err := svc.GetExecution(ctx, ids.ApprovalWorkflowID, ids.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}

	// The same run, started now.
	out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: ids.ApprovalWorkflowID, Version: 2, ProcessID: "PO-1",
		Body: []byte(`{"requester": "Ann", "item": "Dock", "amount": 1200}`)})
	if err != nil {
		t.Fatal(err)
	}
	await(t, svc, ctx, ids.ApprovalWorkflowID, out.ExecutionID, cardflow.ExecWaiting)
	if _, err := svc.Resume(ctx, "PO-1", []byte(`{"source": "TEAMS", "decision": "approve"}`)); err != nil {
		t.Fatal(err)
	}
	want := await(t, svc, ctx, ids.ApprovalWorkflowID, out.ExecutionID, cardflow.ExecSucceeded)

	if got.Status != cardflow.ExecSucceeded || got.WorkflowVersion != 2 || got.WorkflowCurrentState != want.WorkflowCurrentState {
		t.Errorf("sample execution: got %s of version %d in %q, want SUCCEEDED of version 2 in %q", got.Status, got.WorkflowVersion, got.WorkflowCurrentState, want.WorkflowCurrentState)
	}
	if g, w := eventTypes(got), eventTypes(want); !reflect.DeepEqual(g, w) {
		t.Errorf("sample execution's events:\ngot  %v\nwant %v", g, w)
	}
	for step, w := range want.CondensedLogs {
		g, ok := got.CondensedLogs[step]
		if !ok || g.Status != w.Status || reflect.TypeOf(g.Output) != reflect.TypeOf(w.Output) {
			t.Errorf("sample execution's log of step %s: got %+v, want one like %+v", step, g, w)
		}
	}
	if len(got.CondensedLogs) != len(want.CondensedLogs) {
		t.Errorf("sample execution: got logs of %d steps, want %d", len(got.CondensedLogs), len(want.CondensedLogs))
	}
	if got.WorkflowOutputPayload["decision"] != "approve" || got.WorkflowInputPayload["item"] != "Laptop" {
		t.Errorf("sample execution: got input %v and output %v, want the laptop approved", got.WorkflowInputPayload, got.WorkflowOutputPayload)
	}
	if got.ModifiedBy == nil || *got.ModifiedBy != "demo-admin" {
		t.Errorf("sample execution: got modified_by %v, want demo-admin, who answered its card", got.ModifiedBy)
	}

	sc, err := svc.GetSchema(ctx, ids.ApprovalWorkflowID, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The later run replaced the sample's input, as runs do.
	if mock, _ := json.Marshal(sc.WorkflowMockPayload); string(mock) != `{"amount":1200,"item":"Dock","requester":"Ann"}` {
		t.Errorf("schema record: got mock payload %s, want the latest run's input", mock)
	}
	cards, _, err := st.Outbox.ListDeliveries(ctx, "org-1", 10, "")
	if err != nil {
		t.Fatal(err)
	}
	var sent bool
	for _, d := range cards {
		sent = sent || d.ExecutionID == ids.ExecutionID && d.CardID == ids.ApprovalCardID
	}
	if !sent {
		t.Errorf("outbox: got %d cards, want the sample execution's", len(cards))
	}
}

func await(t *testing.T, svc *app.Service, ctx context.Context, workflowID, id, status string) *cardflow.Execution {
	t.Helper()
	var ex *cardflow.Execution
	testenv.WaitFor(t, "execution "+id+" to be "+status, func() bool {
		var err error
		if ex, err = svc.GetExecution(ctx, workflowID, id); err != nil {
			t.Fatal(err)
		}
		return ex.Status == status
	})
	return ex
}

func eventTypes(ex *cardflow.Execution) []string {
	var types []string
	for _, ev := range ex.WorkflowEventLog.Events {
		types = append(types, ev.Type+" "+ev.StepID)
	}
	return types
}
