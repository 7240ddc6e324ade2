package httpapi_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/localmode"
)

// newLimitedEnv is newEnv with the organizations' default limits.
func newLimitedEnv(t *testing.T, limits cardflow.Limits) *env {
	t.Helper()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(store, store, localmode.Config{EarlyResume: 2 * time.Second, OrgLimits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(st.Service, httpapi.KeyAuthenticator{Service: st.Service})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, svc: st.Service, store: store, now: time.Now()}
}

// wantThrottled checks a 429 in the service's error shape with a
// Retry-After of at least min seconds.
func wantThrottled(t *testing.T, what string, r response, min int) {
	t.Helper()
	if r.status != 429 || r.code() != cardflow.ETHROTTLED || r.msg() == "" {
		t.Fatalf("%s: got %d %s, want 429 THROTTLED with a message", what, r.status, r.raw)
	}
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs < min {
		t.Errorf("%s: got Retry-After %q, want a whole number of seconds, at least %d", what, r.header.Get("Retry-After"), min)
	}
}

// TestRateLimitPerOrganization drives one organization's keys past its
// rate over HTTP: its requests are refused, with Retry-After, whichever of
// its keys asks, while another organization's go on; an override raises
// one organization's limit at once.
func TestRateLimitPerOrganization(t *testing.T) {
	t.Parallel()
	// A token every 100 s: nothing refills while the test runs.
	e := newLimitedEnv(t, cardflow.Limits{RatePerSecond: 0.01, Burst: 3})
	a1, a2 := e.key("org-a", "read"), e.key("org-a", "read")
	b := e.key("org-b", "read")
	const path = "/v1/workflows/getOrganizationWorkflows"
	for i, key := range []string{a1, a2, a1} {
		if r := e.get(path, key); r.status != 200 {
			t.Fatalf("request %d within the burst: got %d %s", i+1, r.status, r.raw)
		}
	}
	wantThrottled(t, "org-a past its burst", e.get(path, a2), 1)
	wantThrottled(t, "org-a on another endpoint", e.get("/v1/adaptive-cards/getOrganizationCards", a1), 1)
	for i := range 3 {
		if r := e.get(path, b); r.status != 200 {
			t.Fatalf("org-b request %d while org-a is throttled: got %d %s", i+1, r.status, r.raw)
		}
	}

	if _, err := e.svc.SetLimits(context.Background(), cardflow.Limits{OrganizationID: "org-a", RatePerSecond: 1000, Burst: 1000}); err != nil {
		t.Fatal(err)
	}
	if r := e.get(path, a1); r.status != 200 {
		t.Errorf("org-a after its limit was raised: got %d %s", r.status, r.raw)
	}
	wantThrottled(t, "org-b past its burst", e.get(path, b), 1)
}

// TestOpenExecutionCap triggers executions that wait for an approver
// until one organization holds its cap: the next trigger is 429, another
// organization still starts, and cancelling one frees its place.
func TestOpenExecutionCap(t *testing.T) {
	t.Parallel()
	e := newLimitedEnv(t, cardflow.Limits{MaxOpenExecutions: 2})
	admin := e.key("org-a", "read", "admin", "execute")
	other := e.key("org-b", "read", "admin", "execute")
	wf, _ := e.publishedApproval(admin)
	otherWF, _ := e.publishedApproval(other)

	var ids []string
	for i := range 2 {
		r := e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 5000, "requester": "ann"})
		if r.status != 200 {
			t.Fatalf("trigger %d under the cap: got %d %s", i+1, r.status, r.raw)
		}
		ids = append(ids, str(r.body["service_execution_id"]))
	}
	wantThrottled(t, "trigger past the cap", e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 5000}), 60)
	if r := e.trigger(other, "/v1/workflows/triggerworkflow/"+otherWF, map[string]any{"amount": 5000}); r.status != 200 {
		t.Fatalf("org-b trigger while org-a is full: got %d %s", r.status, r.raw)
	}

	e.awaitStatus(admin, wf, ids[0], "WAITING")
	if r := e.do("POST", "/v1/workflows/cancelExecution", admin, map[string]any{"workflow_id": wf, "workflow_execution_id": ids[0]}); r.status != 200 {
		t.Fatalf("cancel: got %d %s", r.status, r.raw)
	}
	if r := e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 5000}); r.status != 200 {
		t.Errorf("trigger after a cancel: got %d %s", r.status, r.raw)
	}
}
