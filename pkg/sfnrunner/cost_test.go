package sfnrunner_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/internal/fakes/sfnfake"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
	"github.com/cardflow/cardflow/pkg/sample"
)

// List prices, us-east-1, as AWS's pricing pages give them in November
// 2026 (DynamoDB's on-demand prices are those of the November 2024 cut).
const (
	usdPerTransition = 0.025 / 1000 // Step Functions Standard, per state transition
	usdPerLambdaReq  = 0.20 / 1e6   // Lambda, per request
	usdPerGBSecond   = 0.0000133334 // Lambda arm64, per GB-second (first tier)
	lambdaGB         = 128.0 / 1024 // 128 MB functions
	usdPerWRU        = 0.625 / 1e6  // DynamoDB on-demand, per write request unit
	usdPerRRU        = 0.125 / 1e6  // DynamoDB on-demand, per read request unit
	usdPerAPIRequest = 3.50 / 1e6   // API Gateway REST API, per request (first 333 million)
	apiRequests      = 2            // triggerworkflow and resumeworkflow
	apiLambdas       = apiRequests  // one Lambda function behind each endpoint
)

const (
	approvalInput   = `{"requester": "ann@example.com", "item": "Workstation", "amount": 4800}`
	approvalResume  = `{"source": "TEAMS", "decision": "approve", "comment": "Within budget"}`
	approvalOrg     = "org-cost"
	approvalTimeout = 30 * time.Second
	pollInterval    = 5 * time.Millisecond
	// extraTransforms are added to the sample approval for the run with ten
	// synchronous steps.
	extraTransforms = 9
)

// approvalWorkflows loads the sample data local mode starts with and
// returns two workflows to run: the sample approval (one synchronous step,
// its amount check, between the trigger and the card), and the same with
// nine transform steps before the check (ten synchronous steps).
func approvalWorkflows(t testing.TB, svc *app.Service, ctx context.Context) map[int]string {
	t.Helper()
	ids, err := sample.Load(ctx, svc)
	if err != nil {
		t.Fatal(err)
	}
	wf, err := svc.GetWorkflow(ctx, ids.ApprovalWorkflowID, 2)
	if err != nil {
		t.Fatal(err)
	}
	steps := append([]cardflow.Step(nil), wf.WorkflowSteps...)
	var conns []cardflow.Connection
	prev := "start"
	for i := 1; i <= extraTransforms; i++ {
		id := fmt.Sprintf("enrich%d", i)
		steps = append(steps, cardflow.Step{ID: id, Name: "Enrich " + id, Type: "transform", Config: map[string]any{"output": "{{ input.amount * 1.0 }}"}})
		conns = append(conns, cardflow.Connection{From: prev, To: id})
		prev = id
	}
	for _, c := range wf.WorkflowConnections {
		if c.From == "start" {
			c.From = prev
		}
		conns = append(conns, c)
	}
	long, err := svc.SaveWorkflow(ctx, app.SaveWorkflowInput{WorkflowName: wf.WorkflowName + " (enriched)", WorkflowSteps: steps, WorkflowConnections: conns})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishWorkflow(ctx, long.WorkflowID, long.WorkflowVersion); err != nil {
		t.Fatal(err)
	}
	return map[int]string{1: ids.ApprovalWorkflowID, 1 + extraTransforms: long.WorkflowID}
}

// runApproval triggers an approval of 4800 EUR, answers its card once Park
// has stored the task token, and waits for it to succeed. It reads the
// store through watch, so that its polling is not counted. It returns the
// execution id and the time the trigger and resume use cases took.
func runApproval(t testing.TB, svc *app.Service, watch cardflow.Store, ctx context.Context, workflowID string, n int) (string, time.Duration) {
	t.Helper()
	pid := fmt.Sprintf("PO-%d-%s", n, cardflow.NewID(time.Now()))
	begin := time.Now()
	out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: workflowID, ProcessID: pid, Body: []byte(approvalInput)})
	if err != nil {
		t.Fatal(err)
	}
	spent := time.Since(begin)
	deadline := time.Now().Add(approvalTimeout)
	for {
		p, err := watch.GetProcess(context.Background(), approvalOrg, pid)
		if err != nil {
			t.Fatal(err)
		}
		if p.Wait != nil && p.Wait.Token != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Park stored no token")
		}
		time.Sleep(pollInterval)
	}
	begin = time.Now()
	if _, err := svc.Resume(ctx, pid, []byte(approvalResume)); err != nil {
		t.Fatal(err)
	}
	spent += time.Since(begin)
	for {
		ex, err := watch.GetExecution(context.Background(), approvalOrg, workflowID, out.ExecutionID)
		if err != nil {
			t.Fatal(err)
		}
		if ex.Status == cardflow.ExecSucceeded {
			return out.ExecutionID, spent
		}
		if !ex.Open() || time.Now().After(deadline) {
			t.Fatalf("execution %s is %s, want SUCCEEDED", out.ExecutionID, ex.Status)
		}
		time.Sleep(pollInterval)
	}
}

// awaitMachine waits until the state machine execution has ended, so its
// counts are complete.
func awaitMachine(t testing.TB, fake *sfnfake.Server, id string) sfnfake.Counts {
	t.Helper()
	for deadline := time.Now().Add(approvalTimeout); fake.Status(id) == sfnfake.StatusRunning; time.Sleep(pollInterval) {
		if time.Now().After(deadline) {
			t.Fatalf("state machine execution %s still runs", id)
		}
	}
	if got := fake.Status(id); got != sfnfake.StatusSucceeded {
		t.Fatalf("state machine execution %s is %s, want SUCCEEDED", id, got)
	}
	c, _ := fake.Counts(id)
	return c
}

func costContext() context.Context {
	return cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: approvalOrg, WorkspaceID: approvalOrg + "-ws", Scopes: cardflow.AllScopes, Actor: "cost",
	})
}

// TestTransitionsDoNotGrowWithSteps runs the sample approval with one and
// with ten synchronous steps and checks that Step Functions counts the same
// transitions and Lambda invocations for both.
func TestTransitionsDoNotGrowWithSteps(t *testing.T) {
	store := boltStore(t, "cost.db")
	st := newStack(t, store, store)
	ctx := costContext()
	svc := st.harness.Service
	workflows := approvalWorkflows(t, svc, ctx)
	got := map[int]sfnfake.Counts{}
	for _, n := range []int{1, 1 + extraTransforms} {
		id, _ := runApproval(t, svc, store, ctx, workflows[n], n)
		got[n] = awaitMachine(t, st.fake, id)
	}
	one, ten := got[1], got[1+extraTransforms]
	// Advance, Route, Park, Advance, Route, Succeeded.
	if one.Transitions != 6 || ten.Transitions != one.Transitions {
		t.Errorf("transitions: got %d with 1 synchronous step and %d with 10, want 6 for both", one.Transitions, ten.Transitions)
	}
	want := map[string]int{advanceARN: 2, parkARN: 1}
	for n, c := range got {
		if fmt.Sprint(c.Invocations) != fmt.Sprint(want) {
			t.Errorf("%d synchronous steps: got invocations %v, want %v", n, c.Invocations, want)
		}
	}
}

// capacityCounter is a DynamoDB client middleware that asks for and sums
// the consumed capacity of every request.
type capacityCounter struct {
	mu          sync.Mutex
	read, write float64
}

func (c *capacityCounter) clientOption(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("ConsumedCapacity",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				total := types.ReturnConsumedCapacityTotal
				reads := false
				switch p := in.Parameters.(type) {
				case *dynamodb.GetItemInput:
					p.ReturnConsumedCapacity, reads = total, true
				case *dynamodb.QueryInput:
					p.ReturnConsumedCapacity, reads = total, true
				case *dynamodb.TransactGetItemsInput:
					p.ReturnConsumedCapacity, reads = total, true
				case *dynamodb.BatchGetItemInput:
					p.ReturnConsumedCapacity, reads = total, true
				case *dynamodb.PutItemInput:
					p.ReturnConsumedCapacity = total
				case *dynamodb.UpdateItemInput:
					p.ReturnConsumedCapacity = total
				case *dynamodb.DeleteItemInput:
					p.ReturnConsumedCapacity = total
				case *dynamodb.TransactWriteItemsInput:
					p.ReturnConsumedCapacity = total
				case *dynamodb.BatchWriteItemInput:
					p.ReturnConsumedCapacity = total
				}
				out, md, err := next.HandleInitialize(ctx, in)
				var used []types.ConsumedCapacity
				switch r := out.Result.(type) {
				case *dynamodb.GetItemOutput:
					used = one(r.ConsumedCapacity)
				case *dynamodb.QueryOutput:
					used = one(r.ConsumedCapacity)
				case *dynamodb.PutItemOutput:
					used = one(r.ConsumedCapacity)
				case *dynamodb.UpdateItemOutput:
					used = one(r.ConsumedCapacity)
				case *dynamodb.DeleteItemOutput:
					used = one(r.ConsumedCapacity)
				case *dynamodb.TransactGetItemsOutput:
					used = r.ConsumedCapacity
				case *dynamodb.TransactWriteItemsOutput:
					used = r.ConsumedCapacity
				case *dynamodb.BatchGetItemOutput:
					used = r.ConsumedCapacity
				case *dynamodb.BatchWriteItemOutput:
					used = r.ConsumedCapacity
				}
				c.mu.Lock()
				for _, u := range used {
					if u.CapacityUnits == nil {
						continue
					}
					if reads {
						c.read += *u.CapacityUnits
					} else {
						c.write += *u.CapacityUnits
					}
				}
				c.mu.Unlock()
				return out, md, err
			}), middleware.After)
	})
}

func one(c *types.ConsumedCapacity) []types.ConsumedCapacity {
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}

func (c *capacityCounter) take() (read, write float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	read, write, c.read, c.write = c.read, c.write, 0, 0
	return read, write
}

// BenchmarkExecutionCost runs the sample approval end to end (trigger,
// card wait, resume, end) on the fake Step Functions and DynamoDB Local,
// and reports per execution what AWS bills, and the cost of 1,000
// executions at list prices. Lambda durations are those measured here, on
// this machine against DynamoDB Local.
func BenchmarkExecutionCost(b *testing.B) {
	_, prefix := dynamostoretest.Tables(b)
	var capacity capacityCounter
	ctx := context.Background()
	client, err := dynamoclient.New(ctx, os.Getenv("DYNAMODB_ENDPOINT"), "", capacity.clientOption)
	if err != nil {
		b.Fatal(err)
	}
	store, err := dynamostore.New(client, dynamostore.WithTablePrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}
	// The benchmark watches executions through a store of its own, whose
	// reads are not counted.
	plain, err := dynamoclient.New(ctx, os.Getenv("DYNAMODB_ENDPOINT"), "")
	if err != nil {
		b.Fatal(err)
	}
	watch, err := dynamostore.New(plain, dynamostore.WithTablePrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}
	st := newStack(b, store, boltStore(b, "outbox.db"))
	svc := st.harness.Service
	actx := costContext()
	workflows := approvalWorkflows(b, svc, actx)
	for _, n := range []int{1, 1 + extraTransforms} {
		b.Run(fmt.Sprintf("sync=%d", n), func(b *testing.B) {
			runApproval(b, svc, watch, actx, workflows[n], n) // warm up: compiled graphs, connections
			capacity.take()
			st.billed.Store(0)
			var transitions, invocations int
			var apiMs int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id, spent := runApproval(b, svc, watch, actx, workflows[n], n)
				c := awaitMachine(b, st.fake, id)
				transitions += c.Transitions
				for _, k := range c.Invocations {
					invocations += k
				}
				apiMs += (spent.Nanoseconds() + 999_999) / 1_000_000
			}
			b.StopTimer()
			read, write := capacity.take()
			reportCost(b, "execution", "exec", usage{transitions: transitions, invocations: invocations, lambdaMs: st.billed.Load() + apiMs,
				read: read, write: write, apiLambdas: apiLambdas, apiRequests: apiRequests})
		})
	}
}

// usage is what b.N runs used, as AWS bills it; apiLambdas and apiRequests
// are per run.
type usage struct {
	transitions, invocations int
	lambdaMs                 int64
	read, write              float64
	apiLambdas, apiRequests  float64
}

// reportCost logs what one run costs at list prices, per part, and reports
// the counts and the cost of 1,000 runs as metrics per unit.
func reportCost(b *testing.B, what, unit string, c usage) {
	per := func(v float64) float64 { return v / float64(b.N) }
	lambdaMs := per(float64(c.lambdaMs))
	requests := per(float64(c.invocations)) + c.apiLambdas
	parts := []struct {
		name string
		usd  float64
	}{
		{"Step Functions", per(float64(c.transitions)) * usdPerTransition},
		{"Lambda requests", requests * usdPerLambdaReq},
		{"Lambda GB-s", lambdaMs / 1000 * lambdaGB * usdPerGBSecond},
		{"DynamoDB writes", per(c.write) * usdPerWRU},
		{"DynamoDB reads", per(c.read) * usdPerRRU},
		{"API Gateway", c.apiRequests * usdPerAPIRequest},
	}
	var cost float64
	line := ""
	for _, p := range parts {
		cost += p.usd
		line += fmt.Sprintf("  %s $%.4f", p.name, 1000*p.usd)
	}
	b.Logf("per 1,000 %ss:%s", what, line)
	b.ReportMetric(per(float64(c.transitions)), "transitions/"+unit)
	b.ReportMetric(requests, "lambda-requests/"+unit)
	b.ReportMetric(lambdaMs, "lambda-ms/"+unit)
	b.ReportMetric(per(c.read), "RRU/"+unit)
	b.ReportMetric(per(c.write), "WRU/"+unit)
	b.ReportMetric(1000*cost, "USD/1000"+unit)
}
