package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// checkRefusal holds that a refused request is refused as the caller's
// fault, with a message for a person.
func checkRefusal(t *testing.T, what string, err error, codes ...string) {
	t.Helper()
	code := cardflow.ErrorCode(err)
	found := false
	for _, c := range codes {
		found = found || c == code
	}
	if !found {
		t.Fatalf("%s: got code %s (%v), want one of %v", what, code, err, codes)
	}
	if cardflow.ErrorMessage(err) == "" {
		t.Fatalf("%s: got an error without a message", what)
	}
}

// FuzzQuery reads fuzzed query strings as the list and get endpoints do:
// the limit, required ids and versions, and the lastKey fields of a page key.
func FuzzQuery(f *testing.F) {
	for _, q := range []string{
		"limit=5",
		"limit=99999999999999999999999",
		"limit=-1&workflow_id=01K&workflow_version=2",
		"organization_id=other&card_id=01K&card_version=3",
		"workflow_id=%00&workflow_version=%2B7",
		"card_version=1&card_version=x&limit=",
		"workflow_id=" + strings.Repeat("a", 201),
	} {
		f.Add(q)
	}
	p := &cardflow.Principal{OrganizationID: "org-a", WorkspaceID: "ws", Scopes: cardflow.AllScopes}
	f.Fuzz(func(t *testing.T, raw string) {
		r := httptest.NewRequest("GET", "/v1/workflows/getOrganizationWorkflows", nil)
		r.URL.RawQuery = raw
		r = r.WithContext(cardflow.NewContextWithPrincipal(context.Background(), p))

		q := newQuery(r)
		limit := q.limit()
		org, id, version, ok := q.versionedPageKey(r, "workflow_id", "workflow_version")
		if q.err != nil {
			checkRefusal(t, raw, q.err, cardflow.EINVALID)
			return
		}
		if limit < 1 || limit > cardflow.MaxLimit {
			t.Fatalf("%q: got limit %d, want 1 to %d", raw, limit, cardflow.MaxLimit)
		}
		if ok && (org == "" || id == "" || version < 1) {
			t.Fatalf("%q: got page key (%q, %q, %d), want every part", raw, org, id, version)
		}
		if ok && r.URL.Query().Get("organization_id") == "" && org != p.OrganizationID {
			t.Fatalf("%q: got organization %q, want the caller's", raw, org)
		}

		q = newQuery(r)
		wid, v := q.str("workflow_id", true), q.version("workflow_version", true)
		if q.err != nil {
			checkRefusal(t, raw, q.err, cardflow.EINVALID)
			return
		}
		if strings.TrimSpace(wid) == "" || len(wid) > 200 || v < 1 {
			t.Fatalf("%q: accepted workflow_id %q and version %d", raw, wid, v)
		}
	})
}

// FuzzDecodeBody decodes fuzzed bodies into every request type the write
// endpoints read: each is accepted or refused with a 400 or 413.
func FuzzDecodeBody(f *testing.F) {
	for _, b := range []string{
		`{"workflow_name": "x", "workflow_steps": [], "workflow_connections": []}`,
		`{"card_name": "c", "card_payload": {"type": "AdaptiveCard"}}`,
		`{"workflow_id": "01K", "workflow_version": 2}`,
		`{"workflow_id": "01K", "workflow_version": 1, "action": "PAUSE"}`,
		`{"workflow_id": "01K", "workflow_execution_id": "01K", "reason": "gone"}`,
		`{"workflow_nmae": "typo"}`,
		`{"workflow_version": "2"}`,
		"{\n  \"a\": 1,\n  \"b\": [1, 2,\n}",
		`{} {}`,
		`[1]`,
		``,
	} {
		f.Add([]byte(b))
	}
	targets := []func() any{
		func() any { return new(app.SaveWorkflowInput) },
		func() any { return new(app.SaveCardInput) },
		func() any { return new(publishWorkflowInput) },
		func() any { return new(publishCardInput) },
		func() any { return new(app.ToggleInput) },
		func() any { return new(app.CancelInput) },
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, target := range targets {
			r := httptest.NewRequest("POST", "/v1/workflows/saveWorkflow", strings.NewReader(string(body)))
			v := target()
			if err := decodeBody(httptest.NewRecorder(), r, v); err != nil {
				checkRefusal(t, string(body), err, cardflow.EINVALID, cardflow.ETOOLARGE)
				if code := StatusOf(err); code != http.StatusBadRequest && code != http.StatusRequestEntityTooLarge {
					t.Fatalf("%q: got status %d, want 400 or 413", body, code)
				}
			}
		}
	})
}
