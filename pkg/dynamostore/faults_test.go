package dynamostore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/localmode"
)

// fault is a way a DynamoDB call fails.
type fault struct {
	name string
	// applied: the request reached DynamoDB and was carried out, but its
	// answer was lost; otherwise nothing was sent.
	applied bool
	err     func() error
	// status is the answer when the fault fails the operation.
	status int
}

var faults = []fault{
	{name: "throttled", status: 429, err: func() error {
		return &types.ProvisionedThroughputExceededException{Message: aws.String("injected: throughput exceeded")}
	}},
	{name: "500", status: 503, err: func() error {
		return &types.InternalServerError{Message: aws.String("injected: internal server error")}
	}},
	{name: "timeout after the write", status: 503, applied: true, err: func() error { return context.DeadlineExceeded }},
}

// armedKey marks the context of a request under test: the injector counts
// and fails only those calls, not the runner's work in the background.
type armedKey struct{}

// faultInjector is an SDK middleware that fails the nth DynamoDB call made
// for an armed request.
type faultInjector struct {
	mu     sync.Mutex
	calls  []string
	failAt int
	fault  fault
}

func (f *faultInjector) arm(at int, ft fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.failAt, f.fault = nil, at, ft
}

// taken returns the armed calls since the last arm.
func (f *faultInjector) taken() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// clientOption installs the injector in the initialize step, before the
// SDK's retries: an injected fault is the call's final answer, as when
// DynamoDB throttled or failed through every retry.
func (f *faultInjector) clientOption(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("InjectFaults",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if ctx.Value(armedKey{}) == nil {
					return next.HandleInitialize(ctx, in)
				}
				op := awsmiddleware.GetOperationName(ctx)
				f.mu.Lock()
				n := len(f.calls)
				f.calls = append(f.calls, op)
				fail, ft := n == f.failAt, f.fault
				f.mu.Unlock()
				if !fail {
					return next.HandleInitialize(ctx, in)
				}
				if ft.applied {
					out, md, err := next.HandleInitialize(ctx, in)
					if err != nil {
						return out, md, err
					}
				}
				// The SDK wraps this in its OperationError, as it does DynamoDB's answers.
				return middleware.InitializeOutput{}, middleware.Metadata{}, ft.err()
			}), middleware.Before)
	})
}

// faultEnv is the HTTP API over the DynamoDB store whose client has the
// injector.
type faultEnv struct {
	t     *testing.T
	inj   *faultInjector
	store cardflow.Store
	svc   *app.Service
	srv   *httptest.Server
	org   string
	key   string
}

func newFaultEnv(t *testing.T) *faultEnv {
	inj := &faultInjector{failAt: -1}
	store := newStore(t, inj.clientOption)
	outbox, err := boltstore.Open(filepath.Join(t.TempDir(), "outbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	// Injected faults are logged as errors; they are expected here.
	quiet := slog.New(slog.DiscardHandler)
	st, err := localmode.NewStack(store, outbox, localmode.Config{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	api, err := httpapi.New(st.Service, httpapi.KeyAuthenticator{Service: st.Service}, httpapi.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-test-armed") != "" {
			r = r.WithContext(context.WithValue(r.Context(), armedKey{}, true))
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e := &faultEnv{t: t, inj: inj, store: store, svc: st.Service, srv: srv, org: "org-" + strings.ToLower(cardflow.NewID(time.Now()))}
	e.key, _, err = st.Service.CreateKey(context.Background(), app.CreateKeyInput{OrganizationID: e.org, WorkspaceID: "ws", Scopes: cardflow.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// createKey is the method of the key-creation operation, which has no
// HTTP endpoint: operators create keys with the CLI, through the service.
const createKey = "CREATE KEY"

// call sends a request; armed requests go through the injector.
func (e *faultEnv) call(armed bool, method, path string, body any, header ...string) (int, map[string]any) {
	e.t.Helper()
	if method == createKey {
		ctx := context.Background()
		if armed {
			ctx = context.WithValue(ctx, armedKey{}, true)
		}
		_, _, err := e.svc.CreateKey(ctx, app.CreateKeyInput{OrganizationID: e.org, WorkspaceID: "ws", Scopes: []string{cardflow.ScopeRead}, Name: path})
		if err != nil {
			return httpapi.StatusOf(err), map[string]any{"message": cardflow.ErrorMessage(err), "code": cardflow.ErrorCode(err)}
		}
		return 200, map[string]any{"message": "success"}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		e.t.Fatal(err)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(string(raw)))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("x-api-key", e.key)
	if armed {
		req.Header.Set("x-test-armed", "1")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, out
}

// must sends an unarmed request that has to succeed.
func (e *faultEnv) must(method, path string, body any, header ...string) map[string]any {
	e.t.Helper()
	status, out := e.call(false, method, path, body, header...)
	if status != 200 {
		e.t.Fatalf("%s %s: got %d %v", method, path, status, out)
	}
	return out
}

func item(out map[string]any) map[string]any { m, _ := out["item"].(map[string]any); return m }

// approval publishes a card and a workflow that waits for it.
func (e *faultEnv) approval() string {
	e.t.Helper()
	c := item(e.must("POST", "/v1/adaptive-cards/saveCard", map[string]any{"card_name": "Approve", "card_payload": map[string]any{
		"type": "AdaptiveCard", "version": "1.5", "body": []any{map[string]any{"type": "TextBlock", "text": "Approve?"}},
	}}))
	e.must("POST", "/v1/adaptive-cards/publishCard", map[string]any{"card_id": c["card_id"], "card_version": c["card_version"]})
	w := item(e.must("POST", "/v1/workflows/saveWorkflow", map[string]any{
		"workflow_name": "Approval",
		"workflow_steps": []any{
			map[string]any{"id": "start", "name": "Start", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
			map[string]any{"id": "ask", "name": "Ask", "type": "card", "config": map[string]any{"card_id": c["card_id"], "timeout": "P1D"}},
			map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{}},
		},
		"workflow_connections": []any{map[string]any{"from": "start", "to": "ask"}, map[string]any{"from": "ask", "to": "done"}},
	}))
	id, _ := w["workflow_id"].(string)
	e.must("POST", "/v1/workflows/publishWorkflow", map[string]any{"workflow_id": id, "workflow_version": 1})
	return id
}

// waiting starts an execution of workflow on processID and waits until its
// wait is open.
func (e *faultEnv) waiting(workflow, processID string) string {
	e.t.Helper()
	id, _ := e.must("POST", "/v1/workflows/triggerworkflow/"+workflow+"?process_id="+processID, map[string]any{})["service_execution_id"].(string)
	testenv.WaitFor(e.t, "execution "+id+" to open its wait", func() bool {
		p, err := e.store.GetProcess(context.Background(), e.org, processID)
		return err == nil && p.ExecutionID == id && p.Wait != nil
	})
	return id
}

// faultOp is one operation under test: prepare makes what it needs (with
// unarmed requests) and returns the request.
type faultOp struct {
	name    string
	prepare func(e *faultEnv, n int) (method, path string, body any, header []string)
	// repeatable: a retry after an applied write whose answer was lost
	// succeeds again. Resume and cancel are not: their retry then finds the
	// work done and answers 409.
	repeatable bool
}

var faultOps = []faultOp{
	{name: "save", repeatable: true, prepare: func(e *faultEnv, n int) (string, string, any, []string) {
		return "POST", "/v1/workflows/saveWorkflow", map[string]any{
			"workflow_id": e.approval(), "workflow_name": "Approval",
			"workflow_steps": []any{
				map[string]any{"id": "start", "name": "Start", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
				map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{}},
			},
			"workflow_connections": []any{map[string]any{"from": "start", "to": "done"}},
		}, nil
	}},
	{name: "publish", repeatable: true, prepare: func(e *faultEnv, n int) (string, string, any, []string) {
		w := item(e.must("POST", "/v1/workflows/saveWorkflow", map[string]any{
			"workflow_name": "Nightly",
			"workflow_steps": []any{
				map[string]any{"id": "start", "name": "Start", "type": "trigger", "config": map[string]any{"kind": "SCHEDULE", "expression": "cron(0 3 1 1 ? *)"}},
				map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{}},
			},
			"workflow_connections": []any{map[string]any{"from": "start", "to": "done"}},
		}))
		e.must("POST", "/v1/workflows/saveWorkflow", map[string]any{"workflow_id": w["workflow_id"], "workflow_name": "Nightly",
			"workflow_steps": w["workflow_steps"], "workflow_connections": w["workflow_connections"]})
		e.must("POST", "/v1/workflows/publishWorkflow", map[string]any{"workflow_id": w["workflow_id"], "workflow_version": 1})
		return "POST", "/v1/workflows/publishWorkflow", map[string]any{"workflow_id": w["workflow_id"], "workflow_version": 2}, nil
	}},
	{name: "trigger", repeatable: true, prepare: func(e *faultEnv, n int) (string, string, any, []string) {
		return "POST", "/v1/workflows/triggerworkflow/" + e.approval() + fmt.Sprintf("?process_id=trigger-%d", n), map[string]any{"amount": n},
			[]string{"Idempotency-Key", fmt.Sprintf("key-%d", n)}
	}},
	{name: "resume", prepare: func(e *faultEnv, n int) (string, string, any, []string) {
		pid := fmt.Sprintf("resume-%d", n)
		e.waiting(e.approval(), pid)
		return "POST", "/v1/workflows/resumeworkflow/" + pid, map[string]any{"decision": "approve"}, nil
	}},
	{name: "cancel", prepare: func(e *faultEnv, n int) (string, string, any, []string) {
		wf := e.approval()
		id := e.waiting(wf, fmt.Sprintf("cancel-%d", n))
		return "POST", "/v1/workflows/cancelExecution", map[string]any{"workflow_id": wf, "workflow_execution_id": id}, nil
	}},
	{name: "create key", repeatable: true, prepare: func(e *faultEnv, n int) (string, string, any, []string) {
		return createKey, fmt.Sprintf("bot-%d", n), nil, nil
	}},
	{name: "toggle", repeatable: true, prepare: func(e *faultEnv, n int) (string, string, any, []string) {
		w := item(e.must("POST", "/v1/workflows/saveWorkflow", map[string]any{
			"workflow_name": "Nightly",
			"workflow_steps": []any{
				map[string]any{"id": "start", "name": "Start", "type": "trigger", "config": map[string]any{"kind": "SCHEDULE", "expression": "cron(0 3 1 1 ? *)"}},
				map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{}},
			},
			"workflow_connections": []any{map[string]any{"from": "start", "to": "done"}},
		}))
		e.must("POST", "/v1/workflows/publishWorkflow", map[string]any{"workflow_id": w["workflow_id"], "workflow_version": 1})
		return "POST", "/v1/workflows/toggleScheduledWorkflow", map[string]any{"workflow_id": w["workflow_id"], "workflow_version": 1, "action": "PAUSE"}, nil
	}},
}

// TestInjectedFaults fails each DynamoDB call of each operation in turn,
// with each fault. The operation either succeeds or answers 429 (throttled)
// or 503 (a fault or timeout) with the error shape; the store's invariants hold afterwards; and a retry of
// the same request succeeds.
func TestInjectedFaults(t *testing.T) {
	tables(t)
	for _, op := range faultOps {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			e := newFaultEnv(t)
			// A run without faults counts the calls to fail.
			method, path, body, header := op.prepare(e, 0)
			e.inj.arm(-1, fault{})
			if status, out := e.call(true, method, path, body, header...); status != 200 {
				t.Fatalf("without faults: got %d %v", status, out)
			}
			calls := e.inj.taken()
			if len(calls) == 0 {
				t.Fatal("the operation made no DynamoDB call")
			}
			n := 1
			for at, call := range calls {
				for _, ft := range faults {
					n++
					method, path, body, header := op.prepare(e, n)
					e.inj.arm(at, ft)
					status, out := e.call(true, method, path, body, header...)
					e.inj.arm(-1, fault{})
					what := fmt.Sprintf("%s with call %d (%s) %s", op.name, at+1, call, ft.name)
					switch status {
					case 200:
					case ft.status:
						if msg, _ := out["message"].(string); msg == "" || out["code"] == nil {
							t.Errorf("%s: got %d %v, want the error shape", what, status, out)
						}
					default:
						t.Errorf("%s: got %d %v, want 200 or %d", what, status, out, ft.status)
					}
					e.checkInvariants(t, what)
					retry, out := e.call(false, method, path, body, header...)
					// A write that was carried out (its answer lost, or a
					// later call's failure left to be mended afterwards,
					// as the closing of an ended execution's approval is)
					// is not carried out twice by a non-repeatable operation.
					done := status == 200 || ft.applied
					if retry != 200 && !(done && !op.repeatable && retry == 409) {
						t.Errorf("%s: first %d, then the retry got %d %v, want 200", what, status, retry, out)
					}
					e.checkInvariants(t, what+", retried")
				}
			}
			t.Logf("%s: %d DynamoDB calls (%s), each failed %d ways", op.name, len(calls), strings.Join(calls, ", "), len(faults))
		})
	}
}

// checkInvariants reads the organization's records back: every workflow
// and card has exactly one latest version; every execution has its process
// record, an open process record belongs to an open execution, and no
// execution is left RUNNING without a runner (every workflow here reaches a
// wait at once); every Idempotency-Key names a stored execution.
func (e *faultEnv) checkInvariants(t *testing.T, what string) {
	t.Helper()
	ctx := context.Background()
	testenv.WaitFor(t, what+": no execution RUNNING", func() bool { return e.running(t) == "" })
	latest := map[string]int{} // "workflow <id>" or "card <id>" -> versions marked latest
	for after := (*cardflow.WorkflowKey)(nil); ; {
		page, err := e.store.ListWorkflows(ctx, e.org, cardflow.ListOptions[cardflow.WorkflowKey]{Limit: cardflow.MaxLimit, After: after})
		if err != nil {
			t.Fatalf("%s: list workflows: %v", what, err)
		}
		for _, w := range page.Items {
			latest["workflow "+w.WorkflowID] += count(bool(w.Latest))
		}
		if after = page.LastKey; after == nil {
			break
		}
	}
	for after := (*cardflow.CardKey)(nil); ; {
		page, err := e.store.ListCards(ctx, e.org, cardflow.ListOptions[cardflow.CardKey]{Limit: cardflow.MaxLimit, After: after})
		if err != nil {
			t.Fatalf("%s: list cards: %v", what, err)
		}
		for _, c := range page.Items {
			latest["card "+c.CardID] += count(bool(c.Latest))
		}
		if after = page.LastKey; after == nil {
			break
		}
	}
	for id, n := range latest {
		if n != 1 {
			t.Errorf("%s: %s has %d latest versions, want 1", what, id, n)
		}
	}
	for after := (*cardflow.ExecutionKey)(nil); ; {
		page, err := e.store.ListExecutions(ctx, e.org, cardflow.ListOptions[cardflow.ExecutionKey]{Limit: cardflow.MaxLimit, After: after})
		if err != nil {
			t.Fatalf("%s: list executions: %v", what, err)
		}
		for _, ex := range page.Items {
			p, err := e.store.GetProcess(ctx, e.org, ex.State.ProcessID)
			if err != nil {
				t.Errorf("%s: execution %s has no process record %s: %v", what, ex.WorkflowExecutionID, ex.State.ProcessID, err)
				continue
			}
			if p.ExecutionID == ex.WorkflowExecutionID && !p.Closed && !ex.Open() {
				t.Errorf("%s: execution %s is %s but its process record %s is open", what, ex.WorkflowExecutionID, ex.Status, p.ProcessID)
			}
			if p.ExecutionID == ex.WorkflowExecutionID && p.Wait != nil && p.Wait.Resume == nil && !p.Closed && ex.Status != cardflow.ExecWaiting {
				t.Errorf("%s: execution %s is %s but has an open wait", what, ex.WorkflowExecutionID, ex.Status)
			}
		}
		if after = page.LastKey; after == nil {
			break
		}
	}
	// The trigger operation uses key-<n>, n counting its attempts.
	for n := range 100 {
		idem, err := e.store.GetIdempotency(ctx, e.org, fmt.Sprintf("key-%d", n), time.Now().UnixMilli())
		if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
			continue
		}
		if err != nil {
			t.Fatalf("%s: idempotency key-%d: %v", what, n, err)
		}
		if _, err := e.store.GetExecution(ctx, e.org, idem.WorkflowID, idem.ExecutionID); err != nil {
			t.Errorf("%s: Idempotency-Key key-%d names execution %s: %v", what, n, idem.ExecutionID, err)
		}
	}
}

// running returns an execution of the organization that is RUNNING.
func (e *faultEnv) running(t *testing.T) string {
	t.Helper()
	for after := (*cardflow.ExecutionKey)(nil); ; {
		page, err := e.store.ListExecutions(context.Background(), e.org, cardflow.ListOptions[cardflow.ExecutionKey]{Limit: cardflow.MaxLimit, After: after})
		if err != nil {
			t.Fatalf("list executions: %v", err)
		}
		for _, ex := range page.Items {
			if ex.Status == cardflow.ExecRunning {
				return ex.WorkflowExecutionID
			}
		}
		if after = page.LastKey; after == nil {
			return ""
		}
	}
}

func count(b bool) int {
	if b {
		return 1
	}
	return 0
}
