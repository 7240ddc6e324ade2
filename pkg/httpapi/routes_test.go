package httpapi_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/httpapi"
)

// TestEveryRouteNeedsAKey walks every route the server knows, so a new
// endpoint cannot forget authentication or the error shape.
func TestEveryRouteNeedsAKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	api, err := httpapi.New(e.svc, httpapi.KeyAuthenticator{Service: e.svc})
	if err != nil {
		t.Fatal(err)
	}
	routes := api.Routes()
	if len(routes) < 13 {
		t.Fatalf("got %d routes, want at least the 13 of this release", len(routes))
	}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt, " ")
		if r := e.do(method, path, "", nil); r.status != 401 || r.code() != "UNAUTHORIZED" || r.msg() == "" {
			t.Errorf("%s without a key: got %d %s, want 401 UNAUTHORIZED", rt, r.status, r.raw)
		}
	}
}

// TestNewEndpoints checks that a server of some endpoints, as one Lambda
// function per endpoint builds it, answers only their routes.
func TestNewEndpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	auth := httpapi.KeyAuthenticator{Service: e.svc}
	for _, tc := range []struct {
		endpoints []httpapi.Endpoint
		want      string
	}{
		{[]httpapi.Endpoint{httpapi.GetCardById}, "GET /v1/adaptive-cards/getCardById"},
		{[]httpapi.Endpoint{httpapi.TriggerWorkflow}, "POST /v1/workflows/triggerworkflow/{workflow_id};POST /v1/workflows/triggerworkflow/{workflow_id}/{workflow_version}"},
	} {
		api, err := httpapi.NewEndpoints(e.svc, auth, tc.endpoints)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(slices.Sorted(slices.Values(api.Routes())), ";"); got != tc.want {
			t.Errorf("got routes %s, want %s", got, tc.want)
		}
	}
	for _, bad := range [][]httpapi.Endpoint{nil, {{Name: "made up", Routes: []string{"GET /v1/x"}}}} {
		if _, err := httpapi.NewEndpoints(e.svc, auth, bad); err == nil {
			t.Errorf("NewEndpoints(%v): no error", bad)
		}
	}
}
