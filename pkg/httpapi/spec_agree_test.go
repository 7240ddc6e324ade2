package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/cardflow/cardflow/pkg/httpapi"
)

// specAllows reports whether openapi.yaml allows a request, its
// parameters and body; authentication is not its business here.
func specAllows(t *testing.T, method, url string, body []byte, contentType string) error {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req = specRequest(req)
	route, params, err := openapiRouter(t).FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s: not in openapi.yaml: %v", method, url, err)
	}
	err = openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true},
	})
	var all openapi3.MultiError
	if !errors.As(err, &all) {
		return err
	}
	// kin-openapi reads an exploded object parameter that is left out
	// (the page key) as an empty object, and misses its required fields.
	var kept openapi3.MultiError
	for _, err := range all {
		var re *openapi3filter.RequestError
		if errors.As(err, &re) && re.Parameter != nil && re.Parameter.Name == "lastKey" && !hasAny(req.URL.Query(), re.Parameter.Schema.Value.Properties) {
			continue
		}
		kept = append(kept, err)
	}
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// hasAny reports whether q has any of the fields.
func hasAny(q url.Values, fields openapi3.Schemas) bool {
	for f := range fields {
		if q.Has(f) {
			return true
		}
	}
	return false
}

// TestSpecAgreesWithAnswers: what Schemathesis found with seeds of its own.
// A request openapi.yaml allows is answered as it documents, never
// refused with 400 or failed with 500; one it forbids is refused with 400.
func TestSpecAgreesWithAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.WithTeams())
	admin := e.key("org-a", "read", "execute", "admin")
	unlinked := cardBody("")
	unlinked["workflow_id"], unlinked["workflow_version"] = "", 0
	emptyLink := cardBody("")
	emptyLink["workflow_id"], emptyLink["workflow_version"] = "", 999999998
	noVersion := cardBody("")
	noVersion["card_payload"] = map[string]any{"type": "AdaptiveCard", "version": ""}
	oldVersion := cardBody("")
	oldVersion["card_payload"] = map[string]any{"type": "AdaptiveCard", "version": "01.05"}
	linkedToNothing := cardBody("")
	linkedToNothing["workflow_id"], linkedToNothing["workflow_version"] = "01J0000000000000000000000X", 1

	tests := []struct {
		name, method, path string
		key                string
		body               any
		allowed            bool   // by openapi.yaml
		status             int    // the answer
		want               string // in the message, or in the item of a 200
	}{
		{"an age past any duration", "GET", "/v1/approvals/getPendingApprovals?older_than=P0370765D", admin, nil, true, 200, ""},
		{"an age of more seconds than a Duration holds", "GET", "/v1/approvals/getPendingApprovals?older_than=P7WT298963000438484747023608S", admin, nil, true, 200, ""},
		{"an age of zero", "GET", "/v1/approvals/getPendingApprovals?older_than=P0D", admin, nil, true, 200, ""},
		{"an age of nothing", "GET", "/v1/approvals/getPendingApprovals?older_than=PT", admin, nil, false, 400, `\"PT\" is not an ISO 8601 duration`},
		{"an age in months", "GET", "/v1/approvals/getPendingApprovals?older_than=P1M", admin, nil, false, 400, `\"P1M\" is not an ISO 8601 duration`},
		{"an empty time range", "GET", "/v1/workflows/searchExecutions?created_after=1700000000000&created_before=1700000000000", admin, nil, true, 200, ""},
		{"an inverted time range", "GET", "/v1/workflows/searchExecutions?created_after=20&created_before=10", admin, nil, true, 200, ""},
		{"created before 0", "GET", "/v1/workflows/searchExecutions?created_before=0", admin, nil, false, 400, "created_before must be after 0"},
		{"a time of 15 digits", "GET", "/v1/workflows/searchExecutions?created_after=253402300799998", admin, nil, false, 400, "created_after must be"},
		{"a bulk operation without filters", "POST", "/v1/workflows/startBulkOperation", admin, map[string]any{"action": "cancel"}, false, 400, "at least one filter"},
		{"a bulk operation over an inverted range", "POST", "/v1/workflows/startBulkOperation", admin, map[string]any{"action": "cancel", "created_after": 20, "created_before": 10}, true, 200, `"status":"SUCCEEDED"`},
		{"a bulk operation over the future", "POST", "/v1/workflows/startBulkOperation", admin, map[string]any{"action": "redrive", "created_after": 253402300799998, "created_before": 1}, true, 200, `"done":0`},
		{"a client token with a NUL", "POST", "/v1/workflows/startBulkOperation", admin, map[string]any{"action": "cancel", "status": "FAILED", "client_token": "a\x00b"}, false, 400, "client_token must be 1 to 200 visible ASCII"},
		{"a card of no version", "POST", "/v1/adaptive-cards/saveCard", admin, noVersion, false, 400, "must be a version such as"},
		{"a card of version 01.05", "POST", "/v1/adaptive-cards/saveCard", admin, oldVersion, true, 200, `"card_version":`},
		{"a card linked to no workflow", "POST", "/v1/adaptive-cards/saveCard", admin, unlinked, true, 200, `"workflow_version":0`},
		{"a card linked to a version of no workflow", "POST", "/v1/adaptive-cards/saveCard", admin, emptyLink, false, 400, "go together"},
		{"a card linked to a workflow that is not there", "POST", "/v1/adaptive-cards/saveCard", admin, linkedToNothing, true, 404, "names no workflow"},
		{"a workflow naming a card that is not there", "POST", "/v1/workflows/saveWorkflow", admin, approvalBody("01J0000000000000000000000X"), true, 404, "names no card"},
		{"an override whose reason is U+0085", "POST", "/v1/approvals/overrideApproval", admin, map[string]any{"approval_id": "01JD7ZQ7B3X5V9T2Q8M4N6P0RS-0001", "decision": "approve", "reason": "\u0085"}, true, 404, ""},
		{"a bot message where there is no bot", "POST", "/v1/teams/messages", "", map[string]any{"type": "message"}, true, 401, "no Teams bot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw []byte
			if tt.body != nil {
				raw = []byte(jsonOf(tt.body))
			}
			if err := specAllows(t, tt.method, e.srv.URL+tt.path, raw, "application/json"); (err == nil) != tt.allowed {
				t.Errorf("openapi.yaml: got %v, want allowed %v", err, tt.allowed)
			}
			var r response
			if raw != nil {
				r = e.do(tt.method, tt.path, tt.key, raw)
			} else {
				r = e.do(tt.method, tt.path, tt.key, nil)
			}
			if r.status != tt.status || !strings.Contains(string(r.raw), tt.want) {
				t.Errorf("got %d %s, want %d with %q", r.status, r.raw, tt.status, tt.want)
			}
		})
	}
}

// TestSpecResponseLinkToken: a response link's token is two base64url
// parts joined by a dot; openapi.yaml says so, and an empty one, which
// it allowed, is refused.
func TestSpecResponseLinkToken(t *testing.T) {
	t.Parallel()
	e, _ := newTeamsEnv(t)
	for _, tc := range []struct {
		method, token string
		allowed       bool
	}{
		{"GET", "", false},
		{"GET", "abc", false},
		{"GET", "eyJ9.c2ln", true},
		{"POST", "", false},
	} {
		link := e.srv.URL + "/v1/teams/respond"
		var body []byte
		contentType := ""
		if tc.method == "GET" {
			link += "?token=" + tc.token
		} else {
			body, contentType = []byte("token="+tc.token+"&confirmation="), "application/x-www-form-urlencoded"
		}
		if err := specAllows(t, tc.method, link, body, contentType); (err == nil) != tc.allowed {
			t.Errorf("%s token %q: openapi.yaml says %v, want allowed %v", tc.method, tc.token, err, tc.allowed)
		}
		status, _, _ := e.linkRequest(tc.method, link, nil)
		if tc.method == "POST" {
			status, _, _ = e.linkRequest("POST", link, map[string][]string{"token": {tc.token}, "confirmation": {""}})
		}
		if status != 400 {
			t.Errorf("%s token %q: got %d, want 400", tc.method, tc.token, status)
		}
	}
}
