package steps_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/cardflow/cardflow/internal/fakes/saptest"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/outbound"
	"github.com/cardflow/cardflow/pkg/steps"
)

// secretMap gives a step the secrets it names.
type secretMap map[string]string

func (m secretMap) Secret(_ context.Context, name string) (string, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not available", name)
}

// runCall compiles a step of kind and runs it once with input, through an
// outbound client that lets it reach test servers on 127.0.0.1 and refuses
// what the default policy refuses besides.
func runCall(t *testing.T, kind steps.Kind, config, input, integrations obj, sec secretMap) steps.Outcome {
	t.Helper()
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := kind.ValidateConfig(config, integrations); err != nil {
		t.Fatalf("validate: %v", err)
	}
	step, err := kind.Compile(env, config)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	allow, err := outbound.ParseAllow("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	client, err := outbound.New(outbound.Config{Allow: allow, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ex := &cardflow.Execution{WorkflowExecutionID: "ex-1", OrganizationID: "org-a",
		State: cardflow.ExecutionState{StepID: "call", StepsRun: 1, Integrations: integrations}}
	return step.Run(context.Background(), &steps.Run{
		Execution: ex, StepID: "call", Vars: expr.Vars{Input: input},
		Client: client, Secrets: sec, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
}

// receiver is an HTTP server that records the request target of every call
// as it arrived: the escaped path and the query.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	targets []string
	queries []url.Values
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	// A bare handler, not a ServeMux, which would redirect a path with
	// dot segments to its cleaned form.
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.targets = append(r.targets, req.RequestURI)
		r.queries = append(r.queries, req.URL.Query())
		r.mu.Unlock()
		w.Write([]byte("ok"))
	}))
	t.Cleanup(r.Close)
	return r
}

// take returns the calls received since the last take.
func (r *receiver) take() ([]string, []url.Values) {
	r.mu.Lock()
	defer r.mu.Unlock()
	targets, queries := r.targets, r.queries
	r.targets, r.queries = nil, nil
	return targets, queries
}

// hostile are values trigger input could hold to change a URL's path or
// query, or its host.
var hostile = []struct {
	name, value      string
	wantPath, wantQ  string // the escaped path segment and query value sent
	wantHTTPRefusal  string // "" when the http step calls
	wantODataKeyPath string // the key as sent in A_PurchaseOrder('...')
}{
	{name: "parent directory", value: "../admin", wantPath: "..%2Fadmin", wantQ: "..%2Fadmin", wantODataKeyPath: "..%2Fadmin"},
	{name: "query", value: "a?x=1", wantPath: "a%3Fx=1", wantQ: "a%3Fx%3D1", wantODataKeyPath: "a%3Fx=1"},
	{name: "second parameter", value: "a&admin=true", wantPath: "a&admin=true", wantQ: "a%26admin%3Dtrue", wantODataKeyPath: "a&admin=true"},
	{name: "fragment", value: "a#f", wantPath: "a%23f", wantQ: "a%23f", wantODataKeyPath: "a%23f"},
	{name: "user info", value: "a@evil.com", wantPath: "a@evil.com", wantQ: "a%40evil.com", wantODataKeyPath: "a@evil.com"},
	{name: "quote", value: "O'Brien", wantPath: "O%27Brien", wantQ: "O%27Brien", wantODataKeyPath: "O%27%27Brien"},
	{name: "quote closing the key", value: "1')/to_Supplier('x", wantPath: "1%27%29%2Fto_Supplier%28%27x", wantQ: "1%27%29%2Fto_Supplier%28%27x", wantODataKeyPath: "1%27%27%29%2Fto_Supplier%28%27%27x"},
	{name: "unicode", value: "Zürich 東京", wantPath: "Z%C3%BCrich%20%E6%9D%B1%E4%BA%AC", wantQ: "Z%C3%BCrich+%E6%9D%B1%E4%BA%AC", wantODataKeyPath: "Z%C3%BCrich%20%E6%9D%B1%E4%BA%AC"},
	{name: "spaces and a plus", value: " a b+c ", wantPath: "%20a%20b+c%20", wantQ: "+a+b%2Bc+", wantODataKeyPath: "%20a%20b+c%20"},
	{name: "percent", value: "%2e%2e", wantPath: "%252e%252e", wantQ: "%252e%252e", wantODataKeyPath: "%252e%252e"},
	{name: "slash", value: "a/b", wantPath: "a%2Fb", wantQ: "a%2Fb", wantODataKeyPath: "a%2Fb"},
	{name: "dot dot", value: "..", wantHTTPRefusal: `has a segment "..", which would move the call to another path`, wantQ: "..", wantODataKeyPath: ".."},
	{name: "dot", value: ".", wantHTTPRefusal: `has a segment ".", which would move the call to another path`, wantQ: ".", wantODataKeyPath: "."},
}

// TestHTTPURLValues sends hostile values through an http step's url, in a
// path segment and in the query, and checks the exact request the server
// got: each value is one path segment and one query value, as it was.
func TestHTTPURLValues(t *testing.T) {
	t.Parallel()
	srv := newReceiver(t)
	config := obj{"method": "GET", "url": srv.URL + "/items/{{ input.v }}/details?q={{ input.v }}&n=1"}
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			out := runCall(t, steps.HTTP, config, obj{"v": tc.value}, nil, nil)
			targets, queries := srv.take()
			if tc.wantHTTPRefusal != "" {
				if !strings.Contains(out.Reason, tc.wantHTTPRefusal) {
					t.Errorf("got reason %q, want it to say %q", out.Reason, tc.wantHTTPRefusal)
				}
				if len(targets) != 0 {
					t.Errorf("got calls %q, want none", targets)
				}
				return
			}
			if out.Reason != "" {
				t.Fatalf("got reason %q, want a call", out.Reason)
			}
			if len(targets) != 1 {
				t.Fatalf("got calls %q, want 1", targets)
			}
			if got, want := targets[0], "/items/"+tc.wantPath+"/details?q="+tc.wantQ+"&n=1"; got != want {
				t.Errorf("got target %s, want %s", got, want)
			}
			if got := queries[0]; got.Get("q") != tc.value || len(got) != 2 {
				t.Errorf("got query %v, want q=%q and n alone", got, tc.value)
			}
		})
	}
}

// TestHTTPURLPlaceholders: a placeholder in the host must be a name or a
// port; one that is the whole url is taken as it is and still goes
// through the outbound address guard.
func TestHTTPURLPlaceholders(t *testing.T) {
	t.Parallel()
	srv := newReceiver(t)
	host, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	for _, tc := range []struct {
		name       string
		url        string
		input      obj
		wantTarget string
		wantReason string
	}{
		{"host and port", "http://{{ input.host }}:{{ input.port }}/x", obj{"host": host, "port": port}, "/x", ""},
		{"user info in the host", "http://{{ input.host }}:{{ input.port }}/x", obj{"host": "evil.example@" + host, "port": port}, "",
			`"evil.example@127.0.0.1" cannot stand in the host: a value there may hold letters, digits, - and . only`},
		{"path in the host", "http://{{ input.host }}:{{ input.port }}/x", obj{"host": host, "port": port + "/admin?"}, "", "cannot stand in the host"},
		{"whole url", "{{ input.callback_url }}", obj{"callback_url": srv.URL + "/cb/a%2Fb?x=1&y=%26"}, "/cb/a%2Fb?x=1&y=%26", ""},
		{"whole url with spaces around", " {{ input.callback_url }} ", obj{"callback_url": srv.URL + "/cb"}, "/cb", ""},
		{"whole url to the metadata address", "{{ input.callback_url }}", obj{"callback_url": "http://169.254.169.254/latest/meta-data/"}, "",
			"refused to connect to 169.254.169.254: it is a cloud metadata address"},
		{"whole url not http", "{{ input.callback_url }}", obj{"callback_url": "file:///etc/passwd"}, "", `url "file:///etc/passwd" is not an http or https URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runCall(t, steps.HTTP, obj{"method": "GET", "url": tc.url}, tc.input, nil, nil)
			targets, _ := srv.take()
			if tc.wantReason != "" {
				if !strings.Contains(out.Reason, tc.wantReason) {
					t.Errorf("got reason %q, want it to say %q", out.Reason, tc.wantReason)
				}
				if len(targets) != 0 {
					t.Errorf("got calls %q, want none", targets)
				}
				return
			}
			if out.Reason != "" || len(targets) != 1 || targets[0] != tc.wantTarget {
				t.Errorf("got reason %q and calls %q, want one call of %s", out.Reason, targets, tc.wantTarget)
			}
		})
	}
}

// TestERPEntityValues sends hostile values as the key of an OData entity
// to the SAP stand-in: each is quoted as OData quotes a string, then
// escaped as a path segment, and SAP reads it as the one key it was.
func TestERPEntityValues(t *testing.T) {
	t.Parallel()
	srv := saptest.New(saptest.Config{Client: "100", User: "CARDFLOW", Password: "Welcome-2026"})
	t.Cleanup(srv.Close)
	profile := obj{"erp": obj{"type": "SAP", "base_url": srv.URL, "client": "100", "auth": obj{"type": "basic", "secret": "sap-test"}}}
	sec := secretMap{"sap-test": "CARDFLOW:Welcome-2026"}
	config := obj{"service": srv.Service(), "entity": "A_PurchaseOrder('{{ input.po }}')", "query": obj{"$select": "{{ input.po }}"}}
	seen := 0
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			out := runCall(t, steps.ERP, config, obj{"po": tc.value}, profile, sec)
			calls := srv.Calls()[seen:]
			seen += len(calls)
			// Spaces go as %20: OData has no + for a space.
			wantQ := strings.ReplaceAll(url.Values{"$select": {tc.value}, "sap-client": {"100"}}.Encode(), "+", "%20")
			want := fmt.Sprintf("GET %s/A_PurchaseOrder('%s')?%s 404", srv.Service(), tc.wantODataKeyPath, wantQ)
			if len(calls) != 1 || calls[0] != want {
				t.Fatalf("got calls %q, want %q", calls, want)
			}
			if msg := "Purchase order " + tc.value + " does not exist"; !strings.Contains(out.Reason, msg) {
				t.Errorf("got reason %q, want SAP to have read the key as %q", out.Reason, tc.value)
			}
		})
	}

	// An order that exists is found by its key.
	out := runCall(t, steps.ERP, config, obj{"po": "4500000001"}, profile, sec)
	if body, _ := out.Output.(map[string]any)["body"].(map[string]any); out.Reason != "" || body["PurchaseOrder"] != "4500000001" {
		t.Errorf("got reason %q and output %v, want purchase order 4500000001", out.Reason, out.Output)
	}
}

// TestERPEntityBareValues: outside quotes a value must be a plain token,
// since OData reads %28 and %27 as ( and ', and may not be a dot segment.
func TestERPEntityBareValues(t *testing.T) {
	t.Parallel()
	srv := saptest.New(saptest.Config{Client: "100", User: "CARDFLOW", Password: "Welcome-2026"})
	t.Cleanup(srv.Close)
	profile := obj{"erp": obj{"type": "SAP", "base_url": srv.URL, "client": "100", "auth": obj{"type": "basic", "secret": "sap-test"}}}
	sec := secretMap{"sap-test": "CARDFLOW:Welcome-2026"}
	seen := 0
	for _, tc := range []struct {
		name, entity, value string
		wantCall            string // the path under the service; "" for none
		wantReason          string
	}{
		{"number key", "A_PurchaseOrder({{ input.v }})", "4500000001", "/A_PurchaseOrder(4500000001)", ""},
		{"entity set", "{{ input.v }}", "A_PurchaseOrder", "/A_PurchaseOrder", ""},
		{"key and navigation", "A_PurchaseOrder({{ input.v }})", "1)/to_Supplier(2", "",
			`entity: "1)/to_Supplier(2" cannot stand outside quotes: a value there may hold letters, digits and . _ : + - only`},
		{"escaped parenthesis", "A_PurchaseOrder({{ input.v }})", "1%29", "", "cannot stand outside quotes"},
		{"quote", "A_PurchaseOrder({{ input.v }})", "'1'", "", "cannot stand outside quotes"},
		{"another service", "{{ input.v }}", "../../API_SUPPLIER_SRV/A_Supplier", "", "cannot stand outside quotes"},
		{"dot dot", "{{ input.v }}/x", "..", "", `entity: the path "../x" has a segment "..", which would move the call to another path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runCall(t, steps.ERP, obj{"service": srv.Service(), "entity": tc.entity}, obj{"v": tc.value}, profile, sec)
			calls := srv.Calls()[seen:]
			seen += len(calls)
			if tc.wantReason != "" {
				if !strings.Contains(out.Reason, tc.wantReason) {
					t.Errorf("got reason %q, want it to say %q", out.Reason, tc.wantReason)
				}
				if len(calls) != 0 {
					t.Errorf("got calls %q, want none", calls)
				}
				return
			}
			want := "GET " + srv.Service() + tc.wantCall + "?sap-client=100 200"
			if out.Reason != "" || len(calls) != 1 || calls[0] != want {
				t.Errorf("got reason %q and calls %q, want %q", out.Reason, calls, want)
			}
		})
	}
}

// TestERPODataOptionValues: in a system query option such as $filter a
// value inside quotes is quoted as OData quotes a string, outside quotes
// it must be a plain token, and an option that is one placeholder is
// taken as it is.
func TestERPODataOptionValues(t *testing.T) {
	t.Parallel()
	srv := saptest.New(saptest.Config{Client: "100", User: "CARDFLOW", Password: "Welcome-2026"})
	t.Cleanup(srv.Close)
	profile := obj{"erp": obj{"type": "SAP", "base_url": srv.URL, "client": "100", "auth": obj{"type": "basic", "secret": "sap-test"}}}
	sec := secretMap{"sap-test": "CARDFLOW:Welcome-2026"}
	seen := 0
	for _, tc := range []struct {
		name, option, value string
		wantOption          string // the option as sent; "" when the step fails
		wantReason          string
	}{
		{"quoted value", "PurchaseOrder eq '{{ input.v }}'", "4500000001", "PurchaseOrder eq '4500000001'", ""},
		{"quote in a quoted value", "PurchaseOrder eq '{{ input.v }}'", "x' or PurchaseOrder ne 'y",
			"PurchaseOrder eq 'x'' or PurchaseOrder ne ''y'", ""},
		{"ampersand stays in the option", "Supplier eq '{{ input.v }}'", "A&$top=1", "Supplier eq 'A&$top=1'", ""},
		{"bare number", "NetAmount gt {{ input.v }}", "1000", "NetAmount gt 1000", ""},
		{"bare expression", "NetAmount gt {{ input.v }}", "0 or true", "",
			`query.$filter: "0 or true" cannot stand outside quotes: a value there may hold letters, digits and . _ : + - only; quote a string, as in PurchaseOrder eq '{{ input.po }}'`},
		{"whole option", "{{ input.v }}", "PurchaseOrder eq '4500000001'", "PurchaseOrder eq '4500000001'", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := obj{"service": srv.Service(), "entity": "A_PurchaseOrder", "query": obj{"$filter": tc.option, "$top": 5}}
			out := runCall(t, steps.ERP, config, obj{"v": tc.value}, profile, sec)
			calls := srv.Calls()[seen:]
			seen += len(calls)
			if tc.wantReason != "" {
				if out.Reason != tc.wantReason {
					t.Errorf("got reason %q, want %q", out.Reason, tc.wantReason)
				}
				if len(calls) != 0 {
					t.Errorf("got calls %q, want none", calls)
				}
				return
			}
			q := strings.ReplaceAll(url.Values{"$filter": {tc.wantOption}, "$top": {"5"}, "sap-client": {"100"}}.Encode(), "+", "%20")
			want := "GET " + srv.Service() + "/A_PurchaseOrder?" + q + " 200"
			if len(calls) != 1 || calls[0] != want {
				t.Errorf("got reason %q and calls %q, want %q", out.Reason, calls, want)
			}
		})
	}
}
