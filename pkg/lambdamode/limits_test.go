package lambdamode_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
)

// TestRateLimitOnDynamoDB drives one organization past its rate, counted
// in the limits table as the functions count it (their environment's
// CARDFLOW_ORG_* defaults, DynamoDB Local), over HTTP: two instances of
// the service share the count, and another organization is unaffected.
func TestRateLimitOnDynamoDB(t *testing.T) {
	_, prefix := dynamostoretest.Tables(t)
	vars := map[string]string{
		lambdamode.EnvTablePrefix:      prefix,
		lambdamode.EnvDynamoDBEndpoint: os.Getenv("DYNAMODB_ENDPOINT"),
		// Windows of 10,000 s admitting 3 requests: one seldom ends during
		// the test.
		cardflow.EnvOrgRate:  "0.0003",
		cardflow.EnvOrgBurst: "3",
	}
	env, err := lambdamode.LoadEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	log := env.Logger(io.Discard)
	var servers []*httptest.Server
	var svc *app.Service
	for range 2 {
		if svc, err = env.NewService(log, app.Deps{}); err != nil {
			t.Fatal(err)
		}
		api, err := httpapi.NewEndpoints(svc, httpapi.KeyAuthenticator{Service: svc}, []httpapi.Endpoint{httpapi.GetOrganizationWorkflows})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(api)
		defer srv.Close()
		servers = append(servers, srv)
	}
	key := func(org string) string {
		k, _, err := svc.CreateKey(context.Background(), app.CreateKeyInput{OrganizationID: org, WorkspaceID: "ws", Scopes: []string{cardflow.ScopeRead}})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	a, b := key("org-a-"+cardflow.NewID(time.Now())), key("org-b-"+cardflow.NewID(time.Now()))
	get := func(srv *httptest.Server, k string) *http.Response {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/workflows/getOrganizationWorkflows", nil)
		req.Header.Set("x-api-key", k)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// The window may start anywhere in 10,000 s; three requests fit it unless
	// it turns over between them, which the test would see as four admitted.
	admitted := 0
	for i := range 4 {
		if resp := get(servers[i%2], a); resp.StatusCode == 200 {
			admitted++
		} else if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("request %d: got %d (Retry-After %q), want 200 or 429 with Retry-After", i+1, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	if admitted != 3 {
		t.Errorf("org-a requests admitted across two instances: got %d, want 3", admitted)
	}
	if resp := get(servers[0], b); resp.StatusCode != 200 {
		t.Errorf("org-b while org-a is throttled: got %d, want 200", resp.StatusCode)
	}
}
