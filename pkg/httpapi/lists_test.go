package httpapi_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// minimalWorkflow is the smallest valid definition: a trigger and an end.
func minimalWorkflow(id, name string) app.SaveWorkflowInput {
	return app.SaveWorkflowInput{
		WorkflowID:   id,
		WorkflowName: name,
		WorkflowSteps: []cardflow.Step{
			{ID: "start", Name: "Start", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
			{ID: "end", Name: "End", Type: "end", Config: map[string]any{}},
		},
		WorkflowConnections: []cardflow.Connection{{From: "start", To: "end"}},
	}
}

func minimalCard(text string) map[string]any {
	return map[string]any{"type": "AdaptiveCard", "version": "1.5", "body": []any{map[string]any{"type": "TextBlock", "text": text}}}
}

// walk follows lastKey through a list endpoint and returns every item id,
// checking page sizes and that the last page has no lastKey.
func walk(t *testing.T, e *env, path, key string, limit int, fixed []string, id func(map[string]any) string) []string {
	t.Helper()
	var got []string
	query := append([]string{"limit", strconv.Itoa(limit)}, fixed...)
	for page := 0; ; page++ {
		if page > 100 {
			t.Fatalf("%s: more than 100 pages", path)
		}
		r := e.get(path, key, query...)
		if r.status != 200 {
			t.Fatalf("%s page %d: got %d %s", path, page, r.status, r.raw)
		}
		list := items(r)
		if r.body["count"] != float64(len(list)) {
			t.Fatalf("%s page %d: got count %v for %d items", path, page, r.body["count"], len(list))
		}
		for _, it := range list {
			got = append(got, id(it))
		}
		last, more := r.body["lastKey"].(map[string]any)
		if !more {
			return got
		}
		if len(list) != limit {
			t.Fatalf("%s page %d: got %d items and a lastKey, want %d", path, page, len(list), limit)
		}
		query = append([]string{"limit", strconv.Itoa(limit)}, fixed...)
		for k, v := range last {
			query = append(query, k, fmt.Sprint(v))
		}
	}
}

func checkSequence(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d items, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: item %d: got %s, want %s", what, i, got[i], want[i])
		}
	}
}

func TestPagination(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := as("org-a")
	key := e.key("org-a", "read")

	// 23 workflows of 2 versions each, and as many cards.
	var wantWorkflows, wantCards []string
	for i := range 23 {
		w, err := e.svc.SaveWorkflow(ctx, minimalWorkflow("", fmt.Sprintf("wf %d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.SaveWorkflow(ctx, minimalWorkflow(w.WorkflowID, fmt.Sprintf("wf %d", i))); err != nil {
			t.Fatal(err)
		}
		c, err := e.svc.SaveCard(ctx, app.SaveCardInput{CardName: "c", CardPayload: minimalCard("one")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.SaveCard(ctx, app.SaveCardInput{CardID: c.CardID, CardName: "c", CardPayload: minimalCard("two")}); err != nil {
			t.Fatal(err)
		}
		wantWorkflows = append(wantWorkflows, w.WorkflowID+"/2", w.WorkflowID+"/1")
		wantCards = append(wantCards, c.CardID+"/2", c.CardID+"/1")
	}
	// 35 executions over two workflows.
	wfA, _ := e.svc.SaveWorkflow(ctx, minimalWorkflow("", "exec a"))
	wfB, _ := e.svc.SaveWorkflow(ctx, minimalWorkflow("", "exec b"))
	var wantAll, wantA []string
	for i := range 35 {
		wf := wfA
		if i%3 == 0 {
			wf = wfB
		}
		ex := &cardflow.Execution{
			WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: wf.WorkflowID, WorkflowVersion: 1,
			OrganizationID: "org-a", WorkspaceID: "org-a-ws", WorkflowCurrentState: "End", WorkflowTriggerType: "REQUEST",
			Status: cardflow.ExecSucceeded, CondensedLogs: map[string]cardflow.StepLog{}, WorkflowEventLog: cardflow.EventLog{Events: []cardflow.Event{}},
			WorkflowDetails: cardflow.WorkflowDetails{WorkflowName: wf.WorkflowName, WorkflowSteps: wf.WorkflowSteps, WorkflowConnections: wf.WorkflowConnections},
		}
		if err := e.store.CreateExecution(ctx, ex); err != nil {
			t.Fatal(err)
		}
		wantAll = append(wantAll, ex.WorkflowExecutionID)
		if wf == wfA {
			wantA = append(wantA, ex.WorkflowExecutionID)
		}
	}
	wantWorkflows = append(wantWorkflows, wfB.WorkflowID+"/1", wfA.WorkflowID+"/1")
	// Lists are ordered by id, then version, both descending: newest first
	// to the millisecond, as ids of one millisecond are in no particular
	// order. Ids have one length and versions one digit, so the strings
	// sort that way.
	for _, want := range [][]string{wantWorkflows, wantCards, wantAll, wantA} {
		slices.Sort(want)
		slices.Reverse(want)
	}

	workflowID := func(it map[string]any) string {
		// List items carry no workflow_version; status_version ends in it.
		sv := str(it["workflow_status_version"])
		return str(it["workflow_id"]) + "/" + sv[strings.LastIndex(sv, "_")+1:]
	}
	cardID := func(it map[string]any) string {
		return fmt.Sprintf("%s/%v", it["card_id"], it["card_version"])
	}
	execID := func(it map[string]any) string { return str(it["workflow_execution_id"]) }

	for _, limit := range []int{1, 2, 7, 20, 30} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			checkSequence(t, "workflows", walk(t, e, "/v1/workflows/getOrganizationWorkflows", key, limit, nil, workflowID), wantWorkflows)
			checkSequence(t, "cards", walk(t, e, "/v1/adaptive-cards/getOrganizationCards", key, limit, nil, cardID), wantCards)
			checkSequence(t, "organization executions", walk(t, e, "/v1/workflows/getOrganizationExecutions", key, limit, nil, execID), wantAll)
			checkSequence(t, "workflow executions", walk(t, e, "/v1/workflows/getWorkflowExecutionHistory", key, limit, []string{"workflow_id", wfA.WorkflowID}, execID), wantA)
		})
	}

	t.Run("lastKey fields", func(t *testing.T) {
		for _, tt := range []struct {
			path, want string
			query      []string
		}{
			{"/v1/workflows/getOrganizationWorkflows", "organization_id,workflow_id,workflow_version", nil},
			{"/v1/adaptive-cards/getOrganizationCards", "card_id,card_version,organization_id", nil},
			{"/v1/workflows/getOrganizationExecutions", "workflow_execution_id,workflow_id", nil},
			{"/v1/workflows/getWorkflowExecutionHistory", "workflow_execution_id,workflow_id", []string{"workflow_id", wfA.WorkflowID}},
		} {
			r := e.get(tt.path, key, append([]string{"limit", "3"}, tt.query...)...)
			last, _ := r.body["lastKey"].(map[string]any)
			if got := keys(last); got != tt.want {
				t.Errorf("%s: got lastKey fields %s, want %s", tt.path, got, tt.want)
			}
			for _, f := range []string{"workflow_version", "card_version"} {
				if v, ok := last[f]; ok {
					if _, isNum := v.(float64); !isNum {
						t.Errorf("%s: got lastKey %s %T, want a number", tt.path, f, v)
					}
				}
			}
		}
	})

	t.Run("limit", func(t *testing.T) {
		tests := []struct {
			limit  string
			status int
			count  float64
		}{
			{"", 200, 20},
			{"5", 200, 5},
			{"30", 200, 30},
			{"31", 200, 30},
			{"1000", 200, 30},
			{"99999999999999999999999", 200, 30},
			{"0", 400, 0},
			{"-1", 400, 0},
			{"abc", 400, 0},
			{"2.5", 400, 0},
		}
		for _, tt := range tests {
			for _, path := range []string{"/v1/workflows/getOrganizationWorkflows", "/v1/adaptive-cards/getOrganizationCards", "/v1/workflows/getOrganizationExecutions"} {
				var r response
				if tt.limit == "" {
					r = e.get(path, key)
				} else {
					r = e.get(path, key, "limit", tt.limit)
				}
				if r.status != tt.status {
					t.Errorf("%s limit=%q: got %d %s, want %d", path, tt.limit, r.status, r.raw, tt.status)
					continue
				}
				if tt.status == 200 && r.body["count"] != tt.count {
					t.Errorf("%s limit=%q: got count %v, want %v", path, tt.limit, r.body["count"], tt.count)
				}
				if tt.status == 400 && (r.code() != "VALIDATION_ERROR" || r.msg() == "") {
					t.Errorf("%s limit=%q: got %s, want VALIDATION_ERROR with a message", path, tt.limit, r.raw)
				}
			}
		}
	})
}

func TestForeignPageKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	idsA := loadSample(t, e, "org-a")
	loadSample(t, e, "org-b")
	keyB := e.key("org-b", "read")

	// A page key naming org-a's records still lists only org-b's.
	for _, tt := range []struct {
		path  string
		query []string
	}{
		{"/v1/workflows/getOrganizationWorkflows", []string{"workflow_id", idsA.ApprovalWorkflowID, "workflow_version", "3"}},
		{"/v1/adaptive-cards/getOrganizationCards", []string{"card_id", idsA.ApprovalCardID, "card_version", "3"}},
		{"/v1/workflows/getOrganizationExecutions", []string{"workflow_id", idsA.ApprovalWorkflowID, "workflow_execution_id", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"}},
	} {
		r := e.get(tt.path, keyB, tt.query...)
		if r.status != 200 {
			t.Errorf("%s: got %d %s, want 200", tt.path, r.status, r.raw)
			continue
		}
		for _, it := range items(r) {
			if it["organization_id"] != "org-b" {
				t.Errorf("%s: got an item of %v", tt.path, it["organization_id"])
			}
		}
	}
	// A page key that says it is org-a's names no page of org-b: 404, as
	// for any record of another organization.
	for _, tt := range []struct {
		path  string
		query []string
	}{
		{"/v1/workflows/getOrganizationWorkflows", []string{"organization_id", "org-a", "workflow_id", idsA.ApprovalWorkflowID, "workflow_version", "3"}},
		{"/v1/adaptive-cards/getOrganizationCards", []string{"organization_id", "org-a", "card_id", idsA.ApprovalCardID, "card_version", "3"}},
	} {
		if r := e.get(tt.path, keyB, tt.query...); r.status != 404 || r.code() != "NOT_FOUND" {
			t.Errorf("%s with org-a's organization_id: got %d %s, want 404", tt.path, r.status, r.raw)
		}
	}
	// The history of org-a's workflow is invisible to org-b, page key or not.
	r := e.get("/v1/workflows/getWorkflowExecutionHistory", keyB, "workflow_id", idsA.ApprovalWorkflowID, "workflow_execution_id", idsA.ExecutionID)
	if r.status != 404 {
		t.Errorf("history of another organization's workflow: got %d %s, want 404", r.status, r.raw)
	}
}

// TestQueryParameters: every query parameter of the lists is read exactly
// as openapi.yaml describes it, and anything else is a 400 that says why.
func TestQueryParameters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := loadSample(t, e, "org-a")
	key := e.key("org-a", "read")
	const (
		workflows  = "/v1/workflows/getOrganizationWorkflows"
		cards      = "/v1/adaptive-cards/getOrganizationCards"
		executions = "/v1/workflows/getOrganizationExecutions"
		history    = "/v1/workflows/getWorkflowExecutionHistory"
		outbox     = "/v1/adaptive-cards/outbox"
	)
	const ulid = "01J0000000000000000000000X"
	tests := []struct {
		name, path, query string
		status            int
		want              string // in the message
	}{
		{"limit empty", workflows, "limit=", 400, `limit must be a whole number from 1 up (above 30 reads as 30), got ""`},
		{"limit signed", cards, "limit=%2B5", 400, `got "+5"`},
		{"limit leading zero", executions, "limit=05", 400, `got "05"`},
		{"limit zero", outbox, "limit=0", 400, "above 30 reads as 30"},
		{"limit above 30", outbox, "limit=31", 200, ""},
		{"limit twice", workflows, "limit=5&limit=6", 400, "limit is given 2 times"},
		{"unknown parameter", workflows, "limt=5", 400, `unknown query parameter "limt"; this endpoint takes limit, organization_id, workflow_id, workflow_version`},
		{"unknown parameter of a read", "/v1/workflows/getWorkflowById", "workflow_id=" + ids.ApprovalWorkflowID + "&workflow_version=1&verbose=1", 400, `unknown query parameter "verbose"`},
		{"lone workflow_id", workflows, "workflow_id=" + ids.ApprovalWorkflowID, 400, "needs both workflow_id and workflow_version"},
		{"lone card_version", cards, "card_version=2", 400, "needs both card_id and card_version"},
		{"lone organization_id", cards, "organization_id=org-a", 400, "needs both card_id and card_version"},
		{"lone execution workflow_id", executions, "workflow_id=" + ids.ApprovalWorkflowID, 400, "needs both workflow_id and workflow_execution_id"},
		{"page key of garbage", history, "workflow_id=" + ids.ApprovalWorkflowID + "&workflow_execution_id=garbage", 400, `workflow_execution_id of the page key must be an id as lastKey gave it`},
		{"page key in lower case", executions, "workflow_id=" + strings.ToLower(ulid) + "&workflow_execution_id=" + ulid, 400, "workflow_id of the page key"},
		{"page key of the outbox", outbox, "delivery_id=garbage", 400, "delivery_id of the page key"},
		{"page key version too large", workflows, "workflow_id=" + ulid + "&workflow_version=1000000000", 400, "from 1 to 999999999"},
		{"page key version empty", cards, "card_id=" + ulid + "&card_version=", 400, "card_version must be a whole number"},
		{"page key of no record", history, "workflow_id=" + ids.ApprovalWorkflowID + "&workflow_execution_id=" + ulid, 200, ""},
		{"whole page key", workflows, "organization_id=org-a&workflow_id=" + ulid + "&workflow_version=3", 200, ""},
		{"version with a sign", "/v1/adaptive-cards/getCardById", "card_id=" + ids.ApprovalCardID + "&card_version=%2B1", 400, "card_version must be a whole number from 1 to 999999999"},
		{"id of spaces", "/v1/adaptive-cards/getCardById", "card_id=%20%09&card_version=1", 400, "card_id is required"},
		// U+0085 is no white space to the spec's patterns (ECMAScript's \s):
		// an id to look up, which names no card.
		{"id of a next-line character", "/v1/adaptive-cards/getCardById", "card_id=%C2%85&card_version=1", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do("GET", tt.path+"?"+tt.query, key, nil)
			if r.status != tt.status {
				t.Fatalf("got %d %s, want %d", r.status, r.raw, tt.status)
			}
			if tt.status == 400 && (r.code() != "VALIDATION_ERROR" || !strings.Contains(r.msg(), tt.want)) {
				t.Errorf("got %s, want VALIDATION_ERROR with %q in the message", r.raw, tt.want)
			}
		})
	}
}
