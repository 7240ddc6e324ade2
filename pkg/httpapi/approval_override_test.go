package httpapi_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// auditEvents lists an execution's start and approval events as "type
// actor".
func auditEvents(ex map[string]any) []string {
	var out []string
	for _, ev := range ex["workflow_event_log"].(map[string]any)["events"].([]any) {
		m := ev.(map[string]any)
		if typ := str(m["type"]); strings.HasPrefix(typ, "Approval") || typ == cardflow.EventStarted {
			out = append(out, typ+" "+str(m["actor"]))
		}
	}
	return out
}

// TestResumeCannotDecideApprovals: resumeworkflow on an execution waiting
// in an approval step is 403 for any key, admin included, and changes
// nothing: the execution still waits and the approval takes answers.
func TestResumeCannotDecideApprovals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	boss := e.personKey("org-a", "boss@example.com")
	ann, cy := e.personKey("org-a", "ann@example.com"), e.personKey("org-a", "cy@example.com")
	wf := e.publishedQuorum(admin, nil)
	r := e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"/1?process_id=PO-2", map[string]any{"amount": 5000, "requester": "bob@example.com"})
	exID := str(r.body["service_execution_id"])
	id := cardflow.ApprovalIDOf(exID, 1)
	e.awaitApproval("org-a", id)

	for _, c := range []struct {
		name, key string
		body      map[string]any
	}{
		{"an execute key", boss, map[string]any{"note": "urgent"}},
		{"an admin key", admin, map[string]any{"source": "TEAMS", "decision": "approve"}},
	} {
		r := e.do("POST", "/v1/workflows/resumeworkflow/PO-2", c.key, c.body)
		if r.status != 403 || !strings.Contains(r.msg(), "answerApproval") || !strings.Contains(r.msg(), "overrideApproval") {
			t.Errorf("%s: got %d %s, want 403 pointing to answerApproval and overrideApproval", c.name, r.status, r.raw)
		}
	}
	e.awaitWaitOpen("org-a", "PO-2")
	if r := e.do("POST", "/v1/workflows/resumeworkflow/PO-2", boss, map[string]any{"note": "urgent"}); r.status != 403 {
		t.Errorf("once the wait is open: got %d %s, want 403", r.status, r.raw)
	}
	if p, err := e.store.GetProcess(context.Background(), "org-a", "PO-2"); err != nil || p.Wait == nil || p.Wait.Claimed() || p.Early != nil {
		t.Errorf("process after the refused resumes: %+v, %v; want its wait open and unclaimed", p, err)
	}
	e.awaitStatus(admin, wf, exID, "WAITING")
	if a := e.awaitApproval("org-a", id); a.Status != cardflow.ApprovalPending {
		t.Errorf("approval after the refused resumes: %s, want PENDING", a.Status)
	}
	// The approvers still decide.
	for _, k := range []string{ann, cy} {
		if r := e.do("POST", "/v1/approvals/answerApproval", k, map[string]any{"approval_id": id, "decision": "approve"}); r.status != 200 {
			t.Fatalf("answer: got %d %s", r.status, r.raw)
		}
	}
	done := e.awaitStatus(admin, wf, exID, "SUCCEEDED")
	if out := done["workflow_output_payload"].(map[string]any); out["outcome"] != "approved" || out["note"] != nil {
		t.Errorf("output: got %v, want approved by the approvers alone", out)
	}
}

// TestOverrideApproval: overrideApproval is an admin's act, recorded with
// its actor and reason; the step leaves by the decision's exit, and its
// output says overridden and lists only the answers given.
func TestOverrideApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	otherAdmin := e.key("org-b", "read", "admin", "execute")
	reader, executor := e.key("org-a", "read"), e.key("org-a", "read", "execute")
	ann := e.personKey("org-a", "ann@example.com")
	wf := e.publishedQuorum(admin, nil)
	start := func(po string) (exID, approvalID string) {
		r := e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"/1?process_id="+po, map[string]any{"amount": 5000, "requester": "bob@example.com"})
		exID = str(r.body["service_execution_id"])
		e.awaitStatus(admin, wf, exID, "WAITING")
		e.awaitApproval("org-a", cardflow.ApprovalIDOf(exID, 1))
		return exID, cardflow.ApprovalIDOf(exID, 1)
	}
	override := func(key string, body map[string]any) response {
		return e.do("POST", "/v1/approvals/overrideApproval", key, body)
	}

	exID, id := start("PO-1")
	if r := e.do("POST", "/v1/approvals/answerApproval", ann, map[string]any{"approval_id": id, "decision": "approve"}); r.status != 200 {
		t.Fatalf("ann: got %d %s", r.status, r.raw)
	}
	reason := "cy is on leave; approved by the finance lead"
	for _, c := range []struct {
		name, key string
		body      map[string]any
		status    int
		msg       string
	}{
		{"a read key", reader, map[string]any{"approval_id": id, "decision": "approve", "reason": reason}, 403, `"admin" scope`},
		{"an execute key", executor, map[string]any{"approval_id": id, "decision": "approve", "reason": reason}, 403, `"admin" scope`},
		{"an approver's key", ann, map[string]any{"approval_id": id, "decision": "approve", "reason": reason}, 403, `"admin" scope`},
		{"another organization's admin", otherAdmin, map[string]any{"approval_id": id, "decision": "approve", "reason": reason}, 404, ""},
		{"no reason", admin, map[string]any{"approval_id": id, "decision": "approve", "reason": "  "}, 400, "reason is required"},
		{"a reason too long", admin, map[string]any{"approval_id": id, "decision": "approve", "reason": strings.Repeat("x", 1001)}, 400, "longer than 1000"},
		{"a bad decision", admin, map[string]any{"approval_id": id, "decision": "maybe", "reason": reason}, 400, "approve or reject"},
		{"no approval id", admin, map[string]any{"decision": "approve", "reason": reason}, 400, "approval_id"},
	} {
		if r := override(c.key, c.body); r.status != c.status || !strings.Contains(r.msg(), c.msg) {
			t.Errorf("%s: got %d %s, want %d with %q", c.name, r.status, r.raw, c.status, c.msg)
		}
	}
	if r := e.do("GET", "/v1/approvals/getApprovalById?approval_id="+id, admin, nil); r.body["item"].(map[string]any)["status"] != cardflow.ApprovalPending {
		t.Fatalf("after the refused overrides: %s, want it pending", r.raw)
	}

	r := override(admin, map[string]any{"approval_id": id, "decision": "approve", "reason": reason})
	if r.status != 200 || r.body["item"].(map[string]any)["status"] != cardflow.ApprovalOverridden {
		t.Fatalf("override: got %d %s, want 200 OVERRIDDEN", r.status, r.raw)
	}
	done := e.awaitStatus(admin, wf, exID, "SUCCEEDED")
	out := done["workflow_output_payload"].(map[string]any)
	if out["outcome"] != "overridden" || out["decision"] != "approve" || out["reason"] != reason || out["overridden_by"] == "" {
		t.Errorf("output: got %v, want outcome overridden, decision approve, the reason and who", out)
	}
	if answers := out["answers"].([]any); len(answers) != 1 || answers[0].(map[string]any)["approver"] != "ann@example.com" {
		t.Errorf("answers: got %v, want ann's alone", answers)
	}
	var logged bool
	for _, ev := range done["workflow_event_log"].(map[string]any)["events"].([]any) {
		m := ev.(map[string]any)
		logged = logged || m["type"] == cardflow.EventApprovalOverridden && m["actor"] == out["overridden_by"] && strings.Contains(str(m["message"]), reason)
	}
	if !logged {
		t.Errorf("event log: %v, want the override with its actor and reason", auditEvents(done))
	}
	r = e.do("GET", "/v1/approvals/getApprovalById?approval_id="+id, admin, nil)
	item := r.body["item"].(map[string]any)
	if o, _ := item["override"].(map[string]any); o == nil || o["reason"] != reason || o["decision"] != "approve" || o["actor"] != out["overridden_by"] || item["decided_by"] != o["actor"] {
		t.Errorf("approval record: %s, want the override recorded", r.raw)
	}
	if note := e.awaitApproval("org-a", id).EndNote(); !strings.Contains(note, "overridden by") || !strings.Contains(note, reason) {
		t.Errorf("the note of its cards and links: %q, want who overrode it and why", note)
	}
	for name, body := range map[string]map[string]any{
		"a second override":  {"approval_id": id, "decision": "reject", "reason": "changed my mind"},
		"an answer after it": nil,
	} {
		var r response
		if body != nil {
			r = override(admin, body)
		} else {
			r = e.do("POST", "/v1/approvals/answerApproval", ann, map[string]any{"approval_id": id, "decision": "reject"})
		}
		if r.status != 409 {
			t.Errorf("%s: got %d %s, want 409", name, r.status, r.raw)
		}
	}

	// A rejection leaves by on: rejected.
	exID, id = start("PO-2")
	if r := override(admin, map[string]any{"approval_id": id, "decision": "reject", "reason": "the budget is frozen"}); r.status != 200 {
		t.Fatalf("override reject: got %d %s", r.status, r.raw)
	}
	failed := e.awaitStatus(admin, wf, exID, "FAILED")
	if got, out := failed["workflow_current_state"], failed["workflow_output_payload"].(map[string]any); got != "Rejected" || out["decision"] != "reject" || len(out["answers"].([]any)) != 0 {
		t.Errorf("override reject: ended in %v with %v, want the Rejected step, decision reject and no answers", got, out)
	}

	// A decided approval is not overridden.
	exID, id = start("PO-3")
	for _, k := range []string{ann, e.personKey("org-a", "cy@example.com")} {
		e.do("POST", "/v1/approvals/answerApproval", k, map[string]any{"approval_id": id, "decision": "approve"})
	}
	e.awaitStatus(admin, wf, exID, "SUCCEEDED")
	if r := override(admin, map[string]any{"approval_id": id, "decision": "reject", "reason": "too late"}); r.status != 409 || !strings.Contains(r.msg(), "already decided") {
		t.Errorf("override of a decided approval: got %d %s, want 409", r.status, r.raw)
	}
}

// TestRefusalsAreCounted: a non-approver's 210 refusals are one event in
// the execution's log and a count on the approval record, so the log
// keeps the start, the opening and the answers.
func TestRefusalsAreCounted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	ann, cy, eve := e.personKey("org-a", "ann@example.com"), e.personKey("org-a", "cy@example.com"), e.personKey("org-a", "eve@example.com")
	wf := e.publishedQuorum(admin, nil)
	r := e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"/1?process_id=PO-1", map[string]any{"amount": 5000, "requester": "bob@example.com"})
	exID := str(r.body["service_execution_id"])
	id := cardflow.ApprovalIDOf(exID, 1)
	e.awaitStatus(admin, wf, exID, "WAITING")
	e.awaitApproval("org-a", id)
	answer := func(key string) response {
		return e.do("POST", "/v1/approvals/answerApproval", key, map[string]any{"approval_id": id, "decision": "approve"})
	}
	if r := answer(ann); r.status != 200 {
		t.Fatalf("ann: got %d %s", r.status, r.raw)
	}
	before, err := e.store.GetExecution(context.Background(), "org-a", wf, exID)
	if err != nil {
		t.Fatal(err)
	}
	// What the refusals write: each record read after each refusal, its
	// size counted when it changed.
	ex, ap := before, e.awaitApproval("org-a", id)
	var exWrites, exBytes, apWrites, apBytes int
	for range 210 {
		if r := answer(eve); r.status != 403 {
			t.Fatalf("eve: got %d %s, want 403", r.status, r.raw)
		}
		next, err := e.store.GetExecution(context.Background(), "org-a", wf, exID)
		if err != nil {
			t.Fatal(err)
		}
		if next.ModifiedOn != ex.ModifiedOn {
			b, _ := json.Marshal(next)
			exWrites, exBytes, ex = exWrites+1, exBytes+len(b), next
		}
		if a := e.awaitApproval("org-a", id); a.Revision != ap.Revision {
			b, _ := json.Marshal(a)
			apWrites, apBytes, ap = apWrites+1, apBytes+len(b), a
		}
	}
	t.Logf("210 refusals: %d execution writes (%d bytes), %d approval writes (%d bytes)", exWrites, exBytes, apWrites, apBytes)
	if got := ex.WorkflowEventLog.Total - before.WorkflowEventLog.Total; got != 1 || exWrites != 1 {
		t.Errorf("the refusals added %d events to the log in %d writes, want 1 in 1", got, exWrites)
	}
	r = e.do("GET", "/v1/approvals/getApprovalById?approval_id="+id, admin, nil)
	refusals, _ := r.body["item"].(map[string]any)["refusals"].([]any)
	if len(refusals) != 1 || refusals[0].(map[string]any)["actor"] != "eve@example.com" || refusals[0].(map[string]any)["count"] != 210.0 ||
		refusals[0].(map[string]any)["reason"] != cardflow.RefusedNotApprover {
		t.Errorf("refusals on the approval: got %v, want eve's 210", refusals)
	}
	if r := answer(cy); r.status != 200 {
		t.Fatalf("cy: got %d %s", r.status, r.raw)
	}
	done := e.awaitStatus(admin, wf, exID, "SUCCEEDED")
	want := []string{
		"ExecutionStarted ", "ApprovalOpened ", "ApprovalAnswered ann@example.com", "ApprovalRefused eve@example.com",
		"ApprovalAnswered cy@example.com", "ApprovalDecided cy@example.com",
	}
	if got := auditEvents(done); !slices.Equal(got, want) {
		t.Errorf("event log:\ngot  %q\nwant %q", got, want)
	}
	// A refusal of a decided approval writes nothing.
	rev := e.awaitApproval("org-a", id).Revision
	for range 20 {
		answer(eve)
	}
	if a := e.awaitApproval("org-a", id); a.Revision != rev {
		t.Errorf("refusals after the decision wrote the approval: revision %d, want %d", a.Revision, rev)
	}
}
