package dynamostore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// requestCounter is an SDK middleware that counts the requests a client
// sends, per operation, notes reads of base tables that are not
// consistent, and the attributes GetItem requests project.
type requestCounter struct {
	mu           sync.Mutex
	counts       map[string]int
	inconsistent []string
	projected    []string
}

// clientOption installs the counter on a client.
func (c *requestCounter) clientOption(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		// In the finalize step, after the retry middleware, every attempt
		// passes: that is a request sent.
		err := stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("CountRequests",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				c.mu.Lock()
				c.counts[awsmiddleware.GetOperationName(ctx)]++
				c.mu.Unlock()
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
		if err != nil {
			return err
		}
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("NoteInconsistentReads",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				var what string
				switch p := in.Parameters.(type) {
				case *dynamodb.GetItemInput:
					if p.ConsistentRead == nil || !*p.ConsistentRead {
						what = "GetItem " + *p.TableName
					}
					if p.ProjectionExpression != nil {
						c.mu.Lock()
						c.projected = append(c.projected, strings.Join(slices.Sorted(maps.Values(p.ExpressionAttributeNames)), " "))
						c.mu.Unlock()
					}
				case *dynamodb.QueryInput:
					if p.IndexName == nil && (p.ConsistentRead == nil || !*p.ConsistentRead) {
						what = "Query " + *p.TableName
					}
				}
				if what != "" {
					c.mu.Lock()
					c.inconsistent = append(c.inconsistent, what)
					c.mu.Unlock()
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
}

// take returns the counts since the last take and starts afresh.
func (c *requestCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.counts
	c.counts, c.projected = map[string]int{}, nil
	return got
}

// takeProjected returns the attributes each GetItem since the last take
// projected, and starts afresh.
func (c *requestCounter) takeProjected() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.projected
	c.projected = nil
	return got
}

func format(counts map[string]int) string {
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", op, counts[op]))
	}
	return strings.Join(parts, ", ")
}

// TestRequests checks how many DynamoDB requests each call of the store
// sends: the figures the package doc and BENCHMARKS.md give.
func TestRequests(t *testing.T) {
	counter := &requestCounter{counts: map[string]int{}}
	s := newStore(t, counter.clientOption)
	ctx := t.Context()
	org := "org-" + cardflow.NewID(time.Now())

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Records for the reads: a workflow of 12 versions, a card of 12
	// versions, 12 executions of a second workflow, a schema and a key.
	wf := &cardflow.Workflow{OrganizationID: org, WorkflowName: "counted"}
	must(s.SaveWorkflowVersion(ctx, wf))
	for range 11 {
		must(s.SaveWorkflowVersion(ctx, &cardflow.Workflow{OrganizationID: org, WorkflowID: wf.WorkflowID}))
	}
	card := &cardflow.Card{OrganizationID: org, CardName: "counted"}
	must(s.SaveCardVersion(ctx, card))
	for range 11 {
		must(s.SaveCardVersion(ctx, &cardflow.Card{OrganizationID: org, CardID: card.CardID}))
	}
	_, err := s.PublishCard(ctx, org, card.CardID, 3, "alice", 1)
	must(err)
	quiet := &cardflow.Workflow{OrganizationID: org, WorkflowName: "no executions"}
	must(s.SaveWorkflowVersion(ctx, quiet))
	var ex *cardflow.Execution
	for range 12 {
		ex = &cardflow.Execution{OrganizationID: org, WorkflowID: wf.WorkflowID, WorkflowVersion: 1, WorkflowExecutionID: cardflow.NewID(time.Now())}
		must(s.CreateExecution(ctx, ex))
	}
	must(s.PutSchema(ctx, &cardflow.Schema{OrganizationID: org, WorkflowID: wf.WorkflowID, WorkflowVersion: 1}))
	keyID := strings.ToLower(cardflow.NewID(time.Now()))
	hash := sha256.Sum256([]byte(keyID))
	key := &cardflow.APIKey{KeyID: keyID, Hash: hex.EncodeToString(hash[:]), OrganizationID: org, Scopes: []string{cardflow.ScopeRead}}
	started := &cardflow.Execution{OrganizationID: org, WorkflowID: wf.WorkflowID, WorkflowVersion: 1, WorkflowExecutionID: cardflow.NewID(time.Now()),
		Status: cardflow.ExecRunning, CreatedOn: 1700000000000, State: cardflow.ExecutionState{ProcessID: "PO-1"}}
	sampled := &cardflow.Execution{OrganizationID: org, WorkflowID: wf.WorkflowID, WorkflowVersion: 1, WorkflowExecutionID: cardflow.NewID(time.Now()),
		Status: cardflow.ExecRunning, CreatedOn: 1700000000000}
	sampledProc := &cardflow.Process{OrganizationID: org, ProcessID: "PO-2", WorkflowID: wf.WorkflowID, ExecutionID: sampled.WorkflowExecutionID}
	proc := &cardflow.Process{OrganizationID: org, ProcessID: "PO-1", WorkflowID: wf.WorkflowID, ExecutionID: started.WorkflowExecutionID}
	idem := &cardflow.Idempotency{OrganizationID: org, Key: "key-1", WorkflowID: wf.WorkflowID, ExecutionID: started.WorkflowExecutionID, ExpiresAt: 1700086400}
	schedule := &cardflow.Schedule{OrganizationID: org, WorkflowID: wf.WorkflowID, WorkflowVersion: 5, Expression: "rate(1 hour)", State: cardflow.ScheduleActive}
	counter.take()

	page := cardflow.ListOptions[cardflow.WorkflowKey]{Limit: 5}
	lastPage := cardflow.ListOptions[cardflow.WorkflowKey]{Limit: 5, After: &cardflow.WorkflowKey{OrganizationID: org, WorkflowID: wf.WorkflowID, WorkflowVersion: 3}}
	execPage := cardflow.ListOptions[cardflow.ExecutionKey]{Limit: 5}
	// The reads that project attributes.
	projections := map[string][]string{
		"ListWorkflowExecutions, no executions": {"organization_id"},
		"GetExecutionHead":                      {"organization_id parts record revision"},
		"GetExecutionRevision":                  {"organization_id parts revision"},
		"GetExecutionStatus":                    {"organization_id record"},
	}
	for _, tc := range []struct {
		name string
		call func() error
		want map[string]int
	}{
		{"GetWorkflow", func() error { _, err := s.GetWorkflow(ctx, org, wf.WorkflowID, 2); return err }, map[string]int{"GetItem": 1}},
		{"ListWorkflows, a full page", func() error { _, err := s.ListWorkflows(ctx, org, page); return err }, map[string]int{"Query": 1}},
		{"ListWorkflows, the last page", func() error { _, err := s.ListWorkflows(ctx, org, lastPage); return err }, map[string]int{"Query": 1}},
		{"SaveWorkflowVersion, a new workflow", func() error {
			return s.SaveWorkflowVersion(ctx, &cardflow.Workflow{OrganizationID: org})
		}, map[string]int{"PutItem": 1}},
		{"SaveWorkflowVersion, a version", func() error {
			return s.SaveWorkflowVersion(ctx, &cardflow.Workflow{OrganizationID: org, WorkflowID: wf.WorkflowID})
		}, map[string]int{"Query": 1, "PutItem": 1}},
		{"PublishWorkflow, the first", func() error { _, err := s.PublishWorkflow(ctx, org, wf.WorkflowID, 2, "bob", 2); return err },
			map[string]int{"TransactGetItems": 1, "TransactWriteItems": 1}},
		{"PublishWorkflow, another", func() error { _, err := s.PublishWorkflow(ctx, org, wf.WorkflowID, 5, "bob", 3); return err },
			map[string]int{"TransactGetItems": 1, "TransactWriteItems": 1}},
		{"GetLatestWorkflow, published", func() error { _, err := s.GetLatestWorkflow(ctx, org, wf.WorkflowID); return err }, map[string]int{"GetItem": 2}},
		{"GetLatestWorkflow, never published", func() error { _, err := s.GetLatestWorkflow(ctx, org, quiet.WorkflowID); return err }, map[string]int{"GetItem": 2}},
		{"GetCard", func() error { _, err := s.GetCard(ctx, org, card.CardID, 2); return err }, map[string]int{"GetItem": 1}},
		{"GetLatestActiveCard", func() error { _, err := s.GetLatestActiveCard(ctx, org, card.CardID); return err }, map[string]int{"GetItem": 2}},
		{"ListCards, a full page", func() error {
			_, err := s.ListCards(ctx, org, cardflow.ListOptions[cardflow.CardKey]{Limit: 5})
			return err
		}, map[string]int{"Query": 1}},
		{"PublishCard", func() error { _, err := s.PublishCard(ctx, org, card.CardID, 4, "bob", 4); return err },
			map[string]int{"TransactGetItems": 1, "TransactWriteItems": 1}},
		{"CreateExecution", func() error {
			return s.CreateExecution(ctx, &cardflow.Execution{OrganizationID: org, WorkflowID: wf.WorkflowID, WorkflowExecutionID: cardflow.NewID(time.Now())})
		}, map[string]int{"TransactWriteItems": 1}},
		{"PutExecution, no part changed", func() error { return s.PutExecution(ctx, ex) }, map[string]int{"PutItem": 1}},
		{"PutExecution, a step finished", func() error {
			ex.State.Outputs = map[string]any{"lookup": map[string]any{"amount": 1200}}
			return s.PutExecution(ctx, ex)
		}, map[string]int{"TransactWriteItems": 1}},
		{"GetExecution", func() error { _, err := s.GetExecution(ctx, org, wf.WorkflowID, ex.WorkflowExecutionID); return err }, map[string]int{"GetItem": 1, "Query": 1}},
		{"GetExecutionJSON", func() error {
			_, err := s.GetExecutionJSON(ctx, org, wf.WorkflowID, ex.WorkflowExecutionID)
			return err
		},
			map[string]int{"GetItem": 1, "Query": 1}},
		{"GetExecutionHead", func() error {
			_, err := s.GetExecutionHead(ctx, org, wf.WorkflowID, ex.WorkflowExecutionID)
			return err
		},
			map[string]int{"GetItem": 1, "Query": 1}},
		{"GetExecutionRevision", func() error {
			_, err := s.GetExecutionRevision(ctx, org, wf.WorkflowID, ex.WorkflowExecutionID)
			return err
		}, map[string]int{"GetItem": 1}},
		{"GetExecutionStatus", func() error {
			_, _, err := s.GetExecutionStatus(ctx, org, wf.WorkflowID, ex.WorkflowExecutionID)
			return err
		},
			map[string]int{"GetItem": 1}},
		{"ListWorkflowExecutions, a full page", func() error { _, err := s.ListWorkflowExecutions(ctx, org, wf.WorkflowID, execPage); return err }, map[string]int{"Query": 1}},
		{"ListWorkflowExecutions, no executions", func() error { _, err := s.ListWorkflowExecutions(ctx, org, quiet.WorkflowID, execPage); return err },
			map[string]int{"Query": 1, "GetItem": 1}},
		{"ListExecutions, a full page", func() error { _, err := s.ListExecutions(ctx, org, execPage); return err }, map[string]int{"Query": 1}},
		{"StartExecution", func() error { return s.StartExecution(ctx, started, proc, idem) }, map[string]int{"TransactWriteItems": 1}},
		{"GetProcess", func() error { _, err := s.GetProcess(ctx, org, proc.ProcessID); return err }, map[string]int{"GetItem": 1}},
		{"PutProcess", func() error { proc.Waits++; return s.PutProcess(ctx, proc) }, map[string]int{"PutItem": 1}},
		{"GetIdempotency", func() error { _, err := s.GetIdempotency(ctx, org, idem.Key, started.CreatedOn); return err }, map[string]int{"GetItem": 1}},
		{"PutExecution, the end", func() error { started.Status = cardflow.ExecSucceeded; return s.PutExecution(ctx, started) },
			map[string]int{"GetItem": 1, "TransactWriteItems": 1}},
		{"StartExecutionWithSample", func() error {
			return s.StartExecutionWithSample(ctx, sampled, sampledProc, nil, &cardflow.Schema{OrganizationID: org, WorkflowID: wf.WorkflowID, WorkflowVersion: 1})
		}, map[string]int{"TransactWriteItems": 1}},
		{"ListOpenExecutions", func() error { _, err := s.ListOpenExecutions(ctx); return err }, map[string]int{"Query": 1}},
		{"PutSchedule", func() error { return s.PutSchedule(ctx, schedule) }, map[string]int{"PutItem": 1}},
		{"GetSchedule", func() error { _, err := s.GetSchedule(ctx, org, wf.WorkflowID, 5); return err }, map[string]int{"GetItem": 1}},
		{"ListWorkflowSchedules", func() error { _, err := s.ListWorkflowSchedules(ctx, org, wf.WorkflowID); return err }, map[string]int{"Query": 1}},
		{"ListSchedules", func() error { _, err := s.ListSchedules(ctx); return err }, map[string]int{"Query": 1}},
		{"DeleteSchedule", func() error { return s.DeleteSchedule(ctx, org, wf.WorkflowID, 5) }, map[string]int{"DeleteItem": 1}},
		{"PutSchema", func() error {
			return s.PutSchema(ctx, &cardflow.Schema{OrganizationID: org, WorkflowID: wf.WorkflowID, WorkflowVersion: 2})
		}, map[string]int{"PutItem": 1}},
		{"GetSchema", func() error { _, err := s.GetSchema(ctx, org, wf.WorkflowID, 1); return err }, map[string]int{"GetItem": 1}},
		{"CreateAPIKey", func() error { return s.CreateAPIKey(ctx, key) }, map[string]int{"TransactWriteItems": 1}},
		{"GetAPIKeyByHash", func() error { _, err := s.GetAPIKeyByHash(ctx, key.Hash); return err }, map[string]int{"GetItem": 1}},
		{"ListAPIKeys", func() error { _, err := s.ListAPIKeys(ctx, org); return err }, map[string]int{"Query": 1}},
		{"RevokeAPIKey", func() error { _, err := s.RevokeAPIKey(ctx, key.KeyID, 5); return err }, map[string]int{"GetItem": 1, "UpdateItem": 1}},
		// Housekeeping spans organizations: times near the epoch find
		// nothing, whatever other tests left.
		{"ListOverdueWaits", func() error { _, err := s.ListOverdueWaits(ctx, 0, 10); return err }, map[string]int{"Query": 1}},
		{"ListStaleEarlyResumes", func() error { _, err := s.ListStaleEarlyResumes(ctx, 0, 10); return err }, map[string]int{"Query": 1}},
		{"DeleteExpiredProcesses, none expired", func() error { _, err := s.DeleteExpiredProcesses(ctx, 0, 10); return err }, map[string]int{"Query": 1}},
		{"DeleteExpiredIdempotency, one of those expired", func() error {
			n, err := s.DeleteExpiredIdempotency(ctx, idem.ExpiresAt*1000, 1)
			if err == nil && n != 1 {
				err = fmt.Errorf("deleted %d, want 1", n)
			}
			return err
		}, map[string]int{"Query": 1, "DeleteItem": 1}},
	} {
		if err := tc.call(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		projected := counter.takeProjected()
		if got, want := format(counter.take()), format(tc.want); got != want {
			t.Errorf("%s: got requests %s, want %s", tc.name, got, want)
		}
		if want := projections[tc.name]; !slices.Equal(projected, want) {
			t.Errorf("%s: got GetItem projecting %q, want %q", tc.name, projected, want)
		}
	}
	if len(counter.inconsistent) > 0 {
		t.Errorf("got reads of base tables that are not consistent: %v", counter.inconsistent)
	}
}
