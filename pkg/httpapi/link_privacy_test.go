package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/teams"
)

// linkReads returns the raw answer of every read that shows an execution
// or its approval to key.
func (e *env) linkReads(key, wf, exID string) map[string][]byte {
	e.t.Helper()
	approvalID := cardflow.ApprovalIDOf(exID, 1)
	out := map[string][]byte{}
	for name, r := range map[string]response{
		"outbox":                      e.get("/v1/adaptive-cards/outbox", key, "limit", "30"),
		"getApprovalById":             e.get("/v1/approvals/getApprovalById", key, "approval_id", approvalID),
		"getPendingApprovals":         e.get("/v1/approvals/getPendingApprovals", key),
		"getPendingApprovals dan":     e.get("/v1/approvals/getPendingApprovals", key, "approver", "dan@example.com"),
		"getWorkflowExecutionById":    e.get("/v1/workflows/getWorkflowExecutionById", key, "workflow_id", wf, "workflow_execution_id", exID),
		"waitForExecution":            e.get("/v1/workflows/waitForExecution", key, "workflow_id", wf, "workflow_execution_id", exID, "timeout", "0"),
		"getWorkflowExecutionHistory": e.get("/v1/workflows/getWorkflowExecutionHistory", key, "workflow_id", wf),
		"getOrganizationExecutions":   e.get("/v1/workflows/getOrganizationExecutions", key),
		"searchExecutions":            e.get("/v1/workflows/searchExecutions", key, "workflow_id", wf),
	} {
		if r.status != 200 {
			e.t.Fatalf("%s: got %d %s", name, r.status, r.raw)
		}
		out[name] = r.raw
	}
	return out
}

// TestPersonalLinksNotReadable: a requester's read key (or any other key)
// reads the outbox, the approval and the execution, and finds no
// approver's personal link or its token. Before, the outbox's copies held
// each approver's links, and the requester approved as each of them.
func TestPersonalLinksNotReadable(t *testing.T) {
	t.Parallel()
	e, _ := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	wf := e.teamsApprovalStep(admin, nil, map[string]any{"approvers": []any{"ann@example.com", "dan@example.com"}, "policy": "all"})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 900}).body["service_execution_id"])
	e.awaitStatus(admin, wf, exID, "WAITING")
	e.awaitOutbox(admin, exID, 2)

	keys := map[string]string{
		"requester's read key": e.key("org-a", "read"),
		"execute key":          e.key("org-a", "read", "execute"),
		"ann's key":            e.personKey("org-a", "ann@example.com"),
		"admin key":            admin,
	}
	for who, key := range keys {
		for name, raw := range e.linkReads(key, wf, exID) {
			for _, s := range []string{"/v1/teams/respond", "token="} {
				if strings.Contains(string(raw), s) {
					t.Errorf("%s reads %s: got %q in %s, want no personal link", who, name, s, raw)
				}
			}
		}
	}
}

// TestIssueApprovalLinks: an admin gets an approver's personal links by an
// explicit act, recorded in the execution's log with the admin as actor;
// read and execute keys get 403, another organization 404, and no read
// shows the links afterwards. The links answer as their approver.
func TestIssueApprovalLinks(t *testing.T) {
	t.Parallel()
	e, _ := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	root, _, err := e.svc.CreateKey(context.Background(), app.CreateKeyInput{OrganizationID: "org-a", WorkspaceID: "org-a-ws", Scopes: []string{"read", "admin"}, Person: "root@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	wf := e.teamsApprovalStep(admin, nil, map[string]any{"approvers": []any{"ann@example.com", "dan@example.com"}, "policy": "all"})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 900}).body["service_execution_id"])
	e.awaitStatus(admin, wf, exID, "WAITING")
	e.awaitOutbox(admin, exID, 2)
	approvalID := cardflow.ApprovalIDOf(exID, 1)
	const path = "/v1/approvals/issueApprovalLinks"
	body := map[string]any{"approval_id": approvalID, "approver": "dan@example.com"}

	for _, c := range []struct {
		name   string
		key    string
		body   any
		status int
		msg    string
	}{
		{"read key", e.key("org-a", "read"), body, 403, `"admin" scope`},
		{"execute key", e.key("org-a", "read", "execute"), body, 403, `"admin" scope`},
		{"ann's key", e.personKey("org-a", "ann@example.com"), body, 403, `"admin" scope`},
		{"another organization's admin", e.key("org-b", "read", "admin", "execute"), body, 404, "not found"},
		{"no approver", root, map[string]any{"approval_id": approvalID}, 400, "approver is required"},
		{"not an approver", root, map[string]any{"approval_id": approvalID, "approver": "eve@example.com"}, 404, "eve@example.com is not an approver"},
		{"not an approval id", root, map[string]any{"approval_id": "x", "approver": "dan@example.com"}, 400, "approval id"},
	} {
		r := e.do("POST", path, c.key, c.body)
		if r.status != c.status || !strings.Contains(r.msg(), c.msg) || strings.Contains(string(r.raw), "token=") {
			t.Errorf("%s: got %d %s, want %d saying %q", c.name, r.status, r.raw, c.status, c.msg)
		}
	}
	if ex := e.get("/v1/workflows/getWorkflowExecutionById", admin, "workflow_id", wf, "workflow_execution_id", exID); strings.Contains(string(ex.raw), cardflow.EventApprovalLinksIssued) {
		t.Fatalf("refused acts: got %s, want no links issued", ex.raw)
	}

	r := e.do("POST", path, root, body)
	if r.status != 200 {
		t.Fatalf("admin: got %d %s", r.status, r.raw)
	}
	item := r.body["item"].(map[string]any)
	links := map[string]string{}
	for _, l := range item["links"].([]any) {
		m := l.(map[string]any)
		u, err := url.Parse(str(m["url"]))
		if err != nil {
			t.Fatal(err)
		}
		ref, err := teams.VerifyLink([]byte(teamsSigningKey), u.Query().Get("token"), time.Now())
		if err != nil || ref.Who != "dan@example.com" {
			t.Fatalf("link %s: got %+v, %v, want one naming dan", m["url"], ref, err)
		}
		links[str(m["title"])] = str(m["url"])
	}
	if len(links) != 2 || links["Approve"] == "" || links["Reject"] == "" || item["approver"] != "dan@example.com" {
		t.Fatalf("issued: got %v, want dan's Approve and Reject links", item)
	}

	// The act is in the audit, with the admin as actor, and no read shows
	// the links.
	ex := e.get("/v1/workflows/getWorkflowExecutionById", admin, "workflow_id", wf, "workflow_execution_id", exID)
	found := false
	for _, ev := range ex.body["item"].(map[string]any)["workflow_event_log"].(map[string]any)["events"].([]any) {
		m := ev.(map[string]any)
		if m["type"] == cardflow.EventApprovalLinksIssued {
			found = m["actor"] == "root@example.com" && strings.Contains(str(m["message"]), "dan@example.com")
		}
	}
	if !found {
		t.Errorf("execution log: got %s, want ApprovalLinksIssued by root@example.com naming dan", ex.raw)
	}
	token, _ := url.Parse(links["Approve"])
	for _, key := range []string{e.key("org-a", "read"), admin} {
		for name, raw := range e.linkReads(key, wf, exID) {
			if strings.Contains(string(raw), token.Query().Get("token")) || strings.Contains(string(raw), "/v1/teams/respond") {
				t.Errorf("%s after the act: got %s, want no link", name, raw)
			}
		}
	}

	// Dan's link answers as dan; once the approval is decided, the act is
	// refused.
	_, page := e.page(links["Approve"])
	if status, got, _ := e.linkRequest("POST", e.srv.URL+"/v1/teams/respond", confirmForm(t, page)); status != 200 || !strings.Contains(got, "Your answer (approve) is recorded") {
		t.Fatalf("dan approves: got %d %s", status, got)
	}
	a := e.awaitApproval("org-a", approvalID)
	if len(a.Answers) != 1 || a.Answers[0].Approver != "dan@example.com" || a.Answers[0].Channel != cardflow.ChannelLink {
		t.Errorf("answers: got %+v, want dan's through a link", a.Answers)
	}
	ann := e.personKey("org-a", "ann@example.com")
	if r := e.do("POST", "/v1/approvals/answerApproval", ann, map[string]any{"approval_id": approvalID, "decision": "approve"}); r.status != 200 {
		t.Fatalf("ann approves: got %d %s", r.status, r.raw)
	}
	if r := e.do("POST", path, root, map[string]any{"approval_id": approvalID, "approver": "ann@example.com"}); r.status != 409 || !strings.Contains(r.msg(), "APPROVED") {
		t.Errorf("after the decision: got %d %s, want 409", r.status, r.raw)
	}
}

// awaitOutbox waits until the outbox holds n copies of the execution's
// cards: the cards go out as the wait opens.
func (e *env) awaitOutbox(key, exID string, n int) {
	e.t.Helper()
	testenv.WaitFor(e.t, fmt.Sprintf("%d copies of %s in the outbox", n, exID), func() bool {
		got := 0
		for _, m := range items(e.get("/v1/adaptive-cards/outbox", key)) {
			if m["workflow_execution_id"] == exID {
				got++
			}
		}
		return got >= n
	})
}
