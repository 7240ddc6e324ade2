package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
)

// awaitStatus polls an execution until it has the status.
func (e *env) awaitStatus(key, workflowID, id, status string) map[string]any {
	e.t.Helper()
	var item map[string]any
	testenv.WaitFor(e.t, "execution "+id+" to be "+status, func() bool {
		r := e.get("/v1/workflows/getWorkflowExecutionById", key, "workflow_id", workflowID, "workflow_execution_id", id)
		if r.status != 200 {
			e.t.Fatalf("getWorkflowExecutionById: got %d %s", r.status, r.raw)
		}
		item = r.body["item"].(map[string]any)
		return item["status"] == status
	})
	return item
}

// publishedApproval publishes a card and the approval workflow that uses it.
func (e *env) publishedApproval(admin string) (workflowID, cardID string) {
	e.t.Helper()
	r := e.do("POST", "/v1/adaptive-cards/saveCard", admin, cardBody(""))
	cardID = str(r.body["item"].(map[string]any)["card_id"])
	e.do("POST", "/v1/adaptive-cards/publishCard", admin, map[string]any{"card_id": cardID, "card_version": 1})
	r = e.do("POST", "/v1/workflows/saveWorkflow", admin, approvalBody(cardID))
	if r.status != 200 {
		e.t.Fatalf("saveWorkflow: got %d %s", r.status, r.raw)
	}
	workflowID = str(r.body["item"].(map[string]any)["workflow_id"])
	if r := e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": workflowID, "workflow_version": 1}); r.status != 200 {
		e.t.Fatalf("publishWorkflow: got %d %s", r.status, r.raw)
	}
	return workflowID, cardID
}

func (e *env) trigger(key, path string, body any, header ...string) response {
	e.t.Helper()
	return e.doWith("POST", path, key, body, header...)
}

func TestApprovalRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	wf, cardID := e.publishedApproval(admin)

	r := e.trigger(run, "/v1/workflows/triggerworkflow/"+wf+"/1?process_id=PO-1", map[string]any{"amount": 5000, "requester": "ann"})
	if r.status != 200 || len(str(r.body["service_execution_id"])) != 26 || r.body["message"] != "success" {
		t.Fatalf("trigger: got %d %s", r.status, r.raw)
	}
	id := str(r.body["service_execution_id"])
	waiting := e.awaitStatus(run, wf, id, "WAITING")
	if waiting["workflow_current_state"] != "Manager approval" {
		t.Errorf("waiting in %v, want Manager approval", waiting["workflow_current_state"])
	}
	if r := e.trigger(run, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-1", nil); r.status != 409 || !strings.Contains(r.msg(), "PO-1") {
		t.Errorf("trigger with an open process id: got %d %s, want 409 naming it", r.status, r.raw)
	}

	// The card went to the outbox with the process id that resumes it.
	var out response
	testenv.WaitFor(t, "the card in the outbox", func() bool {
		out = e.get("/v1/adaptive-cards/outbox", run)
		return len(items(out)) > 0
	})
	if got := items(out); len(got) != 1 || got[0]["process_id"] != "PO-1" || got[0]["workflow_execution_id"] != id ||
		jsonOf(got[0]["data"]) != `{"amount":5000}` {
		t.Fatalf("outbox: got %s, want one card for PO-1 with amount 5000", out.raw)
	}
	// It carries the card expanded with that data, under the card's id.
	if got := items(out)[0]; jsonOf(got["card_payload"]) != jsonOf(minimalCard("Approve 5000?")) || got["card_id"] != cardID {
		t.Errorf("outbox card: got %s %s, want %s %s", got["card_id"], jsonOf(got["card_payload"]), cardID, jsonOf(minimalCard("Approve 5000?")))
	}

	for _, tc := range []struct {
		path, body string
		status     int
		mention    string
	}{
		{"/v1/workflows/approve/PO-1", `{}`, 400, "resumeworkflow"},
		{"/v1/workflows/resumeworkflow/PO-1", `{"source": "EMAIL"}`, 400, "TEAMS or SAP"},
		{"/v1/workflows/resumeworkflow/PO-1", `[1, 2]`, 400, "JSON object"},
		{"/v1/workflows/resumeworkflow/PO-1", `{"decision":`, 400, "JSON"},
		{"/v1/workflows/resumeworkflow/PO-404", `{}`, 404, "PO-404"},
	} {
		if r := e.do("POST", tc.path, run, tc.body); r.status != tc.status || !strings.Contains(r.msg(), tc.mention) {
			t.Errorf("POST %s %s: got %d %s, want %d mentioning %q", tc.path, tc.body, r.status, r.raw, tc.status, tc.mention)
		}
	}
	if r := e.do("POST", "/v1/workflows/resumeworkflow/PO-1", e.key("org-b", "execute"), `{}`); r.status != 404 {
		t.Errorf("resume from another organization: got %d %s, want 404", r.status, r.raw)
	}

	if waiting["modified_by"] != nil {
		t.Errorf("waiting: got modified_by %v, want null before anyone changed the execution", waiting["modified_by"])
	}
	r = e.do("POST", "/v1/workflows/resumeworkflow/PO-1", run, `{"source": "TEAMS", "decision": "approve", "comment": "ok"}`)
	if r.status != 200 || r.body["service_execution_id"] != id || r.body["resumed"] != true {
		t.Fatalf("resume: got %d %s", r.status, r.raw)
	}
	// The answer shows the execution after the resume: it left its wait.
	if r.body["status"] != "RUNNING" || r.body["workflow_current_state"] != "Manager approval" {
		t.Errorf("resume: got status %v in %v, want RUNNING in Manager approval", r.body["status"], r.body["workflow_current_state"])
	}
	done := e.awaitStatus(run, wf, id, "SUCCEEDED")
	if want := "key:" + strings.Split(run, "_")[1]; done["modified_by"] != want {
		t.Errorf("after the resume: got modified_by %v, want the resuming key's actor %s", done["modified_by"], want)
	}
	if got := done["workflow_output_payload"].(map[string]any); got["decision"] != "approve" || got["source"] != "TEAMS" {
		t.Errorf("output: got %v, want the resume body", got)
	}
	logs := done["condensed_logs"].(map[string]any)
	if got := logs["approve"].(map[string]any)["output"].(map[string]any)["comment"]; got != "ok" {
		t.Errorf("condensed log of approve: got %v", logs["approve"])
	}
	if r := e.do("POST", "/v1/workflows/resumeworkflow/PO-1", run, `{}`); r.status != 409 {
		t.Errorf("second resume: got %d %s, want 409", r.status, r.raw)
	}
	// The process id is free once its execution finished.
	if r := e.trigger(run, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-1", map[string]any{"amount": 1}); r.status != 200 {
		t.Errorf("trigger with a released process id: got %d %s", r.status, r.raw)
	}

	// The schema of the version is the latest input's.
	s := e.get("/v1/workflows/getWorkflowSchemaById", run, "workflow_id", wf, "workflow_version", "1")
	item := s.body["item"].(map[string]any)
	if s.status != 200 || jsonOf(item["workflow_mock_payload"]) != `{"amount":1}` || item["workflow_schema"].(map[string]any)["type"] != "object" {
		t.Errorf("schema: got %d %s", s.status, s.raw)
	}
}

func TestTriggerErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	wf, cardID := e.publishedApproval(admin)
	draft := str(e.do("POST", "/v1/workflows/saveWorkflow", admin, approvalBody(cardID)).body["item"].(map[string]any)["workflow_id"])
	e.do("POST", "/v1/workflows/saveWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_name": "v2", "workflow_steps": approvalBody(cardID)["workflow_steps"], "workflow_connections": approvalBody(cardID)["workflow_connections"]})

	for _, tc := range []struct {
		name, path, key string
		body            any
		status          int
		mention         string
	}{
		{"unknown workflow", "/v1/workflows/triggerworkflow/nope", run, nil, 404, "nope"},
		{"other organization", "/v1/workflows/triggerworkflow/" + wf, e.key("org-b", "execute"), nil, 404, ""},
		{"no ACTIVE version", "/v1/workflows/triggerworkflow/" + draft, run, nil, 409, "ACTIVE"},
		{"DRAFT version", "/v1/workflows/triggerworkflow/" + wf + "/2", run, nil, 409, "DRAFT"},
		{"unknown version", "/v1/workflows/triggerworkflow/" + wf + "/9", run, nil, 404, ""},
		{"bad version", "/v1/workflows/triggerworkflow/" + wf + "/two", run, nil, 400, "workflow_version"},
		{"bad body", "/v1/workflows/triggerworkflow/" + wf, run, "{\n  \"amount\": }", 400, "the request body is not valid JSON: invalid character '}' looking for beginning of value (line 2, column 13)"},
		{"truncated body", "/v1/workflows/triggerworkflow/" + wf, run, `{"amount": 5`, 400, "ends too early (line 1, column 13)"},
		{"two bodies", "/v1/workflows/triggerworkflow/" + wf, run, `{} []`, 400, "more than one JSON value (line 1, column 4)"},
		{"bad resume body", "/v1/workflows/resumeworkflow/PO-1", run, `{"decision": approve}`, 400, "(line 1, column 14)"},
		{"version too large", "/v1/workflows/triggerworkflow/" + wf + "/1000000000", run, nil, 400, "from 1 to 999999999"},
		{"unknown query parameter", "/v1/workflows/triggerworkflow/" + wf + "?processid=PO-1", run, nil, 400, `unknown query parameter "processid"`},
		{"bad process id", "/v1/workflows/triggerworkflow/" + wf + "?process_id=a%20b", run, nil, 400, "process_id"},
		{"empty process id", "/v1/workflows/triggerworkflow/" + wf + "?process_id=", run, nil, 400, "process_id"},
		{"read-only key", "/v1/workflows/triggerworkflow/" + wf, e.key("org-a", "read"), nil, 403, "execute"},
	} {
		r := e.trigger(tc.key, tc.path, tc.body)
		if r.status != tc.status || !strings.Contains(r.msg(), tc.mention) {
			t.Errorf("%s: got %d %s, want %d mentioning %q", tc.name, r.status, r.raw, tc.status, tc.mention)
		}
	}
	if got := e.get("/v1/workflows/getOrganizationExecutions", run); got.body["count"].(float64) != 0 {
		t.Errorf("failed triggers started %v executions, want 0", got.body["count"])
	}
	if r := e.get("/v1/workflows/getWorkflowSchemaById", run, "workflow_id", wf, "workflow_version", "1"); r.status != 404 {
		t.Errorf("schema before any run: got %d %s, want 404", r.status, r.raw)
	}

	// No version and no body: the latest ACTIVE version with input {}.
	r := e.trigger(run, "/v1/workflows/triggerworkflow/"+wf, nil)
	if r.status != 200 {
		t.Fatalf("trigger without version and body: got %d %s", r.status, r.raw)
	}
	ex := e.awaitStatus(run, wf, str(r.body["service_execution_id"]), "FAILED")
	if ex["workflow_version"].(float64) != 1 || jsonOf(ex["workflow_input_payload"]) != "{}" {
		t.Errorf("got version %v input %v, want 1 and {}", ex["workflow_version"], ex["workflow_input_payload"])
	}
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	wf, _ := e.publishedApproval(admin)
	path := "/v1/workflows/triggerworkflow/" + wf
	first := e.trigger(run, path, map[string]any{"amount": 10}, "Idempotency-Key", "order-77")
	again := e.trigger(run, path, map[string]any{"amount": 10}, "Idempotency-Key", "order-77")
	if first.status != 200 || again.status != 200 || first.body["service_execution_id"] != again.body["service_execution_id"] {
		t.Fatalf("same key and body: got %s and %s, want the same execution", first.raw, again.raw)
	}
	if again.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("Idempotent-Replayed: got %q then %q, want \"\" then true", first.header.Get("Idempotent-Replayed"), again.header.Get("Idempotent-Replayed"))
	}
	if r := e.trigger(run, path, map[string]any{"amount": 11}, "Idempotency-Key", "order-77"); r.status != 409 || !strings.Contains(r.msg(), "order-77") {
		t.Errorf("same key, other body: got %d %s, want 409", r.status, r.raw)
	}
	if r := e.trigger(e.key("org-b", "execute"), "/v1/workflows/triggerworkflow/"+wf, nil, "Idempotency-Key", "order-77"); r.status != 404 {
		t.Errorf("the key of another organization: got %d %s, want 404 for its workflow", r.status, r.raw)
	}
	for _, bad := range []string{"", "with space", "ü-order", strings.Repeat("k", 256)} {
		if r := e.trigger(run, path, nil, "Idempotency-Key", bad); r.status != 400 || !strings.Contains(r.msg(), "Idempotency-Key") {
			t.Errorf("Idempotency-Key %q: got %d %s, want 400 naming the header", bad, r.status, r.raw)
		}
	}
	if got := e.get("/v1/workflows/getWorkflowExecutionHistory", run, "workflow_id", wf); got.body["count"].(float64) != 1 {
		t.Errorf("executions: got %v, want 1", got.body["count"])
	}
}

func TestCancelExecution(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	wf, _ := e.publishedApproval(admin)
	id := str(e.trigger(run, "/v1/workflows/triggerworkflow/"+wf+"?process_id=C-1", map[string]any{"amount": 5000}).body["service_execution_id"])
	e.awaitStatus(run, wf, id, "WAITING")

	for _, tc := range []struct {
		body    any
		status  int
		mention string
	}{
		{map[string]any{"workflow_id": wf}, 400, "workflow_execution_id"},
		{map[string]any{"workflow_id": wf, "workflow_execution_id": id, "why": "x"}, 400, "why"},
		{map[string]any{"workflow_id": wf, "workflow_execution_id": "nope"}, 404, ""},
	} {
		if r := e.do("POST", "/v1/workflows/cancelExecution", run, tc.body); r.status != tc.status || !strings.Contains(r.msg(), tc.mention) {
			t.Errorf("cancel %v: got %d %s, want %d", tc.body, r.status, r.raw, tc.status)
		}
	}
	r := e.do("POST", "/v1/workflows/cancelExecution", run, map[string]any{"workflow_id": wf, "workflow_execution_id": id, "reason": "duplicate order"})
	if r.status != 200 || r.body["item"].(map[string]any)["status"] != "CANCELLED" {
		t.Fatalf("cancel: got %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/workflows/cancelExecution", run, map[string]any{"workflow_id": wf, "workflow_execution_id": id}); r.status != 409 {
		t.Errorf("second cancel: got %d %s, want 409", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/workflows/resumeworkflow/C-1", run, `{}`); r.status != 409 {
		t.Errorf("resume of a cancelled execution: got %d %s, want 409", r.status, r.raw)
	}
}

// TestCancelAnswersByScope cancels with a key that may read executions and
// with one that may only act on them: the second learns the outline, not
// the input, logs or events.
func TestCancelAnswersByScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")
	reader := e.key("org-a", "read", "execute")
	actor := e.key("org-a", "execute")
	wf, _ := e.publishedApproval(admin)
	outline := "created_on,modified_by,modified_on,organization_id,status,workflow_current_state,workflow_execution_id,workflow_id,workflow_version,workspace_id"
	for _, tc := range []struct {
		name, key string
		want      string // the item's fields
	}{
		{"read and execute", reader, "condensed_logs,created_on,modified_by,modified_on,organization_id,status,triggered_by,workflow_current_state,workflow_details," +
			"workflow_event_log,workflow_execution_id,workflow_id,workflow_input_payload,workflow_output_payload,workflow_trigger_type,workflow_version,workspace_id"},
		{"execute only", actor, outline},
	} {
		r := e.trigger(tc.key, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 5000, "supplier": "Contoso"})
		id := str(r.body["service_execution_id"])
		e.awaitStatus(reader, wf, id, "WAITING")
		r = e.do("POST", "/v1/workflows/cancelExecution", tc.key, map[string]any{"workflow_id": wf, "workflow_execution_id": id, "reason": "withdrawn"})
		if r.status != 200 {
			t.Fatalf("%s: cancel: got %d %s", tc.name, r.status, r.raw)
		}
		item := r.body["item"].(map[string]any)
		if got := keys(item); got != tc.want {
			t.Errorf("%s: got fields %s, want %s", tc.name, got, tc.want)
		}
		if item["status"] != "CANCELLED" || item["workflow_execution_id"] != id || item["modified_by"] == nil {
			t.Errorf("%s: got %s, want the cancelled execution's id, status and who cancelled it", tc.name, r.raw)
		}
		if tc.key == actor && strings.Contains(string(r.raw), "Contoso") {
			t.Errorf("%s: got %s, want no payload", tc.name, r.raw)
		}
	}
}

func TestToggleSchedule(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	sched := map[string]any{
		"workflow_name": "Nightly digest",
		"workflow_steps": []any{
			map[string]any{"id": "start", "name": "Nightly", "type": "trigger", "config": map[string]any{"kind": "SCHEDULE", "expression": "cron(0 2 * * ? *)", "timezone": "Europe/Berlin"}},
			map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{}},
		},
		"workflow_connections": []any{map[string]any{"from": "start", "to": "done"}},
	}
	wf := str(e.do("POST", "/v1/workflows/saveWorkflow", admin, sched).body["item"].(map[string]any)["workflow_id"])
	toggle := func(version int, action string) response {
		return e.do("POST", "/v1/workflows/toggleScheduledWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": version, "action": action})
	}
	if r := toggle(1, "PAUSE"); r.status != 404 || !strings.Contains(r.msg(), "DRAFT") {
		t.Errorf("toggle of a draft: got %d %s, want 404 saying it is a DRAFT", r.status, r.raw)
	}
	e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 1})
	for i, step := range []struct {
		action string
		want   string
		runs   int
	}{
		{"PAUSE", "PAUSED", 0},
		{"PAUSE", "PAUSED", 0},
		{"PLAY", "ACTIVE", 3},
		{"PLAY", "ACTIVE", 3},
	} {
		r := toggle(1, step.action)
		if r.status != 200 || r.body["status"] != step.want || len(r.body["next_runs"].([]any)) != step.runs {
			t.Errorf("step %d %s: got %d %s, want %s with %d next runs", i, step.action, r.status, r.raw, step.want, step.runs)
		}
	}
	if r := toggle(1, "PLAY"); !strings.Contains(str(r.body["next_runs"].([]any)[0]), "T02:00:00+0") {
		t.Errorf("next run: got %v, want 02:00 Berlin time", r.body["next_runs"])
	}

	requestWF, _ := e.publishedApproval(admin)
	for _, tc := range []struct {
		body    any
		status  int
		mention string
	}{
		{map[string]any{"workflow_id": requestWF, "workflow_version": 1, "action": "PAUSE"}, 404, "not a scheduled workflow"},
		{map[string]any{"workflow_id": "nope", "workflow_version": 1, "action": "PAUSE"}, 404, "nope"},
		{map[string]any{"workflow_id": wf, "workflow_version": 1, "action": "STOP"}, 400, "PAUSE or PLAY"},
		{map[string]any{"workflow_id": wf, "action": "PAUSE"}, 400, "workflow_version"},
	} {
		if r := e.do("POST", "/v1/workflows/toggleScheduledWorkflow", admin, tc.body); r.status != tc.status || !strings.Contains(r.msg(), tc.mention) {
			t.Errorf("toggle %v: got %d %s, want %d mentioning %q", tc.body, r.status, r.raw, tc.status, tc.mention)
		}
	}
	if r := e.do("POST", "/v1/workflows/toggleScheduledWorkflow", e.key("org-b", "execute"), map[string]any{"workflow_id": wf, "workflow_version": 1, "action": "PAUSE"}); r.status != 404 {
		t.Errorf("toggle from another organization: got %d %s, want 404", r.status, r.raw)
	}
}

// TestRunsTheVersionItStarted publishes a new version while an execution of
// the old one waits.
func TestRunsTheVersionItStarted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	wf, cardID := e.publishedApproval(admin)
	id := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"?process_id=V-1", map[string]any{"amount": 5000}).body["service_execution_id"])
	e.awaitStatus(admin, wf, id, "WAITING")

	v2 := approvalBody(cardID)
	v2["workflow_id"] = wf
	v2["workflow_steps"].([]any)[3].(map[string]any)["config"] = map[string]any{"status": "SUCCEEDED", "output": "version 2"}
	e.do("POST", "/v1/workflows/saveWorkflow", admin, v2)
	if r := e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 2}); r.status != 200 {
		t.Fatalf("publish v2: got %d %s", r.status, r.raw)
	}
	e.do("POST", "/v1/workflows/resumeworkflow/V-1", admin, `{"decision": "approve"}`)
	done := e.awaitStatus(admin, wf, id, "SUCCEEDED")
	if out := done["workflow_output_payload"].(map[string]any); out["decision"] != "approve" {
		t.Errorf("got output %v, want version 1's (the resume body)", out)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// doWith is do with request headers given as name, value pairs.
func (e *env) doWith(method, path, key string, body any, header ...string) response {
	e.t.Helper()
	if len(header) == 0 {
		return e.do(method, path, key, body)
	}
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return e.send(method, path, key, body, h)
}
