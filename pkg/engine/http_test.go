package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/fakes/saptest"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/outbound"
	"github.com/cardflow/cardflow/pkg/secrets"
)

// allowLoopback lets http and erp steps call test servers on 127.0.0.1,
// which the default policy refuses.
func allowLoopback(t *testing.T) engine.Option {
	t.Helper()
	allow, err := outbound.ParseAllow("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := outbound.New(outbound.Config{Allow: allow, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return engine.WithHTTPClient(c)
}

// secretMap is a store that gives every organization the same secrets:
// for tests of what a step does with a secret, not of whose it reads.
type secretMap map[string]string

func (m secretMap) Get(_ context.Context, k secrets.Key) (string, error) {
	if v, ok := m[k.Name()]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not set: %w", k.Name(), secrets.ErrNotFound)
}

func oneCall(call cardflow.Step) ([]cardflow.Step, []cardflow.Connection) {
	return []cardflow.Step{
			step("start", "trigger", obj{"kind": "REQUEST"}),
			call,
			step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.call.output }}"}),
		}, []cardflow.Connection{
			{From: "start", To: "call"}, {From: "call", To: "done"},
		}
}

func TestOutboundPolicy(t *testing.T) { onEachStore(t, testOutboundPolicy) }

func testOutboundPolicy(t *testing.T, b backend) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		mu.Unlock()
		if r.URL.Path == "/slow" {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		if r.URL.Path == "/big" {
			w.Write([]byte(strings.Repeat("x", outbound.DefaultMaxBody+1)))
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name      string
		allow     bool
		url       string
		wantErr   string
		wantCalls int
	}{
		{"loopback refused by default", false, srv.URL + "/a", "refused to connect to 127.0.0.1: it is a loopback address", 0},
		{"metadata refused", false, "http://169.254.169.254/latest/meta-data/", "refused to connect to 169.254.169.254: it is a cloud metadata address", 0},
		{"allow-listed loopback", true, srv.URL + "/a", "", 1},
		{"response size cap", true, srv.URL + "/big", "the response is larger than 1024 KB", 1},
		{"timeout", true, srv.URL + "/slow", "GET " + srv.URL + "/slow: no answer within 1s (config.timeout)", 1},
		{"not http", false, "ftp://example.com/x", `url "ftp://example.com/x" is not an http or https URL`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			calls = 0
			mu.Unlock()
			var opts []engine.Option
			if tc.allow {
				opts = append(opts, allowLoopback(t))
			}
			f := newFixture(t, b, opts...)
			steps, conns := oneCall(step("call", "http", obj{"method": "GET", "url": tc.url, "timeout": "PT1S"}))
			ref := f.start(steps, conns, obj{}, nil)
			res := f.advance(ref)
			want := cardflow.ExecSucceeded
			if tc.wantErr != "" {
				want = cardflow.ExecFailed
			}
			if res.Status != want {
				t.Fatalf("got %+v, want %s", res, want)
			}
			if tc.wantErr != "" {
				if got, _ := f.get(ref).WorkflowOutputPayload["error"].(string); !strings.Contains(got, tc.wantErr) {
					t.Errorf("got output %s, want it to say %q", got, tc.wantErr)
				}
			}
			mu.Lock()
			n := calls
			mu.Unlock()
			if n != tc.wantCalls {
				t.Errorf("got %d calls, want %d", n, tc.wantCalls)
			}
		})
	}
}

func TestHTTPAuthAndIdempotency(t *testing.T) { onEachStore(t, testHTTPAuthAndIdempotency) }

func testHTTPAuthAndIdempotency(t *testing.T, b backend) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key")+"|"+r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		w.Header().Set("Set-Cookie", "session=abc")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	sec := secretMap{"bot-token": "tok-123456", "bot-basic": "bot:pw-7890", "bot-key": "key-abcdef"}
	for _, tc := range []struct {
		name    string
		auth    obj
		extra   obj
		want    string
		wantKey bool
	}{
		{"bearer", obj{"type": "bearer", "secret": "bot-token"}, nil, "Bearer tok-123456||", true},
		{"basic", obj{"type": "basic", "secret": "bot-basic"}, nil, "Basic Ym90OnB3LTc4OTA=||", true},
		{"header", obj{"type": "header", "secret": "bot-key", "header": "X-API-Key"}, nil, "|key-abcdef|", true},
		{"no key when turned off", nil, obj{"idempotency_key": false}, "||", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			f := newFixture(t, b, allowLoopback(t), engine.WithSecrets(sec))
			cfg := obj{"method": "POST", "url": srv.URL, "body": obj{"a": 1}}
			if tc.auth != nil {
				cfg["auth"] = tc.auth
			}
			for k, v := range tc.extra {
				cfg[k] = v
			}
			steps, conns := oneCall(step("call", "http", cfg))
			var refs []cardflow.ExecutionRef
			for i := 0; i < 2; i++ {
				ref := f.start(steps, conns, obj{}, nil)
				if res := f.advance(ref); res.Status != cardflow.ExecSucceeded {
					t.Fatalf("got %+v, want SUCCEEDED", res)
				}
				refs = append(refs, ref)
			}
			if len(got) != 2 {
				t.Fatalf("got %d calls, want 2", len(got))
			}
			for i, g := range got {
				auth, key, _ := strings.Cut(g, "|"+strings.Split(tc.want, "|")[1]+"|")
				if want := strings.Split(tc.want, "|")[0]; auth != want {
					t.Errorf("call %d: got auth %q, want %q", i, auth, want)
				}
				if (key != "") != tc.wantKey {
					t.Errorf("call %d: got Idempotency-Key %q, want one: %v", i, key, tc.wantKey)
				}
			}
			if tc.wantKey && got[0] == got[1] {
				t.Errorf("two executions sent the same Idempotency-Key: %q", got[0])
			}
			ex := f.get(refs[0])
			out := toJSON(ex.State.Outputs["call"]) + toJSON(ex.CondensedLogs)
			for _, v := range []string{"tok-123456", "pw-7890", "key-abcdef", "Ym90OnB3LTc4OTA", "session=abc"} {
				if strings.Contains(out, v) {
					t.Errorf("the recorded step holds %q: %s", v, out)
				}
			}
		})
	}
}

func TestERPStep(t *testing.T) { onEachStore(t, testERPStep) }

func testERPStep(t *testing.T, b backend) {
	for _, version := range []string{"V2", "V4"} {
		t.Run(version, func(t *testing.T) {
			srv := saptest.New(saptest.Config{Version: version, Client: "100", User: "CARDFLOW", Password: "Welcome-2026"})
			defer srv.Close()
			f := newFixture(t, b, allowLoopback(t), engine.WithSecrets(secretMap{"sap-test": "CARDFLOW:Welcome-2026"}))
			profile := obj{"erp": obj{"type": "SAP", "base_url": srv.URL, "client": "100", "odata_version": version, "auth": obj{"type": "basic", "secret": "sap-test"}}}
			steps := []cardflow.Step{
				step("start", "trigger", obj{"kind": "REQUEST"}),
				step("find", "erp", obj{"service": srv.Service(), "entity": "A_PurchaseOrder", "query": obj{"$filter": "DocumentCurrency eq '{{ input.currency }}'"}}),
				step("create", "erp", obj{"method": "POST", "service": srv.Service(), "entity": "A_PurchaseOrder",
					"body": obj{"Supplier": "{{ steps.find.output.body[0].Supplier }}", "DocumentCurrency": "{{ input.currency }}"}}),
				step("read", "erp", obj{"service": srv.Service(), "entity": "A_PurchaseOrder('{{ steps.create.output.body.PurchaseOrder }}')"}),
				step("done", "end", obj{"status": "SUCCEEDED", "output": obj{"po": "{{ steps.read.output.body.PurchaseOrder }}", "supplier": "{{ steps.read.output.body.Supplier }}"}}),
				step("sapfailed", "end", obj{"status": "FAILED", "output": "{{ steps.read.output }}"}),
			}
			conns := []cardflow.Connection{
				{From: "start", To: "find"}, {From: "find", To: "create"}, {From: "create", To: "read"},
				{From: "read", To: "done"}, {From: "read", To: "sapfailed", On: "error"},
			}
			ref := f.start(steps, conns, obj{"currency": "USD"}, profile)
			if res := f.advance(ref); res.Status != cardflow.ExecSucceeded {
				t.Fatalf("got %+v (%s), want SUCCEEDED", res, toJSON(f.get(ref).WorkflowOutputPayload))
			}
			if got, want := toJSON(f.get(ref).WorkflowOutputPayload), `{"po":"4500000003","supplier":"17300002"}`; got != want {
				t.Errorf("got output %s, want %s", got, want)
			}
			if got := srv.Fetches(); got != 1 {
				t.Errorf("got %d CSRF fetches, want 1", got)
			}

			// A missing record leaves by the error exit with SAP's message.
			steps[3] = step("read", "erp", obj{"service": srv.Service(), "entity": "A_PurchaseOrder('4599999999')"})
			ref = f.start(steps, conns, obj{"currency": "EUR"}, profile)
			if res := f.advance(ref); res.Status != cardflow.ExecFailed {
				t.Fatalf("got %+v, want FAILED by the error exit", res)
			}
			ex := f.get(ref)
			if got := toJSON(ex.WorkflowOutputPayload); !strings.Contains(got, `"status":404`) {
				t.Errorf("got output %s, want the 404 answer", got)
			}
			var reason string
			for _, e := range ex.WorkflowEventLog.Events {
				if e.Type == cardflow.EventStepFailed {
					reason = e.Message
				}
			}
			if want := "SAP answered 404 Not Found: Purchase order 4599999999 does not exist (ME/006)"; !strings.Contains(reason, want) {
				t.Errorf("got step failure %q, want it to say %q", reason, want)
			}
		})
	}
}

// TestERPStepWithoutProfile: a version saved before erp steps needed a
// profile runs, and its erp step fails, leaving by its error exit.
func TestERPStepWithoutProfile(t *testing.T) { onEachStore(t, testERPStepWithoutProfile) }

func testERPStepWithoutProfile(t *testing.T, b backend) {
	f := newFixture(t, b)
	defs := []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("call", "erp", obj{"service": "/sap/opu/odata/sap/X_SRV", "entity": "A"}),
		step("done", "end", obj{"status": "SUCCEEDED"}),
		step("failed", "end", obj{"status": "FAILED", "output": "{{ steps.call.output }}"}),
	}
	conns := []cardflow.Connection{{From: "start", To: "call"}, {From: "call", To: "done"}, {From: "call", To: "failed", On: "error"}}
	ref := f.startUnchecked(defs, conns, obj{}, nil)
	if res := f.advance(ref); res.Status != cardflow.ExecFailed {
		t.Fatalf("got %+v, want FAILED by the error exit", res)
	}
	ex := f.get(ref)
	if got := ex.WorkflowCurrentState; got != "Step failed" {
		t.Errorf("got current state %q, want Step failed", got)
	}
	if got := toJSON(ex.WorkflowOutputPayload); !strings.Contains(got, "workflow_integrations.erp") {
		t.Errorf("got output %s, want the missing profile named", got)
	}
}

func TestCheckIntegrations(t *testing.T) { onEachStore(t, testCheckIntegrations) }

func testCheckIntegrations(t *testing.T, b backend) {
	f := newFixture(t, b)
	erpStep := func() []cardflow.Step {
		s, _ := oneCall(step("call", "erp", obj{"service": "/sap/opu/odata/sap/X_SRV", "entity": "A"}))
		return s
	}
	httpStep := func(cfg obj) []cardflow.Step {
		c := obj{"method": "GET", "url": "https://example.com"}
		for k, v := range cfg {
			c[k] = v
		}
		s, _ := oneCall(step("call", "http", c))
		return s
	}
	_, conns := oneCall(cardflow.Step{})
	good := obj{"type": "SAP", "base_url": "https://sap.example.com", "client": "100", "auth": obj{"type": "basic", "secret": "sap-prod"}}
	for _, tc := range []struct {
		name         string
		steps        []cardflow.Step
		integrations obj
		want         string
	}{
		{"erp with profile", erpStep(), obj{"erp": good}, ""},
		{"erp without profile", erpStep(), nil, "an erp step needs workflow_integrations.erp"},
		{"bad profile", erpStep(), obj{"erp": obj{"type": "SAP", "base_url": "https://sap.example.com", "auth": obj{"type": "basic", "secret": "user:pw"}}}, "workflow_integrations.erp.auth.secret must name a secret"},
		{"bad profile without erp steps", httpStep(nil), obj{"erp": obj{"type": "SAP"}}, "workflow_integrations.erp.base_url is required"},
		{"http auth", httpStep(obj{"auth": obj{"type": "bearer", "secret": "bot"}}), nil, ""},
		{"http auth type", httpStep(obj{"auth": obj{"type": "digest", "secret": "bot"}}), nil, "config.auth.type must be basic, bearer or header"},
		{"http auth header", httpStep(obj{"auth": obj{"type": "header", "secret": "bot", "header": "X Key"}}), nil, "config.auth.header must name the header"},
		{"http auth secret value", httpStep(obj{"auth": obj{"type": "bearer", "secret": "eyJ hbGciOi"}}), nil, "config.auth.secret must name a secret"},
		{"idempotency_key", httpStep(obj{"idempotency_key": "yes"}), nil, "config.idempotency_key must be true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &cardflow.Workflow{OrganizationID: f.org, WorkflowName: "check", WorkflowSteps: tc.steps, WorkflowConnections: conns, WorkflowIntegrations: tc.integrations}
			err := f.eng.Check(w)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			if cardflow.ErrorCode(err) != cardflow.EINVALID || !strings.Contains(cardflow.ErrorMessage(err), tc.want) {
				t.Errorf("got %v, want VALIDATION_ERROR saying %q", err, tc.want)
			}
		})
	}
}

// TestCheckCallLimits: saving refuses an http or erp step whose timeout is
// over the cap, or whose url has a placeholder before its host, naming the
// step.
func TestCheckCallLimits(t *testing.T) { onEachStore(t, testCheckCallLimits) }

func testCheckCallLimits(t *testing.T, b backend) {
	f := newFixture(t, b)
	profile := obj{"erp": obj{"type": "SAP", "base_url": "https://sap.example.com", "client": "100", "auth": obj{"type": "basic", "secret": "sap-prod"}}}
	for _, tc := range []struct {
		name string
		call cardflow.Step
		want string
	}{
		{"http timeout", step("call", "http", obj{"method": "GET", "url": "https://example.com", "timeout": "PT5M"}),
			`workflow_steps[1] (id "call"): config.timeout PT5M is longer than 2 minutes, the longest a call may wait`},
		{"erp timeout", step("call", "erp", obj{"service": "/sap/opu/odata/sap/X_SRV", "entity": "A", "timeout": "PT10M"}),
			`workflow_steps[1] (id "call"): config.timeout PT10M is longer than 2 minutes, the longest a call may wait`},
		{"url placeholder before the host", step("call", "http", obj{"method": "GET", "url": "{{ input.base }}/orders"}),
			`workflow_steps[1] (call): config.url: a placeholder stands before "://"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, conns := oneCall(tc.call)
			err := f.eng.Check(&cardflow.Workflow{OrganizationID: f.org, WorkflowName: "check", WorkflowSteps: steps, WorkflowConnections: conns, WorkflowIntegrations: profile})
			if cardflow.ErrorCode(err) != cardflow.EINVALID || !strings.Contains(cardflow.ErrorMessage(err), tc.want) {
				t.Errorf("got %v, want VALIDATION_ERROR saying %q", err, tc.want)
			}
		})
	}
}

// failingTransport fails every call with err, as the network would.
type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// TestStepErrorsNameNoInternalAddress: a failed call's error names the host
// the workflow asked for and says what went wrong, never the resolver
// that answered nor the address the host resolved to.
func TestStepErrorsNameNoInternalAddress(t *testing.T) {
	onEachStore(t, testStepErrorsNameNoInternalAddress)
}

func testStepErrorsNameNoInternalAddress(t *testing.T, b backend) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 443},
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no such host", &net.DNSError{Err: "no such host", Name: "sap.internal.example", Server: "10.0.0.2:53", IsNotFound: true},
			"the name sap.internal.example was not found in DNS"},
		{"resolver timeout", &net.DNSError{Err: "i/o timeout", Name: "sap.internal.example", Server: "10.0.0.2:53", IsTimeout: true},
			"looking up the name sap.internal.example in DNS timed out"},
		{"connection refused", refused, "the connection was refused"},
		{"unknown dial error", &net.OpError{Op: "dial", Net: "tcp", Source: &net.TCPAddr{IP: net.ParseIP("10.0.0.9"), Port: 40000},
			Addr: &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 443}, Err: errors.New("10.1.2.3:443 via fe80::1%eth0 is odd")}, "the connection failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, b, engine.WithHTTPClient(&http.Client{Transport: failingTransport{tc.err}}))
			steps, conns := oneCall(step("call", "http", obj{"method": "GET", "url": "https://sap.internal.example/orders"}))
			ref := f.start(steps, conns, obj{}, nil)
			if res := f.advance(ref); res.Status != cardflow.ExecFailed {
				t.Fatalf("got %+v, want FAILED", res)
			}
			got, _ := f.get(ref).WorkflowOutputPayload["error"].(string)
			if !strings.Contains(got, "GET https://sap.internal.example/orders: "+tc.want) {
				t.Errorf("got error %q, want the host asked for and %q", got, tc.want)
			}
			for _, internal := range []string{"10.0.0.2", "10.1.2.3", "10.0.0.9", "fe80::1", ":53"} {
				if strings.Contains(got, internal) {
					t.Errorf("got error %q, which names the internal address %s", got, internal)
				}
			}
		})
	}
}
