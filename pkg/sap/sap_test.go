package sap_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/fakes/saptest"
	"github.com/cardflow/cardflow/pkg/outbound"
	"github.com/cardflow/cardflow/pkg/sap"
)

type obj = map[string]any

type secretMap map[string]string

func (m secretMap) Secret(_ context.Context, name string) (string, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not set", name)
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// setup starts a fake SAP of version and auth kind and returns a client
// factory over an outbound client that allows loopback and records its
// waits.
type setup struct {
	srv     *saptest.Server
	profile *sap.Profile
	hc      *http.Client
	secrets secretMap
	waits   []time.Duration
}

func newSetup(t testing.TB, version, auth string) *setup {
	t.Helper()
	cfg := saptest.Config{Version: version, Client: "100"}
	s := &setup{secrets: secretMap{}}
	prof := obj{"type": "SAP", "client": "100", "odata_version": version}
	if auth == sap.AuthOAuth2 {
		cfg.ClientID, cfg.ClientSecret = "cardflow-app", "oauth-s3cret"
		s.secrets["sap-oauth"] = "cardflow-app:oauth-s3cret"
	} else {
		cfg.User, cfg.Password = "CARDFLOW", "basic-pa55:word"
		s.secrets["sap-basic"] = `{"username": "CARDFLOW", "password": "basic-pa55:word"}`
	}
	s.srv = saptest.New(cfg)
	t.Cleanup(s.srv.Close)
	prof["base_url"] = s.srv.URL
	if auth == sap.AuthOAuth2 {
		prof["auth"] = obj{"type": "oauth2", "secret": "sap-oauth", "token_url": s.srv.URL + saptest.TokenPath}
	} else {
		prof["auth"] = obj{"type": "basic", "secret": "sap-basic"}
	}
	p, err := sap.ParseProfile(prof)
	if err != nil {
		t.Fatal(err)
	}
	s.profile = p
	allow, _ := outbound.ParseAllow("127.0.0.1")
	s.hc, err = outbound.New(outbound.Config{Allow: allow, Now: func() time.Time { return time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC) },
		Sleep: func(_ context.Context, d time.Duration) error { s.waits = append(s.waits, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *setup) client(t *testing.T, opts ...sap.Option) *sap.Client {
	t.Helper()
	c, err := sap.New(s.profile, s.hc, s.secrets, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCalls(t *testing.T) {
	for _, version := range []string{sap.V2, sap.V4} {
		for _, auth := range []string{sap.AuthBasic, sap.AuthOAuth2} {
			t.Run(version+"/"+auth, func(t *testing.T) {
				s := newSetup(t, version, auth)
				c := s.client(t)
				ctx := context.Background()
				svc := s.srv.Service()

				// Reads need no CSRF token; results come unwrapped.
				resp, err := c.Do(ctx, sap.Request{Service: svc, Entity: "A_PurchaseOrder", Query: url.Values{"$filter": {"DocumentCurrency eq 'EUR'"}}})
				if err != nil {
					t.Fatal(err)
				}
				list, _ := resp.Result.([]any)
				if len(list) != 1 || list[0].(obj)["PurchaseOrder"] != "4500000001" {
					t.Errorf("collection: got %s, want the one EUR order", toJSON(resp.Result))
				}
				resp, err = c.Do(ctx, sap.Request{Service: svc, Entity: "A_PurchaseOrder('4500000002')"})
				if err != nil {
					t.Fatal(err)
				}
				if got := resp.Result.(obj)["Supplier"]; got != "17300002" {
					t.Errorf("entity: got %s, want Supplier 17300002", toJSON(resp.Result))
				}
				if got := s.srv.Fetches(); got != 0 {
					t.Errorf("reads fetched %d CSRF tokens, want 0", got)
				}

				// A create fetches the token once; later changes reuse it.
				resp, err = c.Do(ctx, sap.Request{Method: "POST", Service: svc, Entity: "A_PurchaseOrder", Body: obj{"Supplier": "17300009", "DocumentCurrency": "EUR"}})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := resp.Status, 201; got != want {
					t.Errorf("create: got status %d, want %d", got, want)
				}
				if got := resp.Result.(obj)["PurchaseOrder"]; got != "4500000003" {
					t.Errorf("create: got %s, want PurchaseOrder 4500000003", toJSON(resp.Result))
				}
				if _, err := c.Do(ctx, sap.Request{Method: "PATCH", Service: svc, Entity: "A_PurchaseOrder('4500000003')", Body: obj{"DocumentCurrency": "CHF"}}); err != nil {
					t.Fatal(err)
				}
				if got := s.srv.Order("4500000003")["DocumentCurrency"]; got != "CHF" {
					t.Errorf("patch: got currency %v, want CHF", got)
				}
				if got := s.srv.Fetches(); got != 1 {
					t.Errorf("two changes fetched %d CSRF tokens, want 1", got)
				}

				// An expired session: 403 x-csrf-token: Required, one refetch.
				s.srv.ExpireSessions()
				if _, err := c.Do(ctx, sap.Request{Method: "DELETE", Service: svc, Entity: "A_PurchaseOrder('4500000003')"}); err != nil {
					t.Fatal(err)
				}
				if s.srv.Order("4500000003") != nil {
					t.Error("delete: the order is still there")
				}
				if got := s.srv.Fetches(); got != 2 {
					t.Errorf("after an expired session: got %d fetches, want 2", got)
				}
			})
		}
	}
}

func TestErrors(t *testing.T) {
	for _, version := range []string{sap.V2, sap.V4} {
		t.Run(version, func(t *testing.T) {
			s := newSetup(t, version, sap.AuthBasic)
			svc := s.srv.Service()
			for _, tc := range []struct {
				name    string
				req     sap.Request
				secrets secretMap
				client  string
				want    string
			}{
				{name: "missing entity", req: sap.Request{Service: svc, Entity: "A_PurchaseOrder('4599999999')"},
					want: "SAP answered 404 Not Found: Purchase order 4599999999 does not exist (ME/006); details: "},
				{name: "business error with details", req: sap.Request{Method: "POST", Service: svc, Entity: "A_PurchaseOrder", Body: obj{"DocumentCurrency": "EUR"}},
					want: "SAP answered 400 Bad Request: Enter a supplier (ME/083); details: "},
				{name: "wrong password", req: sap.Request{Service: svc, Entity: "A_PurchaseOrder"}, secrets: secretMap{"sap-basic": "CARDFLOW:wrong"},
					want: "SAP answered 401 Unauthorized"},
				{name: "wrong password on a change", req: sap.Request{Method: "POST", Service: svc, Entity: "A_PurchaseOrder", Body: obj{}}, secrets: secretMap{"sap-basic": "CARDFLOW:wrong"},
					want: "fetching the CSRF token: GET " + s.srv.URL + svc + "/: SAP answered 401 Unauthorized"},
				{name: "malformed secret", req: sap.Request{Service: svc, Entity: "A_PurchaseOrder"}, secrets: secretMap{"sap-basic": "no-colon"},
					want: `secret "sap-basic": the value must be user:password`},
				{name: "wrong client", req: sap.Request{Service: svc, Entity: "A_PurchaseOrder"}, client: "200",
					want: "SAP answered 401 Unauthorized"},
				{name: "unknown service", req: sap.Request{Service: "/sap/opu/odata/sap/NOPE_SRV", Entity: "X"},
					want: "SAP answered 404 Not Found: No service found for namespace"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					p := *s.profile
					if tc.client != "" {
						p.Client = tc.client
					}
					sec := s.secrets
					if tc.secrets != nil {
						sec = tc.secrets
					}
					c, err := sap.New(&p, s.hc, sec)
					if err != nil {
						t.Fatal(err)
					}
					_, err = c.Do(context.Background(), tc.req)
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Fatalf("got %v, want %q", err, tc.want)
					}
					if strings.Contains(err.Error(), "pa55") || strings.Contains(err.Error(), "wrong") {
						t.Errorf("the error %q holds the password", err)
					}
				})
			}
		})
	}
	// Details are spelled out, and the typed error carries them.
	s := newSetup(t, sap.V2, sap.AuthBasic)
	_, err := s.client(t).Do(context.Background(), sap.Request{Service: s.srv.Service(), Entity: "A_PurchaseOrder('4599999999')"})
	var se *sap.Error
	if !errors.As(err, &se) || se.Status != 404 || se.Code != "ME/006" || len(se.Details) != 1 || se.Details[0] != "Check the purchase order number (/IWBEP/CX_MGW_BUSI_EXCEPTION)" {
		t.Errorf("got %#v, want a 404 *sap.Error with code ME/006 and one detail", err)
	}
}

func TestOAuthErrors(t *testing.T) {
	s := newSetup(t, sap.V4, sap.AuthOAuth2)
	c, _ := sap.New(s.profile, s.hc, secretMap{"sap-oauth": "cardflow-app:not-it"})
	_, err := c.Do(context.Background(), sap.Request{Service: s.srv.Service(), Entity: "PurchaseOrder"})
	want := "OAuth token request to " + s.srv.URL + saptest.TokenPath + " answered 401 Unauthorized: invalid_client: Bad credentials"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestThrottling(t *testing.T) {
	retryDate := time.Date(2026, 11, 2, 9, 0, 4, 0, time.UTC).Format(http.TimeFormat)
	for _, tc := range []struct {
		name      string
		method    string
		status    int
		after     []string
		wantErr   string
		wantWaits []time.Duration
	}{
		{"503 with Retry-After seconds", "GET", 503, []string{"2"}, "", []time.Duration{2 * time.Second}},
		{"429 with Retry-After date", "GET", 429, []string{retryDate}, "", []time.Duration{4 * time.Second}},
		{"429 twice, then success", "GET", 429, []string{"1", "3"}, "", []time.Duration{time.Second, 3 * time.Second}},
		{"bounded: three 503s fail the call", "GET", 503, []string{"1", "1", "1"}, "SAP answered 503 Service Unavailable", []time.Duration{time.Second, time.Second}},
		{"Retry-After beyond the bound is not waited for", "GET", 503, []string{"86400"}, "SAP answered 503 Service Unavailable", nil},
		{"a POST with an Idempotency-Key is retried", "POST", 503, []string{"1"}, "", []time.Duration{time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, sap.V2, sap.AuthBasic)
			c := s.client(t)
			req := sap.Request{Method: tc.method, Service: s.srv.Service(), Entity: "A_PurchaseOrder"}
			if tc.method == "POST" {
				req.Body = obj{"Supplier": "17300001"}
				req.Header = http.Header{outbound.IdempotencyKeyHeader: {outbound.IdempotencyKey("ex", "po", 1)}}
				// Fetch the token first, so the throttling meets the POST.
				if _, err := c.Do(context.Background(), sap.Request{Method: "PATCH", Service: s.srv.Service(), Entity: "A_PurchaseOrder('4500000001')", Body: obj{}}); err != nil {
					t.Fatal(err)
				}
			}
			s.srv.Throttle(tc.status, tc.after...)
			_, err := c.Do(context.Background(), req)
			if (err != nil) != (tc.wantErr != "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want error %q", err, tc.wantErr)
			}
			if fmt.Sprint(s.waits) != fmt.Sprint(tc.wantWaits) {
				t.Errorf("got waits %v, want %v", s.waits, tc.wantWaits)
			}
		})
	}
}

func TestSensitive(t *testing.T) {
	for _, tc := range []struct {
		auth string
		want []string // known values; the rest are the access and CSRF tokens
		n    int
	}{
		{sap.AuthBasic, []string{`{"username": "CARDFLOW", "password": "basic-pa55:word"}`, "basic-pa55:word", "CARDFLOW:basic-pa55:word"}, 4},
		{sap.AuthOAuth2, []string{"cardflow-app:oauth-s3cret", "oauth-s3cret"}, 4},
	} {
		s := newSetup(t, sap.V2, tc.auth)
		seen := map[string]bool{}
		c := s.client(t, sap.WithSensitive(func(v string) { seen[v] = true }))
		if _, err := c.Do(context.Background(), sap.Request{Method: "POST", Service: s.srv.Service(), Entity: "A_PurchaseOrder", Body: obj{"Supplier": "1"}}); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !seen[w] {
				t.Errorf("%s: %q was not reported sensitive", tc.auth, w)
			}
		}
		if len(seen) != tc.n {
			t.Errorf("%s: got %d sensitive values, want %d", tc.auth, len(seen), tc.n)
		}
	}
}

func TestParseProfile(t *testing.T) {
	ok := func() obj {
		return obj{"type": "SAP", "base_url": "https://sap.example.com/", "client": "100", "auth": obj{"type": "basic", "secret": "sap-prod"}}
	}
	with := func(k string, v any) obj { p := ok(); p[k] = v; return p }
	withAuth := func(a obj) obj { p := ok(); p["auth"] = a; return p }
	for _, tc := range []struct {
		in   any
		want string
	}{
		{ok(), ""},
		{with("odata_version", "v4"), ""},
		{withAuth(obj{"type": "oauth2", "secret": "sap/oauth", "token_url": "https://auth.example.com/oauth/token", "scope": "API_PURCHASEORDER"}), ""},
		{"https://sap", "workflow_integrations.erp must be an object"},
		{with("type", "Oracle"), `workflow_integrations.erp.type must be SAP, not "Oracle"`},
		{with("base_url", "sap.example.com"), `workflow_integrations.erp.base_url "sap.example.com" must be an http or https URL`},
		{with("base_url", "https://user:pw@sap.example.com"), "must not hold credentials"},
		{with("base_url", nil), "workflow_integrations.erp.base_url is required"},
		{with("client", 100.0), `workflow_integrations.erp.client must be a string of three digits such as "100"`},
		{with("client", "1000"), `workflow_integrations.erp.client "1000" must be three digits`},
		{with("odata_version", "V3"), `workflow_integrations.erp.odata_version must be V2 or V4, not "V3"`},
		{with("password", "x"), "workflow_integrations.erp.password is not a profile field"},
		{with("auth", nil), "workflow_integrations.erp.auth is required"},
		{withAuth(obj{"type": "bearer", "secret": "x"}), `workflow_integrations.erp.auth.type must be basic or oauth2, not "bearer"`},
		{withAuth(obj{"type": "basic", "secret": "user:pass word"}), "workflow_integrations.erp.auth.secret must name a secret"},
		{withAuth(obj{"type": "basic"}), "workflow_integrations.erp.auth.secret must name a secret"},
		{withAuth(obj{"type": "oauth2", "secret": "x"}), "workflow_integrations.erp.auth.token_url is required for oauth2"},
		{withAuth(obj{"type": "basic", "secret": "x", "token_url": "https://a"}), "token_url and scope belong to oauth2"},
		{withAuth(obj{"type": "basic", "secret": "x", "password": "y"}), "workflow_integrations.erp.auth.password is not an auth field"},
	} {
		p, err := sap.ParseProfile(tc.in)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("ParseProfile(%s): got %v, want no error", toJSON(tc.in), err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("ParseProfile(%s): got %v, want %q", toJSON(tc.in), err, tc.want)
		case tc.want == "" && strings.HasSuffix(p.BaseURL, "/"):
			t.Errorf("ParseProfile(%s): got base URL %q, want it without the trailing slash", toJSON(tc.in), p.BaseURL)
		}
	}
}
