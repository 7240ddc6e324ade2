package httpapi_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// personKey creates a key of org that acts for person.
func (e *env) personKey(org, person string) string {
	e.t.Helper()
	key, _, err := e.svc.CreateKey(context.Background(), app.CreateKeyInput{OrganizationID: org, WorkspaceID: org + "-ws", Scopes: []string{"read", "execute"}, Person: person})
	if err != nil {
		e.t.Fatal(err)
	}
	return key
}

// publishedQuorum publishes a workflow whose approval step asks ann, bob and
// cy, two of whom decide; the requester may not approve.
func (e *env) publishedQuorum(admin string, extra map[string]any) string {
	e.t.Helper()
	r := e.do("POST", "/v1/adaptive-cards/saveCard", admin, cardBody(""))
	cardID := str(r.body["item"].(map[string]any)["card_id"])
	e.do("POST", "/v1/adaptive-cards/publishCard", admin, map[string]any{"card_id": cardID, "card_version": 1})
	config := map[string]any{
		"card_id": cardID, "data": map[string]any{"amount": "{{ input.amount }}"},
		"approvers": []any{"ann@example.com", "{{ input.requester }}", "cy@example.com"}, "policy": "quorum", "count": 2,
		"forbid_self_approval": "{{ input.requester }}", "timeout": "PT72H",
	}
	for k, v := range extra {
		config[k] = v
	}
	body := map[string]any{
		"workflow_name": "Purchase approval",
		"workflow_steps": []any{
			map[string]any{"id": "start", "name": "Requested", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
			map[string]any{"id": "approve", "name": "Two approvals", "type": "approval", "config": config},
			map[string]any{"id": "done", "name": "Approved", "type": "end", "config": map[string]any{"status": "SUCCEEDED", "output": "{{ steps.approve.output }}"}},
			map[string]any{"id": "no", "name": "Rejected", "type": "end", "config": map[string]any{"status": "FAILED", "output": "{{ steps.approve.output }}"}},
		},
		"workflow_connections": []any{
			map[string]any{"from": "start", "to": "approve"},
			map[string]any{"from": "approve", "to": "done"},
			map[string]any{"from": "approve", "to": "no", "on": "rejected"},
			map[string]any{"from": "approve", "to": "no", "on": "timeout"},
		},
	}
	r = e.do("POST", "/v1/workflows/saveWorkflow", admin, body)
	if r.status != 200 {
		e.t.Fatalf("saveWorkflow: got %d %s", r.status, r.raw)
	}
	wf := str(r.body["item"].(map[string]any)["workflow_id"])
	if r := e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 1}); r.status != 200 {
		e.t.Fatalf("publishWorkflow: got %d %s", r.status, r.raw)
	}
	return wf
}

// TestApprovalThroughTheAPI runs an approval step end to end on the local
// runner: only listed approvers count, the requester is refused, two
// approvals decide, and every answer and refusal is in the event log.
func TestApprovalThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	ann, bob, cy, eve := e.personKey("org-a", "ann@example.com"), e.personKey("org-a", "bob@example.com"), e.personKey("org-a", "CY@example.com"), e.personKey("org-a", "eve@example.com")
	noPerson := e.key("org-a", "read", "execute")
	wf := e.publishedQuorum(admin, nil)

	r := e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"/1?process_id=PO-7", map[string]any{"amount": 5000, "requester": "bob@example.com"})
	if r.status != 200 {
		t.Fatalf("trigger: got %d %s", r.status, r.raw)
	}
	exID := str(r.body["service_execution_id"])
	e.awaitStatus(admin, wf, exID, "WAITING")
	e.awaitApproval("org-a", cardflow.ApprovalIDOf(exID, 1))

	r = e.do("GET", "/v1/approvals/getPendingApprovals?approver=ANN@example.com", ann, nil)
	if r.status != 200 || r.body["count"] != 1.0 {
		t.Fatalf("pending for ann: got %d %s, want one", r.status, r.raw)
	}
	item := r.body["items"].([]any)[0].(map[string]any)
	id := str(item["approval_id"])
	if got := item["approvers"]; !slices.Equal(toStrings(got), []string{"ann@example.com", "bob@example.com", "cy@example.com"}) {
		t.Errorf("approvers: got %v, want the templates resolved", got)
	}
	if r := e.do("GET", "/v1/approvals/getPendingApprovals?approver=eve@example.com", ann, nil); r.body["count"] != 0.0 {
		t.Errorf("pending for eve: got %s, want none", r.raw)
	}
	// Without approver, a person's key lists what waits on its person;
	// admin keys and keys of no person list everyone's.
	for _, c := range []struct {
		name, key string
		want      float64
	}{
		{"ann's key", ann, 1},
		{"eve's key", eve, 0},
		{"a key of no person", noPerson, 1},
		{"an admin key", admin, 1},
	} {
		if r := e.do("GET", "/v1/approvals/getPendingApprovals", c.key, nil); r.status != 200 || r.body["count"] != c.want {
			t.Errorf("pending without approver, %s: got %d %s, want %v", c.name, r.status, r.raw, c.want)
		}
	}

	answer := func(key, decision string) response {
		return e.do("POST", "/v1/approvals/answerApproval", key, map[string]any{"approval_id": id, "decision": decision, "comment": "ok by me"})
	}
	cases := []struct {
		name, key, decision string
		status              int
		msg                 string
	}{
		{"not an approver", eve, "approve", 403, "not an approver"},
		{"a key without a person", noPerson, "approve", 403, "acts for no person"},
		{"the requester", bob, "approve", 403, "self-approval"},
		{"a bad decision", ann, "maybe", 400, "approve or reject"},
		{"ann approves", ann, "approve", 200, ""},
		{"ann again", ann, "reject", 409, "already answered"},
		{"cy approves, any case", cy, "approve", 200, ""},
	}
	for _, c := range cases {
		r := answer(c.key, c.decision)
		if r.status != c.status || !strings.Contains(r.msg(), c.msg) {
			t.Errorf("%s: got %d %s, want %d with %q", c.name, r.status, r.raw, c.status, c.msg)
		}
	}
	e.awaitStatus(admin, wf, exID, "SUCCEEDED")
	if r := answer(bob, "reject"); r.status != 409 || !strings.Contains(r.msg(), "already decided") {
		t.Errorf("too late: got %d %s, want 409", r.status, r.raw)
	}
	done := e.awaitStatus(admin, wf, exID, "SUCCEEDED")
	out := done["workflow_output_payload"].(map[string]any)
	if out["outcome"] != "approved" || len(out["answers"].([]any)) != 2 {
		t.Errorf("output: got %v, want approved with two answers", out)
	}
	first := out["answers"].([]any)[0].(map[string]any)
	if first["approver"] != "ann@example.com" || first["channel"] != "api" || first["comment"] != "ok by me" || first["card_version"] != 1.0 || len(str(first["card_hash"])) != 64 {
		t.Errorf("first answer: got %v", first)
	}
	var events []string
	for _, ev := range done["workflow_event_log"].(map[string]any)["events"].([]any) {
		m := ev.(map[string]any)
		if typ := str(m["type"]); strings.HasPrefix(typ, "Approval") {
			events = append(events, typ+" "+str(m["actor"]))
		}
	}
	want := []string{
		"ApprovalOpened ", "ApprovalRefused eve@example.com", "ApprovalRefused bob@example.com",
		"ApprovalAnswered ann@example.com", "ApprovalRefused ann@example.com", "ApprovalAnswered CY@example.com",
		"ApprovalDecided CY@example.com",
	}
	if !slices.Equal(events, want) {
		t.Errorf("approval events:\ngot  %q\nwant %q", events, want)
	}
	r = e.do("GET", "/v1/approvals/getApprovalById?approval_id="+id, ann, nil)
	if r.status != 200 || r.body["item"].(map[string]any)["status"] != cardflow.ApprovalApproved {
		t.Errorf("getApprovalById: got %d %s, want APPROVED", r.status, r.raw)
	}
	if r := e.do("GET", "/v1/approvals/getPendingApprovals", ann, nil); r.body["count"] != 0.0 {
		t.Errorf("pending after the decision: got %s, want none", r.raw)
	}
}

// TestApprovalRejectAndReassign: a rejection leaves by on: rejected;
// reassignment needs allow_reassign and is kept on the approval record.
// (Overrides: TestOverrideApproval.)
func TestApprovalRejectAndReassign(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	ann, cy := e.personKey("org-a", "ann@example.com"), e.personKey("org-a", "cy@example.com")
	wf := e.publishedQuorum(admin, nil)
	start := func(po string) (exID, approvalID string) {
		r := e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"/1?process_id="+po, map[string]any{"amount": 5000, "requester": "bob@example.com"})
		exID = str(r.body["service_execution_id"])
		e.awaitStatus(admin, wf, exID, "WAITING")
		e.awaitApproval("org-a", cardflow.ApprovalIDOf(exID, 1))
		return exID, cardflow.ApprovalIDOf(exID, 1)
	}

	// With bob unable to approve, one rejection leaves two approvals out
	// of reach.
	exID, id := start("PO-1")
	if r := e.do("POST", "/v1/approvals/reassignApproval", ann, map[string]any{"approval_id": id, "to": "dan@example.com"}); r.status != 409 || !strings.Contains(r.msg(), "allow_reassign") {
		t.Errorf("reassign without allow_reassign: got %d %s, want 409", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/approvals/answerApproval", ann, map[string]any{"approval_id": id, "decision": "approve"}); r.status != 200 {
		t.Fatalf("ann: got %d %s", r.status, r.raw)
	}
	if r := e.do("POST", "/v1/approvals/answerApproval", cy, map[string]any{"approval_id": id, "decision": "reject", "comment": "too much"}); r.status != 200 {
		t.Fatalf("cy: got %d %s", r.status, r.raw)
	}
	failed := e.awaitStatus(admin, wf, exID, "FAILED")
	if got := failed["workflow_current_state"]; got != "Rejected" {
		t.Errorf("rejected execution ended in %v, want the Rejected step", got)
	}

	// allow_reassign lets an approver hand their part on.
	wf = e.publishedQuorum(admin, map[string]any{"allow_reassign": true})
	exID, id = start("PO-3")
	r := e.do("POST", "/v1/approvals/reassignApproval", ann, map[string]any{"approval_id": id, "to": "dan@example.com"})
	if r.status != 200 || !slices.Contains(toStrings(r.body["item"].(map[string]any)["approvers"]), "dan@example.com") {
		t.Errorf("reassign: got %d %s, want dan among the approvers", r.status, r.raw)
	}
	if got, _ := r.body["item"].(map[string]any)["reassignments"].([]any); len(got) != 1 || got[0].(map[string]any)["from"] != "ann@example.com" || got[0].(map[string]any)["to"] != "dan@example.com" {
		t.Errorf("reassignments: got %v, want ann's to dan", got)
	}
	if r := e.do("POST", "/v1/approvals/answerApproval", ann, map[string]any{"approval_id": id, "decision": "approve"}); r.status != 403 {
		t.Errorf("ann after handing on: got %d %s, want 403", r.status, r.raw)
	}
	dan := e.personKey("org-a", "dan@example.com")
	for _, k := range []string{dan, cy} {
		if r := e.do("POST", "/v1/approvals/answerApproval", k, map[string]any{"approval_id": id, "decision": "approve"}); r.status != 200 {
			t.Fatalf("answer: got %d %s", r.status, r.raw)
		}
	}
	e.awaitStatus(admin, wf, exID, "SUCCEEDED")
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, str(x))
	}
	return out
}
