package engine_test

import (
	"context"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestApprovalIgnoresEarlyResume: a resumeworkflow body kept for the
// execution's next wait does not claim an approval step's wait: only the
// approval's decision does.
func TestApprovalIgnoresEarlyResume(t *testing.T) { onEachStore(t, testApprovalIgnoresEarlyResume) }

func testApprovalIgnoresEarlyResume(t *testing.T, b backend) {
	f := newFixture(t, b)
	config := obj{"card_id": "CARD", "approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all", "timeout": "PT1H"}
	defs := []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("approve", cardflow.StepApproval, config),
		step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.approve.output }}"}),
	}
	f.card(defs)
	ref := f.start(defs, []cardflow.Connection{{From: "start", To: "approve"}, {From: "approve", To: "done"}}, obj{"amount": 12.0}, nil)
	f.resume(ref, obj{"note": "urgent"}) // kept early: the wait is not open yet
	if res := f.advance(ref); res.Status != cardflow.ExecWaiting {
		t.Fatalf("got %+v (%s), want WAITING", res, toJSON(f.get(ref).WorkflowOutputPayload))
	}
	p, err := f.store.GetProcess(context.Background(), f.org, "p-"+ref.ExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Wait == nil || p.Wait.Claimed() || p.Early != nil {
		t.Errorf("process: wait %+v, early %+v; want the wait open and unclaimed, the early resume dropped", p.Wait, p.Early)
	}
	a, err := f.store.GetApproval(context.Background(), f.org, cardflow.ApprovalIDOf(ref.ExecutionID, 1))
	if err != nil || a.Status != cardflow.ApprovalPending {
		t.Errorf("approval: %+v, %v; want PENDING", a, err)
	}
}
