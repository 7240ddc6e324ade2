package dynamostore_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/execrecord"
)

// TestWholeItemsRead plants an execution as items were written before
// parts, whole in its record, with more steps than one transaction holds:
// get and lists read it, and its next write stores it in parts, which the
// writes after it add to.
func TestWholeItemsRead(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	org := "org-" + cardflow.NewID(time.Now())
	wf := &cardflow.Workflow{OrganizationID: org, WorkflowName: "whole"}
	if err := s.SaveWorkflowVersion(ctx, wf); err != nil {
		t.Fatal(err)
	}
	ex := &cardflow.Execution{WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: wf.WorkflowID, WorkflowVersion: 1,
		OrganizationID: org, Status: cardflow.ExecRunning, WorkflowInputPayload: map[string]any{"po": "4500001234"},
		CondensedLogs: map[string]cardflow.StepLog{}, Revision: 3,
		State: cardflow.ExecutionState{StepID: "next", ProcessID: "PO-whole", Outputs: map[string]any{}}}
	for i := range 120 {
		id := fmt.Sprintf("s%03d", i)
		ex.State.Outputs[id] = map[string]any{"i": i}
		ex.CondensedLogs[id] = cardflow.StepLog{Output: map[string]any{"i": i}, Status: cardflow.ExecSucceeded}
	}
	record, err := execrecord.Marshal(ex)
	if err != nil {
		t.Fatal(err)
	}
	_, err = shared.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tables(t) + "executions"), Item: map[string]types.AttributeValue{
		"workflow_id": &types.AttributeValueMemberS{Value: wf.WorkflowID}, "workflow_execution_id": &types.AttributeValueMemberS{Value: ex.WorkflowExecutionID},
		"organization_id": &types.AttributeValueMemberS{Value: org}, "revision": &types.AttributeValueMemberN{Value: strconv.Itoa(3)},
		"record": &types.AttributeValueMemberS{Value: string(record)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string) *cardflow.Execution {
		t.Helper()
		got, err := s.GetExecution(ctx, org, wf.WorkflowID, ex.WorkflowExecutionID)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		g, _ := execrecord.Marshal(got)
		w, _ := execrecord.Marshal(ex)
		if string(g) != string(w) {
			t.Fatalf("%s: got\n%.1500s\nwant\n%.1500s", what, g, w)
		}
		return got
	}
	read := check("get of the whole item")
	page, err := s.ListExecutions(ctx, org, cardflow.ListOptions[cardflow.ExecutionKey]{})
	if err != nil || len(page.Items) != 1 || page.Items[0].WorkflowExecutionID != ex.WorkflowExecutionID {
		t.Fatalf("list: got %d items, %v, want the whole item", len(page.Items), err)
	}

	read.WorkflowCurrentState = "Next"
	if err := s.PutExecution(ctx, read); err != nil {
		t.Fatalf("first write, into parts: %v", err)
	}
	ex.WorkflowCurrentState, ex.Revision = "Next", 4
	read = check("get after the first write")
	read.State.Outputs["s120"] = "last"
	if err := s.PutExecution(ctx, read); err != nil {
		t.Fatalf("write of one more step: %v", err)
	}
	ex.State.Outputs["s120"], ex.Revision = "last", 5
	check("get after one more step")
}
