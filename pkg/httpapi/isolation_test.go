package httpapi_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
)

// tenant holds the records of one organization that the isolation matrix
// aims at: a published approval workflow with its card, a waiting execution
// with its process id, and a scheduled workflow.
type tenant struct {
	org, workflowID, cardID, executionID, processID, scheduledID, approvalID string
	// bulkID is a bulk operation of the organization that acts on nothing.
	bulkID string
	// conversationID is a Teams conversation registered for it.
	conversationID string
	// delegationID is a delegation of one of its people.
	delegationID string
}

// isolationRow is one route of the matrix: the request that aims at the
// tenant's records, the scope it needs, and whether it is a list of the
// caller's own organization (which answers 200 without the tenant's records
// instead of 404).
type isolationRow struct {
	scope string
	list  bool
	// conflict marks a claim of something only one organization can hold
	// (a Teams conversation): organization B gets 409, not 404.
	conflict bool
	target   func(a tenant) (path string, body any)
}

// isolationRows has a row for every route; a route the server answers that
// has no row fails TestTenantIsolation.
var isolationRows = map[string]isolationRow{
	"GET /v1/workflows/getWorkflowExecutionById": {scope: "read", target: func(a tenant) (string, any) {
		return "/v1/workflows/getWorkflowExecutionById?workflow_id=" + a.workflowID + "&workflow_execution_id=" + a.executionID, nil
	}},
	// The execution is WAITING: a wait that found it would run out its
	// timeout, so the timeout is short.
	"GET /v1/workflows/waitForExecution": {scope: "read", target: func(a tenant) (string, any) {
		return "/v1/workflows/waitForExecution?workflow_id=" + a.workflowID + "&workflow_execution_id=" + a.executionID + "&until=change&timeout=1", nil
	}},
	"GET /v1/workflows/getWorkflowExecutionHistory": {scope: "read", target: func(a tenant) (string, any) {
		return "/v1/workflows/getWorkflowExecutionHistory?workflow_id=" + a.workflowID, nil
	}},
	"GET /v1/workflows/getOrganizationExecutions": {scope: "read", list: true, target: func(a tenant) (string, any) {
		return "/v1/workflows/getOrganizationExecutions?limit=30", nil
	}},
	// Aimed at A's execution by every filter that can name it.
	"GET /v1/workflows/searchExecutions": {scope: "read", list: true, target: func(a tenant) (string, any) {
		return "/v1/workflows/searchExecutions?limit=30&status=WAITING&workflow_id=" + a.workflowID + "&process_id=" + a.processID + "&trigger_type=REQUEST", nil
	}},
	// Another organization's bulk cancel of every REQUEST execution
	// answers its own operation; that A's waiting execution stays is the
	// snapshot's to show.
	"POST /v1/workflows/startBulkOperation": {scope: "execute", list: true, target: func(a tenant) (string, any) {
		return "/v1/workflows/startBulkOperation", map[string]any{"action": "cancel", "trigger_type": "REQUEST"}
	}},
	"GET /v1/workflows/getBulkOperation": {scope: "read", target: func(a tenant) (string, any) {
		return "/v1/workflows/getBulkOperation?bulk_operation_id=" + a.bulkID, nil
	}},
	"GET /v1/workflows/getWorkflowById": {scope: "read", target: func(a tenant) (string, any) {
		return "/v1/workflows/getWorkflowById?workflow_id=" + a.workflowID + "&workflow_version=1", nil
	}},
	"GET /v1/workflows/getOrganizationWorkflows": {scope: "read", list: true, target: func(a tenant) (string, any) {
		return "/v1/workflows/getOrganizationWorkflows?limit=30", nil
	}},
	"GET /v1/workflows/getWorkflowSchemaById": {scope: "read", target: func(a tenant) (string, any) {
		return "/v1/workflows/getWorkflowSchemaById?workflow_id=" + a.workflowID + "&workflow_version=1", nil
	}},
	"POST /v1/workflows/saveWorkflow": {scope: "admin", target: func(a tenant) (string, any) {
		b := minimalBody()
		b["workflow_id"] = a.workflowID
		return "/v1/workflows/saveWorkflow", b
	}},
	"POST /v1/workflows/publishWorkflow": {scope: "admin", target: func(a tenant) (string, any) {
		return "/v1/workflows/publishWorkflow", map[string]any{"workflow_id": a.workflowID, "workflow_version": 1}
	}},
	"GET /v1/adaptive-cards/getCardById": {scope: "read", target: func(a tenant) (string, any) {
		return "/v1/adaptive-cards/getCardById?card_id=" + a.cardID + "&card_version=1", nil
	}},
	"GET /v1/adaptive-cards/getLatestActiveCard": {scope: "read", target: func(a tenant) (string, any) {
		return "/v1/adaptive-cards/getLatestActiveCard?card_id=" + a.cardID, nil
	}},
	"GET /v1/adaptive-cards/getOrganizationCards": {scope: "read", list: true, target: func(a tenant) (string, any) {
		return "/v1/adaptive-cards/getOrganizationCards?limit=30", nil
	}},
	"POST /v1/adaptive-cards/saveCard": {scope: "admin", target: func(a tenant) (string, any) {
		return "/v1/adaptive-cards/saveCard", cardBody(a.cardID)
	}},
	"POST /v1/adaptive-cards/publishCard": {scope: "admin", target: func(a tenant) (string, any) {
		return "/v1/adaptive-cards/publishCard", map[string]any{"card_id": a.cardID, "card_version": 1}
	}},
	"POST /v1/adaptive-cards/previewCard": {scope: "read", target: func(a tenant) (string, any) {
		return "/v1/adaptive-cards/previewCard", map[string]any{"card_id": a.cardID, "card_version": 1, "data": map[string]any{}}
	}},
	"POST /v1/workflows/triggerworkflow/{workflow_id}": {scope: "execute", target: func(a tenant) (string, any) {
		return "/v1/workflows/triggerworkflow/" + a.workflowID + "?process_id=PO-other", map[string]any{"amount": 5000}
	}},
	"POST /v1/workflows/triggerworkflow/{workflow_id}/{workflow_version}": {scope: "execute", target: func(a tenant) (string, any) {
		return "/v1/workflows/triggerworkflow/" + a.workflowID + "/1", map[string]any{"amount": 5000}
	}},
	"POST /v1/workflows/toggleScheduledWorkflow": {scope: "execute", target: func(a tenant) (string, any) {
		return "/v1/workflows/toggleScheduledWorkflow", map[string]any{"workflow_id": a.scheduledID, "workflow_version": 1, "action": "PAUSE"}
	}},
	"GET /v1/workflows/getWorkflowSchedule": {scope: "read", target: func(a tenant) (string, any) {
		return "/v1/workflows/getWorkflowSchedule?workflow_id=" + a.scheduledID, nil
	}},
	"POST /v1/workflows/cancelExecution": {scope: "execute", target: func(a tenant) (string, any) {
		return "/v1/workflows/cancelExecution", map[string]any{"workflow_id": a.workflowID, "workflow_execution_id": a.executionID}
	}},
	// Organization B finds no execution to redrive, before its status is
	// looked at (A's own key would get 409: it waits).
	"POST /v1/workflows/redriveExecution": {scope: "execute", target: func(a tenant) (string, any) {
		return "/v1/workflows/redriveExecution", map[string]any{"workflow_id": a.workflowID, "workflow_execution_id": a.executionID}
	}},
	"POST /v1/workflows/{action}/{process_id}": {scope: "execute", target: func(a tenant) (string, any) {
		return "/v1/workflows/resumeworkflow/" + a.processID, map[string]any{"source": "TEAMS", "decision": "approve"}
	}},
	"GET /v1/approvals/getPendingApprovals": {scope: "read", list: true, target: func(a tenant) (string, any) {
		return "/v1/approvals/getPendingApprovals?limit=30&approver=ann@example.com", nil
	}},
	// Aimed at A's workflow, over the days A's approvals end on.
	"GET /v1/approvals/getApprovalStats": {scope: "read", list: true, target: func(a tenant) (string, any) {
		return "/v1/approvals/getApprovalStats?workflow_id=" + a.workflowID, nil
	}},
	"GET /v1/approvals/getApprovalById": {scope: "read", target: func(a tenant) (string, any) {
		return "/v1/approvals/getApprovalById?approval_id=" + a.approvalID, nil
	}},
	"POST /v1/approvals/answerApproval": {scope: "execute", target: func(a tenant) (string, any) {
		return "/v1/approvals/answerApproval", map[string]any{"approval_id": a.approvalID, "decision": "approve"}
	}},
	"POST /v1/approvals/reassignApproval": {scope: "execute", target: func(a tenant) (string, any) {
		return "/v1/approvals/reassignApproval", map[string]any{"approval_id": a.approvalID, "to": "eve@example.com"}
	}},
	"POST /v1/approvals/issueApprovalLinks": {scope: "admin", target: func(a tenant) (string, any) {
		return "/v1/approvals/issueApprovalLinks", map[string]any{"approval_id": a.approvalID, "approver": "ann@example.com"}
	}},
	"POST /v1/approvals/overrideApproval": {scope: "admin", target: func(a tenant) (string, any) {
		return "/v1/approvals/overrideApproval", map[string]any{"approval_id": a.approvalID, "decision": "approve", "reason": "the approver is away"}
	}},
	"POST /v1/teams/registerConversation": {scope: "admin", conflict: true, target: func(a tenant) (string, any) {
		return "/v1/teams/registerConversation", map[string]any{"conversation_id": a.conversationID, "service_url": "https://smba.trafficmanager.net/emea/"}
	}},
	// Organization B's key acts for ann@example.com too: its delegation,
	// and the pending approvals it moves, are organization B's.
	"POST /v1/approvals/setDelegation": {scope: "execute", list: true, target: func(a tenant) (string, any) {
		return "/v1/approvals/setDelegation", map[string]any{"approver": "ann@example.com", "delegate": "zed@example.com",
			"starts_on": 1, "ends_on": 4102444800000, "move_pending": true}
	}},
	"GET /v1/approvals/getDelegations": {scope: "read", list: true, target: func(a tenant) (string, any) {
		return "/v1/approvals/getDelegations?approver=dora@example.com", nil
	}},
	"POST /v1/approvals/removeDelegation": {scope: "execute", target: func(a tenant) (string, any) {
		return "/v1/approvals/removeDelegation", map[string]any{"delegation_id": a.delegationID}
	}},
	"GET /v1/teams/listConversations": {scope: "admin", list: true, target: func(a tenant) (string, any) {
		return "/v1/teams/listConversations", nil
	}},
	"POST /v1/teams/removeConversation": {scope: "admin", target: func(a tenant) (string, any) {
		return "/v1/teams/removeConversation", map[string]any{"conversation_id": a.conversationID}
	}},
	"GET /v1/adaptive-cards/outbox": {scope: "read", list: true, target: func(a tenant) (string, any) {
		return "/v1/adaptive-cards/outbox?limit=30", nil
	}},
}

// newTenant gives org the records the matrix aims at, through the API.
func (e *env) newTenant(org string) tenant {
	e.t.Helper()
	admin := e.key(org, "read", "admin", "execute")
	a := tenant{org: org, processID: "PO-" + org}
	a.workflowID, a.cardID = e.publishedApproval(admin)
	r := e.trigger(admin, "/v1/workflows/triggerworkflow/"+a.workflowID+"/1?process_id="+a.processID, map[string]any{"amount": 5000})
	if r.status != 200 {
		e.t.Fatalf("trigger: got %d %s", r.status, r.raw)
	}
	a.executionID = str(r.body["service_execution_id"])
	e.awaitStatus(admin, a.workflowID, a.executionID, "WAITING")
	// An open approval that lists ann@example.com, whom organization B's
	// key acts for too.
	a.approvalID = cardflow.ApprovalIDOf(a.executionID, 99)
	if err := e.store.CreateApproval(context.Background(), &cardflow.Approval{
		ApprovalID: a.approvalID, OrganizationID: org, WorkflowID: a.workflowID, ExecutionID: a.executionID, ProcessID: a.processID,
		StepID: "approve", StepName: "Approve", Wait: 99, CardID: a.cardID, CardVersion: 1, CardPayload: map[string]any{},
		Approvers: []string{"ann@example.com", "bob@example.com"}, Policy: cardflow.PolicyAll, AllowReassign: true,
		Answers: []cardflow.ApprovalAnswer{}, Status: cardflow.ApprovalPending, CreatedOn: 1,
	}); err != nil {
		e.t.Fatal(err)
	}

	a.conversationID = "19:" + a.cardID + "@thread.tacv2"
	if r := e.do("POST", "/v1/teams/registerConversation", admin, map[string]any{"conversation_id": a.conversationID}); r.status != 200 {
		e.t.Fatalf("register a conversation: got %d %s", r.status, r.raw)
	}

	r = e.do("POST", "/v1/approvals/setDelegation", admin, map[string]any{"approver": "dora@example.com", "delegate": "carl@example.com",
		"starts_on": 4000000000000, "ends_on": 4100000000000})
	if r.status != 200 {
		e.t.Fatalf("set a delegation: got %d %s", r.status, r.raw)
	}
	a.delegationID = str(r.body["item"].(map[string]any)["delegation"].(map[string]any)["delegation_id"])

	r = e.do("POST", "/v1/workflows/startBulkOperation", admin, map[string]any{"action": "cancel", "process_id": "PO-none"})
	if r.status != 200 {
		e.t.Fatalf("start a bulk operation: got %d %s", r.status, r.raw)
	}
	a.bulkID = str(r.body["item"].(map[string]any)["bulk_operation_id"])

	b := minimalBody()
	b["workflow_name"] = "New year"
	b["workflow_steps"].([]any)[0].(map[string]any)["config"] = map[string]any{"kind": "SCHEDULE", "expression": "cron(0 3 1 1 ? *)", "timezone": "UTC"}
	r = e.do("POST", "/v1/workflows/saveWorkflow", admin, b)
	a.scheduledID = str(r.body["item"].(map[string]any)["workflow_id"])
	if r := e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": a.scheduledID, "workflow_version": 1}); r.status != 200 {
		e.t.Fatalf("publish the scheduled workflow: got %d %s", r.status, r.raw)
	}
	return a
}

// snapshot is every record of the tenant as the store holds it: workflows,
// cards, executions (with their revisions), the process record, schedules,
// schema records, outbox deliveries and API keys.
func (e *env) snapshot(a tenant) string {
	e.t.Helper()
	ctx := context.Background()
	s := e.store
	var out []any
	add := func(v any, err error) {
		if err != nil {
			e.t.Fatalf("snapshot of %s: %v", a.org, err)
		}
		out = append(out, v)
	}
	add(s.ListWorkflows(ctx, a.org, cardflow.ListOptions[cardflow.WorkflowKey]{Limit: cardflow.MaxLimit}))
	add(s.ListCards(ctx, a.org, cardflow.ListOptions[cardflow.CardKey]{Limit: cardflow.MaxLimit}))
	add(s.ListExecutions(ctx, a.org, cardflow.ListOptions[cardflow.ExecutionKey]{Limit: cardflow.MaxLimit}))
	add(s.GetProcess(ctx, a.org, a.processID))
	for _, id := range []string{a.workflowID, a.scheduledID} {
		add(s.ListWorkflowSchedules(ctx, a.org, id))
	}
	add(s.GetSchema(ctx, a.org, a.workflowID, 1))
	deliveries, more, err := s.(httpapi.Outbox).ListDeliveries(ctx, a.org, cardflow.MaxLimit, "")
	add(deliveries, err)
	add(more, nil)
	add(s.ListAPIKeys(ctx, a.org))
	add(s.GetApproval(ctx, a.org, a.approvalID))
	add(s.ListConversations(ctx, a.org))
	add(s.GetDelegations(ctx, a.org))
	raw, err := json.Marshal(out)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(raw)
}

// TestTenantIsolation runs every route the server knows with three callers
// aimed at organization A's records: a key of organization B (404, or a list
// without A's records), a key of A without the route's scope (403), and a
// revoked key of A (401). None of them may change any record of A.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.newTenant("org-a")
	e.newTenant("org-b")
	// Organization B's key acts for a person organization A's approval
	// lists: an approval of A is still not B's to see or answer.
	other, _, err := e.svc.CreateKey(context.Background(), app.CreateKeyInput{OrganizationID: "org-b", WorkspaceID: "org-b-ws", Scopes: cardflow.AllScopes, Person: "ann@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	revoked, k, err := e.svc.CreateKey(context.Background(), app.CreateKeyInput{OrganizationID: a.org, WorkspaceID: a.org + "-ws", Scopes: cardflow.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.RevokeKey(context.Background(), k.KeyID); err != nil {
		t.Fatal(err)
	}
	lacking := map[string]string{}
	for _, scope := range cardflow.AllScopes {
		lacking[scope] = e.key(a.org, slices.DeleteFunc(slices.Clone(cardflow.AllScopes), func(s string) bool { return s == scope })...)
	}
	before := e.snapshot(a)

	api, err := httpapi.New(e.svc, httpapi.KeyAuthenticator{Service: e.svc}, httpapi.WithOutbox(e.store.(httpapi.Outbox)), httpapi.WithApprovalLinks())
	if err != nil {
		t.Fatal(err)
	}
	routes := api.Routes()
	slices.Sort(routes)
	for _, name := range routes {
		row, ok := isolationRows[name]
		if !ok {
			t.Errorf("%s has no row in isolationRows: add the request that aims at organization A's records", name)
			continue
		}
		method, _, _ := strings.Cut(name, " ")
		path, body := row.target(a)
		t.Run(name, func(t *testing.T) {
			r := e.do(method, path, other, body)
			switch {
			case row.list:
				for _, id := range []string{a.org, a.workflowID, a.cardID, a.executionID, a.processID, a.approvalID, a.conversationID, a.delegationID} {
					if r.status != 200 || strings.Contains(string(r.raw), id) {
						t.Errorf("organization B: got %d %s, want 200 without %s", r.status, r.raw, id)
					}
				}
			case row.conflict:
				if r.status != 409 || r.code() != "CONFLICT" || strings.Contains(string(r.raw), a.org) {
					t.Errorf("organization B: got %d %s, want 409 CONFLICT that does not name %s", r.status, r.raw, a.org)
				}
			case r.status != 404 || r.code() != "NOT_FOUND" || r.msg() == "":
				t.Errorf("organization B: got %d %s, want 404 NOT_FOUND", r.status, r.raw)
			}
			if r := e.do(method, path, lacking[row.scope], body); r.status != 403 || r.code() != "FORBIDDEN" {
				t.Errorf("key without %s: got %d %s, want 403 FORBIDDEN", row.scope, r.status, r.raw)
			}
			if r := e.do(method, path, revoked, body); r.status != 401 || r.code() != "UNAUTHORIZED" {
				t.Errorf("revoked key: got %d %s, want 401 UNAUTHORIZED", r.status, r.raw)
			}
		})
	}
	for name := range isolationRows {
		if !slices.Contains(routes, name) {
			t.Errorf("isolationRows has %s, which the server does not answer", name)
		}
	}
	if after := e.snapshot(a); after != before {
		t.Errorf("organization A's records changed:\nbefore %s\nafter  %s", before, after)
	}
}
