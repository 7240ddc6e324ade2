package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/teams"
)

// arrays is n arrays, one in the other, around inner.
func arrays(n int, inner string) string {
	return strings.Repeat("[", n) + inner + strings.Repeat("]", n)
}

// objects is n objects, one in the other, around inner.
func objects(n int, inner string) string {
	return strings.Repeat(`{"a": `, n) + inner + strings.Repeat("}", n)
}

// deepValue is n arrays, one in the other, as a value.
func deepValue(n int) any {
	var v any
	if err := json.Unmarshal([]byte(arrays(n, "")), &v); err != nil {
		panic(err)
	}
	return v
}

// publishWrap publishes a workflow whose transform step wraps the input one
// level deeper.
func (e *env) publishWrap(admin string) string {
	e.t.Helper()
	r := e.do("POST", "/v1/workflows/saveWorkflow", admin, map[string]any{
		"workflow_name": "Wrap",
		"workflow_steps": []any{
			map[string]any{"id": "start", "name": "Start", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
			map[string]any{"id": "wrap", "name": "Wrap", "type": "transform", "config": map[string]any{"output": map[string]any{"wrapped": "{{ input }}"}}},
			map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{"status": "SUCCEEDED"}},
		},
		"workflow_connections": []any{map[string]any{"from": "start", "to": "wrap"}, map[string]any{"from": "wrap", "to": "done"}},
	})
	if r.status != 200 {
		e.t.Fatalf("saveWorkflow: got %d %s", r.status, r.raw)
	}
	wf := str(r.body["item"].(map[string]any)["workflow_id"])
	if r := e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 1}); r.status != 200 {
		e.t.Fatalf("publishWorkflow: got %d %s", r.status, r.raw)
	}
	return wf
}

// executionCount counts the executions of a workflow.
func (e *env) executionCount(key, workflowID string) int {
	e.t.Helper()
	r := e.get("/v1/workflows/getWorkflowExecutionHistory", key, "workflow_id", workflowID, "limit", "30")
	if r.status != 200 {
		e.t.Fatalf("getWorkflowExecutionHistory: got %d %s", r.status, r.raw)
	}
	return len(items(r))
}

// TestBodiesNestAtMost64Levels sends bodies nested too deep to every kind
// of endpoint that stores what it gets: each is a 400 saying how deep, and
// nothing is written. Before the limit, a trigger 10,000 levels deep was
// stored as a record that could not be read back.
func TestBodiesNestAtMost64Levels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	wf := e.publishWrap(admin)
	approval, cardID := e.publishedApproval(admin)
	r := e.trigger(run, "/v1/workflows/triggerworkflow/"+approval+"?process_id=PO-1", map[string]any{"amount": 5000})
	if r.status != 200 {
		t.Fatalf("trigger: got %d %s", r.status, r.raw)
	}
	waiting := str(r.body["service_execution_id"])
	e.awaitStatus(run, approval, waiting, "WAITING")

	deepConfig := approvalBody(cardID)
	deepConfig["workflow_steps"].([]any)[0].(map[string]any)["config"].(map[string]any)["note"] = deepValue(100)
	deepCard := cardBody("")
	deepCard["card_payload"].(map[string]any)["fallbackText"] = deepValue(100)
	for _, tc := range []struct {
		name, method, path, key string
		body                    any
		want                    string
	}{
		{"trigger, as the attack", "POST", "/v1/workflows/triggerworkflow/" + wf, run, arrays(10_000, ""),
			"the request body nests 10000 levels deep; the limit is 64"},
		{"trigger past the decoder", "POST", "/v1/workflows/triggerworkflow/" + wf, run, arrays(10_001, ""),
			"the request body nests 10001 levels deep; the limit is 64"},
		{"trigger, one level too deep", "POST", "/v1/workflows/triggerworkflow/" + wf, run, objects(65, "1"),
			"the request body nests 65 levels deep; the limit is 64"},
		{"resume", "POST", "/v1/workflows/resumeworkflow/PO-1", run, `{"decision": ` + arrays(9_999, "") + `}`,
			"the request body nests 10000 levels deep; the limit is 64"},
		{"saveWorkflow", "POST", "/v1/workflows/saveWorkflow", admin, deepConfig, "levels deep; the limit is 64"},
		{"saveCard", "POST", "/v1/adaptive-cards/saveCard", admin, deepCard, "levels deep; the limit is 64"},
		{"cancelExecution", "POST", "/v1/workflows/cancelExecution", run, `{"workflow_id": "x", "reason": ` + arrays(65, "") + `}`,
			"the request body nests 66 levels deep; the limit is 64"},
	} {
		r := e.do(tc.method, tc.path, tc.key, tc.body)
		if r.status != 400 || r.code() != cardflow.EINVALID || !strings.Contains(r.msg(), tc.want) {
			t.Errorf("%s: got %d %s, want 400 saying %q", tc.name, r.status, r.raw, tc.want)
		}
	}

	// Nothing was stored: no execution, no new version, and the wait is
	// still open for an answer of a sensible depth.
	if got := e.executionCount(run, wf); got != 0 {
		t.Errorf("executions of the refused triggers: got %d, want 0", got)
	}
	if r := e.get("/v1/workflows/getWorkflowById", admin, "workflow_id", approval, "workflow_version", "2"); r.status != 404 {
		t.Errorf("version 2 of the workflow: got %d, want 404", r.status)
	}
	if r := e.get("/v1/adaptive-cards/getCardById", admin, "card_id", cardID, "card_version", "2"); r.status != 404 {
		t.Errorf("version 2 of the card: got %d, want 404", r.status)
	}
	if r := e.do("POST", "/v1/workflows/resumeworkflow/PO-1", run, map[string]any{"decision": "approve"}); r.status != 200 {
		t.Errorf("resume after the refused one: got %d %s", r.status, r.raw)
	}
	e.awaitStatus(run, approval, waiting, "SUCCEEDED")

	// 64 levels are let in; a step that nests them one deeper fails,
	// saying so, rather than storing it.
	for _, tc := range []struct {
		levels int
		status string
	}{
		{63, "SUCCEEDED"},
		{64, "FAILED"},
	} {
		r := e.trigger(run, "/v1/workflows/triggerworkflow/"+wf, objects(tc.levels, "1"))
		if r.status != 200 {
			t.Fatalf("trigger %d levels deep: got %d %s", tc.levels, r.status, r.raw)
		}
		ex := e.awaitStatus(run, wf, str(r.body["service_execution_id"]), tc.status)
		if tc.status == "FAILED" {
			if got, want := jsonOf(ex["workflow_output_payload"]), "its output nests 65 levels deep; the limit is 64"; !strings.Contains(got, want) {
				t.Errorf("output of the failed step: got %s, want %q", got, want)
			}
		}
	}
}

// TestStepOutputsNestAtMost64Levels calls a server that answers JSON 100
// levels deep: the http step fails, saying how deep, instead of storing it.
func TestStepOutputsNestAtMost64Levels(t *testing.T) {
	t.Setenv("CARDFLOW_OUTBOUND_ALLOW", "127.0.0.1")
	deep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(arrays(100, `"bottom"`)))
	}))
	defer deep.Close()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	r := e.do("POST", "/v1/workflows/saveWorkflow", admin, map[string]any{
		"workflow_name": "Call",
		"workflow_steps": []any{
			map[string]any{"id": "start", "name": "Start", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
			map[string]any{"id": "call", "name": "Call", "type": "http", "config": map[string]any{"method": "GET", "url": deep.URL}},
			map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{"status": "SUCCEEDED"}},
		},
		"workflow_connections": []any{map[string]any{"from": "start", "to": "call"}, map[string]any{"from": "call", "to": "done"}},
	})
	if r.status != 200 {
		t.Fatalf("saveWorkflow: got %d %s", r.status, r.raw)
	}
	wf := str(r.body["item"].(map[string]any)["workflow_id"])
	e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 1})
	r = e.trigger(run, "/v1/workflows/triggerworkflow/"+wf, map[string]any{})
	ex := e.awaitStatus(run, wf, str(r.body["service_execution_id"]), "FAILED")
	if got, want := jsonOf(ex["workflow_output_payload"]), "its output nests 101 levels deep; the limit is 64"; !strings.Contains(got, want) {
		t.Errorf("output: got %s, want %q", got, want)
	}
}

// TestUnreadableExecutionsAreConflicts plants what step outputs and
// resumes nested too deep left behind before the limit: an execution and a
// process record that cannot be read back. Cancelling or resuming them is
// a 409 that says so, not a 500, and no retry is invited.
func TestUnreadableExecutionsAreConflicts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := e.key("org-a", "read", "execute")
	ctx := context.Background()
	start := func(pid string, outputs map[string]any) *cardflow.Execution {
		t.Helper()
		ex := &cardflow.Execution{WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: "wf-1", WorkflowVersion: 1,
			OrganizationID: "org-a", Status: cardflow.ExecWaiting,
			State: cardflow.ExecutionState{StepID: "ask", Phase: cardflow.PhaseWaiting, ProcessID: pid, Wait: 1, Outputs: outputs}}
		p := &cardflow.Process{OrganizationID: "org-a", ProcessID: pid, WorkflowID: "wf-1", ExecutionID: ex.WorkflowExecutionID}
		if err := e.store.StartExecution(ctx, ex, p, nil); err != nil {
			t.Fatal(err)
		}
		return ex
	}
	deepOutput := start("PO-deep-output", map[string]any{"start": deepValue(10_000)})
	start("PO-deep-answer", map[string]any{})
	p, err := e.store.GetProcess(ctx, "org-a", "PO-deep-answer")
	if err != nil {
		t.Fatal(err)
	}
	p.Early = &cardflow.Resume{Payload: map[string]any{"decision": deepValue(9_999)}, Actor: "test", ReceivedOn: time.Now().UnixMilli()}
	if err := e.store.PutProcess(ctx, p); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, path string
		body       any
		want       string
	}{
		{"cancel", "/v1/workflows/cancelExecution", map[string]any{"workflow_id": "wf-1", "workflow_execution_id": deepOutput.WorkflowExecutionID},
			"execution " + deepOutput.WorkflowExecutionID + " cannot be read from the store, so it cannot be cancelled"},
		{"resume its process id", "/v1/workflows/resumeworkflow/PO-deep-output", map[string]any{"decision": "approve"},
			"execution " + deepOutput.WorkflowExecutionID + " of process id PO-deep-output cannot be read from the store, so it cannot be resumed"},
		{"resume a process record that cannot be read", "/v1/workflows/resumeworkflow/PO-deep-answer", map[string]any{"decision": "approve"},
			"the record of process id PO-deep-answer cannot be read from the store, so it cannot be resumed"},
	} {
		r := e.do("POST", tc.path, run, tc.body)
		if r.status != 409 || r.code() != cardflow.ECONFLICT || r.msg() != tc.want {
			t.Errorf("%s: got %d %s, want 409 %q", tc.name, r.status, r.raw, tc.want)
		}
	}
}

// TestTeamsAnswersNestAtMost64Levels answers a card through the bot with
// an activity nested too deep, and through a response link whose signed
// choice is: both are refused, saying how deep, and the wait stays open.
func TestTeamsAnswersNestAtMost64Levels(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	wf := e.teamsApproval(admin, map[string]any{"type": "webhook", "webhook_secret": "approvals-hook"})
	id := str(e.trigger(run, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-3", map[string]any{"amount": 3000}).body["service_execution_id"])
	posted := awaitRequests(t, fake, "/webhook", 1)[0]
	e.awaitWaitOpen("org-a", "PO-3")

	activity := invoke(fake, "ann", map[string]any{"decision": "approve", "comment": deepValue(100)})
	if r := e.botPost(fake.Token(t, time.Now(), fake.ServiceURL()), activity); r.status != 400 || !strings.Contains(r.msg(), "levels deep; the limit is 64") {
		t.Errorf("bot answer: got %d %s, want 400 saying how deep", r.status, r.raw)
	}

	link := str(cardActions(t, posted.Body)["Approve"]["url"])
	token := link[strings.Index(link, "token=")+len("token="):]
	key := []byte(teamsSigningKey)
	ref, err := teams.VerifyLink(key, token, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ref.Choice = map[string]any{"decision": "approve", "items": deepValue(100)}
	deepToken, err := teams.SignLink(key, *ref)
	if err != nil {
		t.Fatal(err)
	}
	// Opening shows the page; its confirmation is refused.
	form := url.Values{"token": {deepToken}, "confirmation": {teams.SignConfirmation(key, deepToken)}}
	status, body, _ := e.linkRequest("POST", e.srv.URL+"/v1/teams/respond", form)
	if status != 400 || !strings.Contains(body, "the answer nests 101 levels deep; the limit is 64") {
		t.Errorf("response link: got %d %s, want 400 saying how deep", status, body)
	}
	if ex := e.awaitStatus(run, wf, id, "WAITING"); resumedEvents(ex) != 0 {
		t.Errorf("a refused answer resumed the execution")
	}
	form = url.Values{"token": {token}, "confirmation": {teams.SignConfirmation(key, token)}}
	if status, body, _ := e.linkRequest("POST", e.srv.URL+"/v1/teams/respond", form); status != 200 || !strings.Contains(body, "your answer was recorded") {
		t.Errorf("the link as signed: got %d %s, want the answer recorded", status, body)
	}
	e.awaitStatus(run, wf, id, "SUCCEEDED")
}
