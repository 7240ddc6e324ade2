package httpapi_test

import (
	"strings"
	"testing"
)

// TestSaveWorkflowIntegrations: a bad SAP profile or step call setting is a
// 400 that names the field, and saves nothing.
func TestSaveWorkflowIntegrations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-i", "read", "admin")
	profile := func(change func(map[string]any)) map[string]any {
		p := map[string]any{"type": "SAP", "base_url": "https://s4.example.com", "client": "100", "auth": map[string]any{"type": "basic", "secret": "sap-prod"}}
		if change != nil {
			change(p)
		}
		return map[string]any{"erp": p}
	}
	body := func(integrations map[string]any, call map[string]any) map[string]any {
		b := map[string]any{
			"workflow_name": "SAP lookup",
			"workflow_steps": []any{
				map[string]any{"id": "start", "name": "Start", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
				map[string]any{"id": "call", "name": "Call", "type": call["type"], "config": call["config"]},
				map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{}},
			},
			"workflow_connections": []any{map[string]any{"from": "start", "to": "call"}, map[string]any{"from": "call", "to": "done"}},
		}
		if integrations != nil {
			b["workflow_integrations"] = integrations
		}
		return b
	}
	erp := map[string]any{"type": "erp", "config": map[string]any{"service": "/sap/opu/odata/sap/API_PURCHASEORDER_PROCESS_SRV", "entity": "A_PurchaseOrder('{{ input.po }}')"}}
	httpCall := func(auth any) map[string]any {
		return map[string]any{"type": "http", "config": map[string]any{"method": "GET", "url": "https://api.example.com/x", "auth": auth}}
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"erp step without a profile", body(nil, erp), `workflow_steps[1] (id "call"): an erp step needs workflow_integrations.erp`},
		{"password in the profile", body(profile(func(p map[string]any) { p["password"] = "s3cret" }), erp), "workflow_integrations.erp.password is not a profile field"},
		{"credentials as the secret", body(profile(func(p map[string]any) { p["auth"] = map[string]any{"type": "basic", "secret": "CARDFLOW:s3cret"} }), erp), "workflow_integrations.erp.auth.secret must name a secret"},
		{"numeric client", body(profile(func(p map[string]any) { p["client"] = 100 }), erp), "workflow_integrations.erp.client must be a string of three digits"},
		{"OData V3", body(profile(func(p map[string]any) { p["odata_version"] = "V3" }), erp), `workflow_integrations.erp.odata_version must be V2 or V4, not "V3"`},
		{"oauth2 without token_url", body(profile(func(p map[string]any) { p["auth"] = map[string]any{"type": "oauth2", "secret": "sap-oauth"} }), erp), "workflow_integrations.erp.auth.token_url is required for oauth2"},
		{"erp step with a URL", body(profile(nil), map[string]any{"type": "erp", "config": map[string]any{"service": "https://s4.example.com/sap", "entity": "A"}}), "config.service"},
		{"http auth type", body(nil, httpCall(map[string]any{"type": "ntlm", "secret": "x"})), `workflow_steps[1] (call): config.auth.type must be basic, bearer or header, not ntlm`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", "/v1/workflows/saveWorkflow", admin, tc.body)
			if r.status != 400 || r.code() != "VALIDATION_ERROR" || !strings.Contains(r.msg(), tc.want) {
				t.Errorf("got %d %s %q, want 400 VALIDATION_ERROR saying %q", r.status, r.code(), r.msg(), tc.want)
			}
		})
	}
	if r := e.get("/v1/workflows/getOrganizationWorkflows", admin); len(r.body["items"].([]any)) != 0 {
		t.Errorf("got %d workflows saved, want none", len(r.body["items"].([]any)))
	}
	if r := e.do("POST", "/v1/workflows/saveWorkflow", admin, body(profile(nil), erp)); r.status != 200 {
		t.Errorf("a good profile: got %d %s", r.status, r.raw)
	}
}
