package execrecord

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// approvalExecution is an execution shaped like the sample approval's
// after it ended: four steps, a card step with its data, twelve events.
func approvalExecution() *cardflow.Execution {
	by := "demo-admin"
	request := map[string]any{"amount": 1840.5, "cost_center": "CC-4711", "item": "Laptop", "requester": "Dana Fischer"}
	answer := map[string]any{"comment": "Fine, within budget", "decision": "approve", "responder": "m.keller@example.com", "source": "TEAMS"}
	step := func(id, name string) (cardflow.Event, cardflow.Event) {
		return cardflow.Event{At: 1795775027758, Type: "StepStarted", StepID: id, Step: name}, cardflow.Event{At: 1795775027758, Type: "StepFinished", StepID: id, Step: name}
	}
	var events []cardflow.Event
	events = append(events, cardflow.Event{At: 1795775027755, Type: "ExecutionStarted", Message: "by demo-admin"})
	for _, s := range [][2]string{{"start", "Request received"}, {"check", "Amount check"}, {"approve", "Manager approval"}, {"done", "Approved"}} {
		a, b := step(s[0], s[1])
		events = append(events, a, b)
	}
	events = append(events, cardflow.Event{At: 1795775027787, Type: "ExecutionSucceeded", StepID: "done", Step: "Approved"})
	return &cardflow.Execution{
		WorkflowExecutionID: "01M8E8GPHBTDJYSCP18RB13T03", WorkflowID: "01M8E8GPGFDQPP8XC23ZD49B6F", WorkflowVersion: 2,
		OrganizationID: "demo-org", WorkspaceID: "demo-workspace", WorkflowCurrentState: "Approved",
		WorkflowTriggerType: cardflow.TriggerRequest, Status: cardflow.ExecSucceeded,
		WorkflowEventLog: cardflow.EventLog{Events: events, Total: len(events)},
		CondensedLogs: map[string]cardflow.StepLog{
			"start":   {Input: request, Output: request, Status: cardflow.ExecSucceeded, StartedOn: 1795775027758, FinishedOn: 1795775027758},
			"check":   {Output: map[string]any{"next": "approve"}, Status: cardflow.ExecSucceeded, StartedOn: 1795775027758, FinishedOn: 1795775027758},
			"approve": {Input: map[string]any{"card_id": "01M8E8GPFX1KTM9VP92YYN096M", "card_version": 2, "data": request}, Output: answer, Status: cardflow.ExecSucceeded, StartedOn: 1795775027758, FinishedOn: 1795775027782},
			"done":    {Output: answer, Status: cardflow.ExecSucceeded, StartedOn: 1795775027783, FinishedOn: 1795775027784},
		},
		WorkflowInputPayload:  request,
		WorkflowOutputPayload: answer,
		WorkflowDetails: cardflow.WorkflowDetails{
			WorkflowName: "Purchase request approval",
			WorkflowSteps: []cardflow.Step{
				{ID: "start", Name: "Request received", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
				{ID: "check", Name: "Amount check", Type: "condition", Config: map[string]any{}},
				{ID: "approve", Name: "Manager approval", Type: "card", Config: map[string]any{"card_id": "01M8E8GPFX1KTM9VP92YYN096M", "data": map[string]any{"amount": "{{ input.amount }}", "item": "{{ input.item }}", "requester": "{{ input.requester }}"}, "timeout": "P3D"}},
				{ID: "done", Name: "Approved", Type: "end", Config: map[string]any{}},
			},
			WorkflowConnections: []cardflow.Connection{{From: "start", To: "check"}, {From: "check", To: "approve", When: "input.amount > 1000"}, {From: "check", To: "done"}, {From: "approve", To: "done"}},
		},
		ModifiedBy: &by, CreatedOn: 1795775027755, ModifiedOn: 1795775027787,
		State: cardflow.ExecutionState{Outputs: map[string]any{"start": request, "check": map[string]any{"next": "approve"}, "approve": answer, "done": answer}, ProcessID: "01M8E8GPHBTDJYSCP18RB13T03", StepsRun: 4},
	}
}

// BenchmarkExecutionJSON measures the answer of getWorkflowExecutionById
// assembled from a stored head and parts, and a list item's head decoded.
func BenchmarkExecutionJSON(b *testing.B) {
	w, err := Split(approvalExecution())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("ExecutionJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := JSON(w.Head, w.Parts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DecodeHead", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeHead(w.Head); err != nil {
				b.Fatal(err)
			}
		}
	})
}
