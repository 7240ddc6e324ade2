package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cardflow/cardflow/pkg/httpapi"
)

// readPaths are the spec's read endpoints with sample ids filled in.
func readPaths(b *testing.B, e *env) map[string]string {
	ids := loadSampleB(b, e, "org-a")
	return map[string]string{
		"getWorkflowById":             "/v1/workflows/getWorkflowById?workflow_id=" + ids.ApprovalWorkflowID + "&workflow_version=2",
		"getOrganizationWorkflows":    "/v1/workflows/getOrganizationWorkflows?limit=20",
		"getWorkflowSchemaById":       "/v1/workflows/getWorkflowSchemaById?workflow_id=" + ids.ApprovalWorkflowID + "&workflow_version=2",
		"getWorkflowExecutionById":    "/v1/workflows/getWorkflowExecutionById?workflow_id=" + ids.ApprovalWorkflowID + "&workflow_execution_id=" + ids.ExecutionID,
		"getWorkflowExecutionHistory": "/v1/workflows/getWorkflowExecutionHistory?workflow_id=" + ids.ApprovalWorkflowID,
		"getOrganizationExecutions":   "/v1/workflows/getOrganizationExecutions",
		"getCardById":                 "/v1/adaptive-cards/getCardById?card_id=" + ids.ApprovalCardID + "&card_version=2",
		"getLatestActiveCard":         "/v1/adaptive-cards/getLatestActiveCard?card_id=" + ids.ApprovalCardID,
		"getOrganizationCards":        "/v1/adaptive-cards/getOrganizationCards?limit=20",
	}
}

// BenchmarkServe measures server time: routing, authentication, the store
// read and JSON encoding, without the network.
func BenchmarkServe(b *testing.B) {
	e := newEnv(b)
	key := e.key("org-a", "read")
	paths := readPaths(b, e)
	api, err := httpapi.New(e.svc, httpapi.KeyAuthenticator{Service: e.svc})
	if err != nil {
		b.Fatal(err)
	}
	for name, path := range paths {
		b.Run(name, func(b *testing.B) {
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("x-api-key", key)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				api.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("got %d %s", w.Code, w.Body)
				}
			}
		})
	}
}

// BenchmarkRoundTrip measures a whole request over loopback HTTP.
func BenchmarkRoundTrip(b *testing.B) {
	e := newEnv(b)
	key := e.key("org-a", "read")
	path := readPaths(b, e)["getWorkflowById"]
	req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
	req.Header.Set("x-api-key", key)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("got %d", resp.StatusCode)
		}
	}
}
