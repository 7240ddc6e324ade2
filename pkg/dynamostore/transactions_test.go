package dynamostore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
)

// racingClient runs meanwhile, once set, before the first transaction
// that writes to table, as a concurrent writer would, and counts those
// transactions from then on.
type racingClient struct {
	dynamostore.Client
	table     string
	meanwhile func(ctx context.Context)
	mu        sync.Mutex
	writes    int
}

func (c *racingClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	for _, op := range in.TransactItems {
		if op.Put != nil && aws.ToString(op.Put.TableName) == c.table {
			c.mu.Lock()
			if c.meanwhile == nil {
				c.mu.Unlock()
				break
			}
			c.writes++
			first := c.writes == 1
			c.mu.Unlock()
			if first {
				c.meanwhile(ctx)
			}
			break
		}
	}
	return c.Client.TransactWriteItems(ctx, in, opts...)
}

// TestEndRereadsAChangedProcess: a resume that changes the process record
// between the end's read of it and the end's transaction fails the
// transaction's condition on the record; the end reads the record again
// and closes it, keeping what the resume wrote.
func TestEndRereadsAChangedProcess(t *testing.T) {
	prefix := tables(t)
	other := newStore(t)
	ctx := t.Context()
	org := "org-" + cardflow.NewID(time.Now())
	racing := &racingClient{Client: shared.client, table: prefix + "processes"}
	s, err := dynamostore.New(racing, dynamostore.WithTablePrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	early := &cardflow.Resume{Source: cardflow.SourceSAP, Payload: map[string]any{"decision": "approve"}, Actor: "sap", ReceivedOn: 2}
	meanwhile := func(ctx context.Context) {
		p, err := other.GetProcess(ctx, org, "PO-race")
		if err != nil {
			t.Error(err)
			return
		}
		p.Early = early
		if err := other.PutProcess(ctx, p); err != nil {
			t.Error(err)
		}
	}
	wf := &cardflow.Workflow{OrganizationID: org, WorkflowName: "race"}
	if err := s.SaveWorkflowVersion(ctx, wf); err != nil {
		t.Fatal(err)
	}
	id := cardflow.NewID(time.Now())
	ex := &cardflow.Execution{OrganizationID: org, WorkflowID: wf.WorkflowID, WorkflowVersion: 1, WorkflowExecutionID: id,
		Status: cardflow.ExecRunning, CreatedOn: 1700000000000, ModifiedOn: 1700000000000,
		State: cardflow.ExecutionState{StepID: "start", ProcessID: "PO-race", Outputs: map[string]any{}}}
	if err := s.StartExecution(ctx, ex, &cardflow.Process{OrganizationID: org, ProcessID: "PO-race", WorkflowID: wf.WorkflowID, ExecutionID: id}, nil); err != nil {
		t.Fatal(err)
	}
	racing.mu.Lock()
	racing.meanwhile = meanwhile
	racing.mu.Unlock()
	ex.Status, ex.ModifiedOn = cardflow.ExecSucceeded, ex.ModifiedOn+5000
	if err := s.PutExecution(ctx, ex); err != nil {
		t.Fatalf("end: %v", err)
	}
	p, err := other.GetProcess(ctx, org, "PO-race")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.ExpiresAt, ex.ModifiedOn/1000+int64(cardflow.ClosedProcessTTL/time.Second); !p.Closed || got != want {
		t.Errorf("process record: got closed %v expiring %d, want closed expiring %d", p.Closed, got, want)
	}
	if p.Early == nil || p.Early.Actor != early.Actor || p.Revision != 3 {
		t.Errorf("process record: got early resume %+v at revision %d, want the resume's, at revision 3", p.Early, p.Revision)
	}
	if got, err := other.GetExecution(ctx, org, wf.WorkflowID, id); err != nil || got.Status != cardflow.ExecSucceeded || got.Revision != 2 {
		t.Errorf("execution: got %v, want SUCCEEDED at revision 2", err)
	}
	if racing.writes != 2 {
		t.Errorf("got %d transactions closing the process record, want 2: the one that failed and the one after it", racing.writes)
	}
}

// TestStartLeavesOutARefusedSample: a start whose schema sample names a
// workflow version whose schema is another organization's, which PutSchema
// refuses, starts without the sample, and the other organization's schema
// stays.
func TestStartLeavesOutARefusedSample(t *testing.T) {
	s := newStore(t)
	ctx := t.Context()
	org, other := "org-"+cardflow.NewID(time.Now()), "org-"+cardflow.NewID(time.Now())
	wf := "wf-" + cardflow.NewID(time.Now())
	theirs := &cardflow.Schema{OrganizationID: other, WorkflowID: wf, WorkflowVersion: 1, WorkflowMockPayload: map[string]any{"theirs": true}}
	if err := s.PutSchema(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	id := cardflow.NewID(time.Now())
	ex := &cardflow.Execution{OrganizationID: org, WorkflowID: wf, WorkflowVersion: 1, WorkflowExecutionID: id,
		Status: cardflow.ExecRunning, CreatedOn: 1700000000000, ModifiedOn: 1700000000000,
		State: cardflow.ExecutionState{StepID: "start", ProcessID: "PO-1", Outputs: map[string]any{}}}
	sample := &cardflow.Schema{OrganizationID: org, WorkflowID: wf, WorkflowVersion: 1, WorkflowMockPayload: map[string]any{"mine": true}}
	if err := s.StartExecutionWithSample(ctx, ex, &cardflow.Process{OrganizationID: org, ProcessID: "PO-1", WorkflowID: wf, ExecutionID: id}, nil, sample); err != nil {
		t.Fatalf("start: %v", err)
	}
	if got, err := s.GetExecution(ctx, org, wf, id); err != nil || got.Revision != 1 {
		t.Errorf("started execution: got %v, want it stored at revision 1", err)
	}
	if _, err := s.GetSchema(ctx, org, wf, 1); cardflow.ErrorCode(err) != cardflow.ENOTFOUND {
		t.Errorf("sample of the start: got %v, want none stored", err)
	}
	got, err := s.GetSchema(ctx, other, wf, 1)
	if err != nil || got.WorkflowMockPayload["theirs"] != true {
		t.Errorf("the other organization's schema: got %+v, %v, want it as it was", got, err)
	}
}
