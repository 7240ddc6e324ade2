package httpapi_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/cardflow/cardflow/pkg/sample"
)

// Field sets of the spec, sorted (sections 2.1 to 2.7).
const (
	workflowFields     = "created_by,created_on,latest,modified_by,modified_on,organization_id,workflow_connections,workflow_id,workflow_integrations,workflow_name,workflow_schema,workflow_status,workflow_status_version,workflow_steps,workflow_version,workspace_id"
	workflowListFields = "created_by,created_on,latest,modified_by,modified_on,organization_id,workflow_id,workflow_name,workflow_status,workflow_status_version,workspace_id"
	executionFields    = "condensed_logs,created_on,modified_by,modified_on,organization_id,status,triggered_by,workflow_current_state,workflow_details,workflow_event_log,workflow_execution_id,workflow_id,workflow_input_payload,workflow_output_payload,workflow_trigger_type,workflow_version,workspace_id"
	summaryFields      = "created_on,modified_by,modified_on,organization_id,status,triggered_by,workflow_current_state,workflow_details,workflow_event_log,workflow_execution_id,workflow_id,workflow_trigger_type,workflow_version,workspace_id"
	schemaFields       = "created_by,created_on,modified_by,modified_on,workflow_id,workflow_mock_payload,workflow_schema,workflow_version"
	cardFields         = "card_id,card_name,card_payload,card_version,created_by,created_on,latest,modified_by,modified_on,organization_id,status,status_version,workflow_id,workflow_version,workspace_id"
	cardListFields     = "card_id,card_name,card_version,created_by,created_on,latest,organization_id,status,status_version,workspace_id"
)

func loadSample(t *testing.T, e *env, org string) sample.IDs { return loadSampleB(t, e, org) }

func loadSampleB(t testing.TB, e *env, org string) sample.IDs {
	t.Helper()
	ids, err := sample.Load(as(org), e.svc)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestReadEndpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := loadSample(t, e, "org-a")
	key := e.key("org-a", "read")

	t.Run("getWorkflowById", func(t *testing.T) {
		tests := []struct {
			version                       int
			status, statusVersion, latest string
		}{
			{1, "ACTIVE", "ACTIVE_1", "false"},
			{2, "ACTIVE", "ACTIVE_2", "true"},
			{3, "DRAFT", "DRAFT_3", "false"},
		}
		for _, tt := range tests {
			r := e.get("/v1/workflows/getWorkflowById", key, "workflow_id", ids.ApprovalWorkflowID, "workflow_version", strconv.Itoa(tt.version))
			if r.status != 200 || r.msg() != "success" {
				t.Fatalf("version %d: got %d %s, want 200 success", tt.version, r.status, r.raw)
			}
			item := r.body["item"].(map[string]any)
			if got := keys(item); got != workflowFields {
				t.Errorf("got fields %s, want %s", got, workflowFields)
			}
			for field, want := range map[string]any{
				"workflow_status": tt.status, "workflow_status_version": tt.statusVersion, "latest": tt.latest,
				"workflow_version": float64(tt.version), "organization_id": "org-a", "workflow_id": ids.ApprovalWorkflowID,
			} {
				if got := item[field]; got != want {
					t.Errorf("version %d: got %s %v, want %v", tt.version, field, got, want)
				}
			}
			if _, ok := item["created_on"].(float64); !ok {
				t.Errorf("got created_on %T, want a number", item["created_on"])
			}
			if ms := item["created_on"].(float64); ms < float64(e.now.UnixMilli()-60_000) {
				t.Errorf("got created_on %v, want epoch milliseconds near %d", ms, e.now.UnixMilli())
			}
		}
	})

	t.Run("getOrganizationWorkflows", func(t *testing.T) {
		r := e.get("/v1/workflows/getOrganizationWorkflows", key)
		if r.status != 200 {
			t.Fatalf("got %d %s", r.status, r.raw)
		}
		list := items(r)
		// 3 + 2 + 1 + 1 sample versions.
		if got, want := r.body["count"], float64(7); got != want || len(list) != 7 {
			t.Fatalf("got count %v (%d items), want %v", got, len(list), want)
		}
		if _, ok := r.body["lastKey"]; ok {
			t.Errorf("got a lastKey on the only page, want none")
		}
		latest := map[string]int{}
		for _, it := range list {
			if got := keys(it); got != workflowListFields {
				t.Errorf("got fields %s, want %s", got, workflowListFields)
			}
			if it["latest"] == "true" {
				latest[str(it["workflow_id"])]++
			}
		}
		for id, n := range latest {
			if n != 1 {
				t.Errorf("workflow %s: got %d latest versions, want 1", id, n)
			}
		}
		if len(latest) != 4 {
			t.Errorf("got %d workflows with a latest version, want 4", len(latest))
		}
	})

	t.Run("getWorkflowExecutionById", func(t *testing.T) {
		r := e.get("/v1/workflows/getWorkflowExecutionById", key, "workflow_id", ids.ApprovalWorkflowID, "workflow_execution_id", ids.ExecutionID)
		if r.status != 200 {
			t.Fatalf("got %d %s", r.status, r.raw)
		}
		item := r.body["item"].(map[string]any)
		if got := keys(item); got != executionFields {
			t.Errorf("got fields %s, want %s", got, executionFields)
		}
		if got, want := item["workflow_current_state"], "Approved"; got != want {
			t.Errorf("got workflow_current_state %v, want %v", got, want)
		}
		if got, want := item["workflow_trigger_type"], "REQUEST"; got != want {
			t.Errorf("got workflow_trigger_type %v, want %v", got, want)
		}
	})

	t.Run("execution lists", func(t *testing.T) {
		for _, tt := range []struct {
			path   string
			query  []string
			events int
		}{
			{"/v1/workflows/getWorkflowExecutionHistory", []string{"workflow_id", ids.ApprovalWorkflowID}, 5},
			// The sample run's whole log: started, four steps started and
			// finished, the card's wait and its resume, and the end.
			{"/v1/workflows/getOrganizationExecutions", nil, 12},
		} {
			r := e.get(tt.path, key, tt.query...)
			if r.status != 200 || r.body["count"] != float64(1) {
				t.Fatalf("%s: got %d %s, want one item", tt.path, r.status, r.raw)
			}
			it := items(r)[0]
			if got := keys(it); got != summaryFields {
				t.Errorf("%s: got fields %s, want %s", tt.path, got, summaryFields)
			}
			details := it["workflow_details"].(map[string]any)
			if got, want := keys(details), "workflow_name"; got != want {
				t.Errorf("%s: got workflow_details fields %s, want %s", tt.path, got, want)
			}
			log := it["workflow_event_log"].(map[string]any)
			if got := len(log["events"].([]any)); got != tt.events {
				t.Errorf("%s: got %d events, want %d", tt.path, got, tt.events)
			}
		}
	})

	t.Run("getWorkflowSchemaById", func(t *testing.T) {
		r := e.get("/v1/workflows/getWorkflowSchemaById", key, "workflow_id", ids.ApprovalWorkflowID, "workflow_version", "2")
		if r.status != 200 {
			t.Fatalf("got %d %s", r.status, r.raw)
		}
		if got := keys(r.body["item"].(map[string]any)); got != schemaFields {
			t.Errorf("got fields %s, want %s", got, schemaFields)
		}
		r = e.get("/v1/workflows/getWorkflowSchemaById", key, "workflow_id", ids.ApprovalWorkflowID, "workflow_version", "3")
		if r.status != 404 || r.code() != "NOT_FOUND" {
			t.Errorf("schema of a version that never ran: got %d %s, want 404", r.status, r.raw)
		}
	})

	t.Run("cards", func(t *testing.T) {
		r := e.get("/v1/adaptive-cards/getCardById", key, "card_id", ids.ApprovalCardID, "card_version", "3")
		if r.status != 200 {
			t.Fatalf("got %d %s", r.status, r.raw)
		}
		item := r.body["item"].(map[string]any)
		if got := keys(item); got != cardFields {
			t.Errorf("got fields %s, want %s", got, cardFields)
		}
		if got, want := fmt.Sprint(item["status"], " ", item["status_version"], " ", item["latest"]), "DRAFT DRAFT-3 false"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
		r = e.get("/v1/adaptive-cards/getLatestActiveCard", key, "card_id", ids.ApprovalCardID)
		item, _ = r.body["item"].(map[string]any)
		if r.status != 200 || item["card_version"] != float64(2) || item["status_version"] != "ACTIVE-2" || item["latest"] != "true" {
			t.Errorf("getLatestActiveCard: got %d %s, want version 2, ACTIVE-2, latest", r.status, r.raw)
		}
		r = e.get("/v1/adaptive-cards/getOrganizationCards", key)
		if r.status != 200 || r.body["count"] != float64(6) {
			t.Fatalf("getOrganizationCards: got %d %s, want 6 items", r.status, r.raw)
		}
		for _, it := range items(r) {
			if got := keys(it); got != cardListFields {
				t.Errorf("got fields %s, want %s", got, cardListFields)
			}
		}
	})
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := loadSample(t, e, "org-a")
	mine := e.key("org-a", "read")
	theirs := e.key("org-b", "read", "execute", "admin")
	tests := []struct {
		path  string
		query []string
	}{
		{"/v1/workflows/getWorkflowById", []string{"workflow_id", ids.ApprovalWorkflowID, "workflow_version", "1"}},
		{"/v1/workflows/getWorkflowExecutionById", []string{"workflow_id", ids.ApprovalWorkflowID, "workflow_execution_id", ids.ExecutionID}},
		{"/v1/workflows/getWorkflowExecutionHistory", []string{"workflow_id", ids.ApprovalWorkflowID}},
		{"/v1/workflows/getWorkflowSchemaById", []string{"workflow_id", ids.ApprovalWorkflowID, "workflow_version", "2"}},
		{"/v1/adaptive-cards/getCardById", []string{"card_id", ids.ApprovalCardID, "card_version", "1"}},
		{"/v1/adaptive-cards/getLatestActiveCard", []string{"card_id", ids.ApprovalCardID}},
	}
	for _, tt := range tests {
		if r := e.get(tt.path, mine, tt.query...); r.status != 200 {
			t.Errorf("%s as the owner: got %d %s, want 200", tt.path, r.status, r.raw)
		}
		if r := e.get(tt.path, theirs, tt.query...); r.status != 404 || r.code() != "NOT_FOUND" {
			t.Errorf("%s as another organization: got %d %s, want 404 NOT_FOUND", tt.path, r.status, r.raw)
		}
	}
	for _, tt := range []struct{ path, id, version string }{
		{"/v1/workflows/getWorkflowById", "workflow_id", "workflow_version"},
		{"/v1/adaptive-cards/getCardById", "card_id", "card_version"},
	} {
		r := e.get(tt.path, mine, tt.id, "01J0000000000000000000000X", tt.version, "1")
		if r.status != 404 || r.msg() == "" {
			t.Errorf("%s of an unknown id: got %d %s, want 404 with a message", tt.path, r.status, r.raw)
		}
	}
	// Another organization's lists show nothing of org-a.
	for _, path := range []string{"/v1/workflows/getOrganizationWorkflows", "/v1/workflows/getOrganizationExecutions", "/v1/adaptive-cards/getOrganizationCards"} {
		if r := e.get(path, theirs); r.status != 200 || r.body["count"] != float64(0) {
			t.Errorf("%s as another organization: got %d %s, want an empty list", path, r.status, r.raw)
		}
	}
}
