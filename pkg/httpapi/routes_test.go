package httpapi_test

import (
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/httpapi"
)

// TestEveryRouteNeedsAKey walks every route the server knows, so a new
// endpoint cannot forget authentication or the error shape.
func TestEveryRouteNeedsAKey(t *testing.T) {
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

// TestWithRoutes checks that a server limited to one route, as one Lambda
// function per endpoint uses it, answers only that route.
func TestWithRoutes(t *testing.T) {
	e := newEnv(t)
	api, err := httpapi.New(e.svc, httpapi.KeyAuthenticator{Service: e.svc}, httpapi.WithRoutes("GET /v1/adaptive-cards/getCardById"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(api.Routes(), ";"), "GET /v1/adaptive-cards/getCardById"; got != want {
		t.Errorf("got routes %s, want %s", got, want)
	}
}
