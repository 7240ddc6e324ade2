package httpapi_test

import (
	"strings"
	"testing"
)

func approvalBody(cardID string) map[string]any {
	return map[string]any{
		"workflow_name": "Invoice approval",
		"workflow_steps": []any{
			map[string]any{"id": "start", "name": "Invoice received", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
			map[string]any{"id": "big", "name": "Amount check", "type": "condition", "config": map[string]any{}},
			map[string]any{"id": "approve", "name": "Manager approval", "type": "card", "config": map[string]any{"card_id": cardID, "data": map[string]any{"amount": "{{ input.amount }}"}, "timeout": "PT72H"}},
			map[string]any{"id": "done", "name": "Approved", "type": "end", "config": map[string]any{"status": "SUCCEEDED", "output": "{{ steps.approve.output }}"}},
			map[string]any{"id": "auto", "name": "Auto-approved", "type": "end", "config": map[string]any{"status": "SUCCEEDED"}},
		},
		"workflow_connections": []any{
			map[string]any{"from": "start", "to": "big"},
			map[string]any{"from": "big", "to": "approve", "when": "input.amount > 1000"},
			map[string]any{"from": "big", "to": "auto"},
			map[string]any{"from": "approve", "to": "done"},
			map[string]any{"from": "approve", "to": "auto", "on": "timeout"},
		},
	}
}

func cardBody(id string) map[string]any {
	b := map[string]any{"card_name": "Approval", "card_payload": minimalCard("Approve ${amount}?")}
	if id != "" {
		b["card_id"] = id
	}
	return b
}

// counts returns how many workflow versions and cards an organization has.
func counts(t *testing.T, e *env, key string) (workflows, cards float64) {
	t.Helper()
	w := e.get("/v1/workflows/getOrganizationWorkflows", key, "limit", "30")
	c := e.get("/v1/adaptive-cards/getOrganizationCards", key, "limit", "30")
	return w.body["count"].(float64), c.body["count"].(float64)
}

func TestWriteFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")

	r := e.do("POST", "/v1/adaptive-cards/saveCard", admin, cardBody(""))
	if r.status != 200 {
		t.Fatalf("saveCard: got %d %s", r.status, r.raw)
	}
	card := r.body["item"].(map[string]any)
	cardID := str(card["card_id"])
	if card["status_version"] != "DRAFT-1" || card["latest"] != "true" || len(cardID) != 26 {
		t.Errorf("saveCard: got %s, want a ULID id, DRAFT-1, latest", r.raw)
	}
	if r := e.get("/v1/adaptive-cards/getLatestActiveCard", admin, "card_id", cardID); r.status != 404 {
		t.Errorf("getLatestActiveCard before publishing: got %d %s, want 404", r.status, r.raw)
	}
	e.do("POST", "/v1/adaptive-cards/saveCard", admin, cardBody(cardID))
	r = e.do("POST", "/v1/adaptive-cards/publishCard", admin, map[string]any{"card_id": cardID, "card_version": 2})
	if r.status != 200 || r.body["item"].(map[string]any)["status_version"] != "ACTIVE-2" {
		t.Fatalf("publishCard: got %d %s", r.status, r.raw)
	}
	if r := e.get("/v1/adaptive-cards/getCardById", admin, "card_id", cardID, "card_version", "1"); r.body["item"].(map[string]any)["latest"] != "false" {
		t.Errorf("version 1 after publishing version 2: got %s, want latest false", r.raw)
	}

	r = e.do("POST", "/v1/workflows/saveWorkflow", admin, approvalBody(cardID))
	if r.status != 200 {
		t.Fatalf("saveWorkflow: got %d %s", r.status, r.raw)
	}
	wf := r.body["item"].(map[string]any)
	wfID := str(wf["workflow_id"])
	if wf["workflow_status_version"] != "DRAFT_1" || wf["latest"] != "true" || wf["created_by"] == "" {
		t.Errorf("saveWorkflow: got %s", r.raw)
	}
	body := approvalBody(cardID)
	body["workflow_id"] = wfID
	if r := e.do("POST", "/v1/workflows/saveWorkflow", admin, body); r.body["item"].(map[string]any)["workflow_version"] != float64(2) {
		t.Fatalf("second save: got %s, want version 2", r.raw)
	}
	r = e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wfID, "workflow_version": 2})
	if item := r.body["item"].(map[string]any); r.status != 200 || item["workflow_status_version"] != "ACTIVE_2" || item["latest"] != "true" {
		t.Fatalf("publishWorkflow: got %d %s", r.status, r.raw)
	}
	if r := e.get("/v1/workflows/getWorkflowById", admin, "workflow_id", wfID, "workflow_version", "1"); r.body["item"].(map[string]any)["latest"] != "false" {
		t.Errorf("version 1 after publishing version 2: got %s, want latest false", r.raw)
	}

	// Another organization can neither publish nor extend these records.
	other := e.key("org-b", "read", "admin")
	for _, tt := range []struct {
		path string
		body any
	}{
		{"/v1/workflows/publishWorkflow", map[string]any{"workflow_id": wfID, "workflow_version": 1}},
		{"/v1/adaptive-cards/publishCard", map[string]any{"card_id": cardID, "card_version": 1}},
		{"/v1/adaptive-cards/saveCard", cardBody(cardID)},
		{"/v1/workflows/saveWorkflow", func() any { b := minimalBody(); b["workflow_id"] = wfID; return b }()},
	} {
		if r := e.do("POST", tt.path, other, tt.body); r.status != 404 {
			t.Errorf("%s on another organization's record: got %d %s, want 404", tt.path, r.status, r.raw)
		}
	}
}

func minimalBody() map[string]any {
	return map[string]any{
		"workflow_name": "Minimal",
		"workflow_steps": []any{
			map[string]any{"id": "start", "name": "Start", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
			map[string]any{"id": "end", "name": "End", "type": "end", "config": map[string]any{}},
		},
		"workflow_connections": []any{map[string]any{"from": "start", "to": "end"}},
	}
}

func TestBadWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")
	cardID := str(e.do("POST", "/v1/adaptive-cards/saveCard", admin, cardBody("")).body["item"].(map[string]any)["card_id"])
	wfID := str(e.do("POST", "/v1/workflows/saveWorkflow", admin, minimalBody()).body["item"].(map[string]any)["workflow_id"])
	wantWorkflows, wantCards := counts(t, e, admin)

	withField := func(b map[string]any, k string, v any) map[string]any { b[k] = v; return b }
	badStep := approvalBody(cardID)
	badStep["workflow_steps"].([]any)[2].(map[string]any)["config"] = map[string]any{"timeout": "PT1H"}
	orphan := approvalBody(cardID)
	orphan["workflow_steps"] = append(orphan["workflow_steps"].([]any), map[string]any{"id": "lost", "name": "Lost", "type": "end", "config": map[string]any{}})

	tests := []struct {
		name, path string
		body       any
		status     int
		want       string // in the message
	}{
		{"malformed JSON", "/v1/workflows/saveWorkflow", "{\n  \"workflow_name\": \"x\",\n  \"workflow_steps\": [}\n", 400, "line 3, column 22"},
		{"truncated JSON", "/v1/workflows/saveWorkflow", `{"workflow_name": "x"`, 400, "ends too early"},
		{"not an object", "/v1/workflows/saveWorkflow", `[1,2]`, 400, "must be a JSON object"},
		{"empty body", "/v1/workflows/saveWorkflow", "", 400, "JSON object body is required"},
		{"two values", "/v1/workflows/saveWorkflow", `{} {}`, 400, "more than one JSON value"},
		{"wrong type", "/v1/workflows/saveWorkflow", `{"workflow_name": 5}`, 400, "workflow_name must be a string"},
		{"unknown field", "/v1/workflows/saveWorkflow", withField(minimalBody(), "workflow_nmae", "x"), 400, `unknown field "workflow_nmae"`},
		{"step at fault", "/v1/workflows/saveWorkflow", badStep, 400, `workflow_steps[2] (id "approve"): config.card_id is required`},
		{"unreachable step", "/v1/workflows/saveWorkflow", orphan, 400, `(id "lost"): not reachable`},
		{"unknown card", "/v1/workflows/saveWorkflow", approvalBody("01J0000000000000000000000X"), 404, "names no card of this organization"},
		{"unknown workflow", "/v1/workflows/saveWorkflow", withField(minimalBody(), "workflow_id", "01J0000000000000000000000X"), 404, "workflow"},
		{"too large", "/v1/workflows/saveWorkflow", withField(minimalBody(), "workflow_schema", map[string]any{"pad": strings.Repeat("x", 300<<10)}), 413, "larger than 256 KB"},
		{"publish missing version", "/v1/workflows/publishWorkflow", map[string]any{"workflow_id": wfID}, 400, "workflow_version"},
		{"publish string version", "/v1/workflows/publishWorkflow", map[string]any{"workflow_id": wfID, "workflow_version": "1"}, 400, "workflow_version must be a number"},
		{"publish unknown version", "/v1/workflows/publishWorkflow", map[string]any{"workflow_id": wfID, "workflow_version": 9}, 404, ""},
		{"card without payload", "/v1/adaptive-cards/saveCard", map[string]any{"card_name": "x"}, 400, "card_payload is required"},
		{"card without name", "/v1/adaptive-cards/saveCard", map[string]any{"card_payload": minimalCard("x")}, 400, "card_name is required"},
		{"invalid card", "/v1/adaptive-cards/saveCard", map[string]any{"card_name": "x", "card_payload": map[string]any{"type": "AdaptiveCard", "version": "1.5", "body": []any{map[string]any{"type": "TextBlock"}}}}, 400, "card_payload.body[0]"},
		{"card binding that does not parse", "/v1/adaptive-cards/saveCard", map[string]any{"card_name": "x", "card_payload": map[string]any{"type": "AdaptiveCard", "version": "1.5", "body": []any{map[string]any{"type": "TextBlock", "text": "Total ${amount +}"}}}}, 400, "card_payload.body[0].text: the binding does not parse"},
		{"card binding with unknown function", "/v1/adaptive-cards/saveCard", map[string]any{"card_name": "x", "card_payload": map[string]any{"type": "AdaptiveCard", "version": "1.5", "body": []any{map[string]any{"type": "TextBlock", "text": "${toUppr(name)}"}}}}, 400, `card_payload.body[0].text: unknown function "toUppr"`},
		{"card binding of the wrong type", "/v1/adaptive-cards/saveCard", map[string]any{"card_name": "x", "card_payload": map[string]any{"type": "AdaptiveCard", "version": "1.5", "body": []any{map[string]any{"type": "TextBlock", "text": "${substring(name)}"}}}}, 400, "substring takes 2 to 3 arguments"},
		{"card of unknown workflow", "/v1/adaptive-cards/saveCard", withField(withField(cardBody(""), "workflow_id", "01J0000000000000000000000X"), "workflow_version", 1), 404, "names no workflow"},
		{"publish unknown card", "/v1/adaptive-cards/publishCard", map[string]any{"card_id": cardID, "card_version": 5}, 404, ""},
		{"publish version too large", "/v1/adaptive-cards/publishCard", `{"card_id": "` + cardID + `", "card_version": 124452090395723169792}`, 400, "field card_version must be a whole number (versions are 1 to 999999999), not 124452090395723169792"},
		{"publish fractional version", "/v1/workflows/publishWorkflow", `{"workflow_id": "` + wfID + `", "workflow_version": 1.5}`, 400, "field workflow_version must be a whole number"},
		{"null field", "/v1/adaptive-cards/saveCard", withField(cardBody(""), "workflow_version", nil), 400, "field workflow_version must not be null"},
		{"null card id", "/v1/adaptive-cards/saveCard", withField(cardBody(""), "card_id", nil), 400, "field card_id must not be null"},
		{"null nested field", "/v1/workflows/saveWorkflow", `{"workflow_name": "x", "workflow_steps": [], "workflow_connections": [{"from": "a", "to": "b", "when": null}]}`, 400, "field workflow_connections[0].when must not be null"},
		{"null body", "/v1/workflows/publishWorkflow", `null`, 400, "the request body must be a JSON object, not null"},
	}
	for _, tt := range tests {
		r := e.do("POST", tt.path, admin, tt.body)
		if r.status != tt.status {
			t.Errorf("%s: got %d %s, want %d", tt.name, r.status, r.raw, tt.status)
			continue
		}
		if r.msg() == "" || r.code() == "" || !strings.Contains(r.msg(), tt.want) {
			t.Errorf("%s: got message %q (code %q), want it to contain %q", tt.name, r.msg(), r.code(), tt.want)
		}
	}
	if gotW, gotC := counts(t, e, admin); gotW != wantWorkflows || gotC != wantCards {
		t.Errorf("after failed writes: got %v workflows and %v cards, want %v and %v", gotW, gotC, wantWorkflows, wantCards)
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := loadSample(t, e, "org-a")
	reader := e.key("org-a", "read")
	writer := e.key("org-a", "admin")
	revoked := e.key("org-a", "read", "admin")
	list, _ := e.svc.ListKeys(as("org-a"), "org-a")
	for _, k := range list {
		if strings.Contains(revoked, k.KeyID) {
			if _, err := e.svc.RevokeKey(as("org-a"), k.KeyID); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := "/v1/workflows/getWorkflowById?workflow_id=" + ids.ApprovalWorkflowID + "&workflow_version=1"
	tests := []struct {
		name, method, path, key string
		body                    any
		status                  int
		code                    string
	}{
		{"no key", "GET", read, "", nil, 401, "UNAUTHORIZED"},
		{"unknown key", "GET", read, "cfk_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", nil, 401, "UNAUTHORIZED"},
		{"garbage key", "GET", read, "hello", nil, 401, "UNAUTHORIZED"},
		{"revoked key", "GET", read, revoked, nil, 401, "UNAUTHORIZED"},
		{"read with read", "GET", read, reader, nil, 200, ""},
		{"read with admin only", "GET", read, writer, nil, 403, "FORBIDDEN"},
		{"write with read", "POST", "/v1/workflows/publishWorkflow", reader, map[string]any{"workflow_id": ids.ApprovalWorkflowID, "workflow_version": 3}, 403, "FORBIDDEN"},
		{"garbage with read", "POST", "/v1/workflows/saveWorkflow", reader, "{not json", 403, "FORBIDDEN"},
		{"write with admin", "POST", "/v1/workflows/publishWorkflow", writer, map[string]any{"workflow_id": ids.ApprovalWorkflowID, "workflow_version": 1}, 200, ""},
		{"unknown path", "GET", "/v1/workflows/nothing", reader, nil, 404, "NOT_FOUND"},
		{"wrong method", "DELETE", read, reader, nil, 405, "METHOD_NOT_ALLOWED"},
	}
	for _, tt := range tests {
		r := e.do(tt.method, tt.path, tt.key, tt.body)
		if r.status != tt.status || r.code() != tt.code {
			t.Errorf("%s: got %d %s, want %d %s", tt.name, r.status, r.raw, tt.status, tt.code)
		}
	}
	// The read-only publish attempt changed nothing.
	if r := e.get("/v1/workflows/getWorkflowById", reader, "workflow_id", ids.ApprovalWorkflowID, "workflow_version", "3"); r.body["item"].(map[string]any)["workflow_status"] != "DRAFT" {
		t.Errorf("after a forbidden publish: got %s, want version 3 still DRAFT", r.raw)
	}
}
