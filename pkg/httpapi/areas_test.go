package httpapi_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
)

// TestServerNeedsItsAreas: a server does not start over a service that
// lacks the area of one of its endpoints, and names it; it serves the
// endpoints whose areas every service holds over a service of the store
// alone.
func TestServerNeedsItsAreas(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	svc, err := app.New(store, app.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	auth := httpapi.KeyAuthenticator{Service: svc}
	for _, tt := range []struct {
		name string
		eps  []httpapi.Endpoint
		want string // in the error; "" for none
	}{
		{"reads", []httpapi.Endpoint{httpapi.GetWorkflowById, httpapi.GetCardById, httpapi.GetApprovalById, httpapi.SearchExecutions, httpapi.GetBulkOperation}, ""},
		{"publish", []httpapi.Endpoint{httpapi.PublishWorkflow, httpapi.PublishCard}, ""},
		{"trigger", []httpapi.Endpoint{httpapi.GetWorkflowById, httpapi.TriggerWorkflow}, "endpoint triggerWorkflow: app: the service lacks Runs (it needs a runner)"},
		{"override", []httpapi.Endpoint{httpapi.OverrideApproval}, "endpoint overrideApproval: app: the service lacks Runs"},
		{"saveWorkflow", []httpapi.Endpoint{httpapi.SaveWorkflow}, "WorkflowEditor (it needs a workflow checker)"},
		{"every endpoint", httpapi.Endpoints(), "the service lacks"},
	} {
		_, err := httpapi.NewEndpoints(svc, auth, tt.eps)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: got %v, want no error", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: got %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}

// TestNeedsNameEndpoints: each name in the table of needed areas is an
// endpoint's.
func TestNeedsNameEndpoints(t *testing.T) {
	names := map[string]bool{}
	for _, ep := range httpapi.Endpoints() {
		names[ep.Name] = true
	}
	for name := range httpapi.Needs {
		if !names[name] {
			t.Errorf("needs names %q, which is no endpoint", name)
		}
	}
}

// adminOf authenticates every request as an admin of one organization
// acting for a person.
type adminOf struct{}

func (adminOf) Authenticate(*http.Request) (*cardflow.Principal, error) {
	return &cardflow.Principal{OrganizationID: "org", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "ann@example.com", Person: "ann@example.com", KeyID: "k"}, nil
}

// TestEveryEndpointServesOverWhatItStarts: a server that starts over a
// service of the store alone answers every endpoint it serves without
// panicking, so an endpoint whose use case needs an area missing from the
// table of needed areas fails this test instead of a function at run time.
func TestEveryEndpointServesOverWhatItStarts(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	svc, err := app.New(store, app.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range httpapi.Endpoints() {
		h, err := httpapi.NewEndpoints(svc, adminOf{}, []httpapi.Endpoint{ep})
		if err != nil {
			continue // refused at start: what the table is for
		}
		// The endpoint's sample event (events/) is a request its use case
		// reads through.
		b, err := os.ReadFile(filepath.Join("..", "..", "events", ep.Name+".json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Path   string            `json:"path"`
			Method string            `json:"httpMethod"`
			Query  map[string]string `json:"queryStringParameters"`
			Body   string            `json:"body"`
		}
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatal(err)
		}
		q := url.Values{}
		for k, v := range ev.Query {
			q.Set(k, v)
		}
		req := httptest.NewRequest(ev.Method, ev.Path+"?"+q.Encode(), strings.NewReader(ev.Body))
		req.Header.Set("Content-Type", "application/json")
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panicked over a service of the store alone: %v", ep.Name, p)
				}
			}()
			h.ServeHTTP(httptest.NewRecorder(), req)
		}()
	}
}
