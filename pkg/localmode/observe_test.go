package localmode

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/telemetry/otlp"
)

// span is what the test reads of an exported span.
type span struct {
	name, traceID, executionID string
}

// otlpReceiver is an OTLP/HTTP collector: it decodes each export request
// (protobuf) and keeps its spans.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []span
}

func (rc *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := &coltracepb.ExportTraceServiceRequest{}
	if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(body, req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := span{name: s.Name, traceID: hex.EncodeToString(s.TraceId)}
				for _, a := range s.Attributes {
					if a.Key == "cardflow.workflow_execution_id" {
						sp.executionID = a.Value.GetStringValue()
					}
				}
				rc.spans = append(rc.spans, sp)
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Write(b)
}

// TestMetricsAndTraces runs an execution through the HTTP API, its wait
// resumed by a second request: an OTLP collector sees one trace spanning
// the trigger and every step, and /metrics counts the start, the end and
// the steps.
func TestMetricsAndTraces(t *testing.T) {
	rc := &otlpReceiver{}
	collector := httptest.NewServer(rc)
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	tp, err := otlp.New(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	store, err := boltstore.Open(filepath.Join(t.TempDir(), StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewStack(store, store, Config{Tracer: tp})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	svc := st.Service
	api, err := httpapi.New(svc, httpapi.KeyAuthenticator{Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(withMetrics(api, st.Metrics.Handler(), "metrics-token-for-tests"))
	defer srv.Close()

	ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{OrganizationID: "org-a", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "test"})
	wf, err := svc.SaveWorkflow(ctx, app.SaveWorkflowInput{
		WorkflowName: "traced",
		WorkflowSteps: []cardflow.Step{
			{ID: "start", Name: "Start", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
			{ID: "shape", Name: "Shape", Type: "transform", Config: map[string]any{"output": map[string]any{"n": "{{ input.n }}"}}},
			{ID: "hold", Name: "Hold", Type: "wait", Config: map[string]any{}},
			{ID: "done", Name: "Done", Type: "end", Config: map[string]any{"status": "SUCCEEDED"}},
		},
		WorkflowConnections: []cardflow.Connection{{From: "start", To: "shape"}, {From: "shape", To: "hold"}, {From: "hold", To: "done"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishWorkflow(ctx, wf.WorkflowID, wf.WorkflowVersion); err != nil {
		t.Fatal(err)
	}
	key, _, err := svc.CreateKey(context.Background(), app.CreateKeyInput{OrganizationID: "org-a", WorkspaceID: "ws", Scopes: cardflow.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, body string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("x-api-key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s %s: got %d %v", method, path, resp.StatusCode, out)
		}
		return out
	}
	id, _ := call("POST", "/v1/workflows/triggerworkflow/"+wf.WorkflowID+"?process_id=PO-1", `{"n": 1}`)["service_execution_id"].(string)
	wait := func(status string) map[string]any {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			item, _ := call("GET", "/v1/workflows/waitForExecution?until=change&timeout=1&workflow_id="+wf.WorkflowID+"&workflow_execution_id="+id, "")["item"].(map[string]any)
			if item["status"] == status {
				return item
			}
		}
		t.Fatalf("execution %s never got %s", id, status)
		return nil
	}
	wait(cardflow.ExecWaiting)
	call("POST", "/v1/workflows/resumeworkflow/PO-1", `{"source": "SAP"}`)
	item := wait(cardflow.ExecSucceeded)

	// A waiter hears of the end once it is stored, which may be before the
	// runner tells the observer; the observer ends the span before it
	// counts, so once the count shows, shutting down exports the span.
	metrics := func() []byte {
		req, _ := http.NewRequest("GET", srv.URL+MetricsPath, nil)
		req.Header.Set("Authorization", "Bearer metrics-token-for-tests")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET /metrics without a key: got %d, want 200", resp.StatusCode)
		}
		body, _ := io.ReadAll(resp.Body)
		return body
	}
	finished := []byte(`cardflow_executions_finished_total{status="SUCCEEDED"} 1`)
	testenv.WaitFor(t, "the finished execution in the metrics", func() bool { return bytes.Contains(metrics(), finished) })

	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatalf("flush the spans: %v", err)
	}
	rc.mu.Lock()
	traces, names := map[string]bool{}, map[string]bool{}
	for _, s := range rc.spans {
		if s.executionID == id {
			traces[s.traceID] = true
			names[s.name] = true
		}
	}
	rc.mu.Unlock()
	if len(traces) != 1 {
		t.Errorf("trace ids of the execution's spans: got %d (%v), want 1", len(traces), traces)
	}
	want := []string{"trigger " + wf.WorkflowID, "ended " + cardflow.ExecSucceeded}
	logs, _ := item["condensed_logs"].(map[string]any)
	for stepID := range logs {
		want = append(want, "step "+stepID)
	}
	if len(logs) < 3 {
		t.Errorf("steps in the execution's logs: got %d, want at least shape, hold and done", len(logs))
	}
	for _, n := range want {
		if !names[n] {
			t.Errorf("span %q: missing from the execution's trace; got %v", n, names)
		}
	}

	body := metrics()
	for _, line := range []string{
		`cardflow_executions_started_total{trigger_type="REQUEST"} 1`,
		`cardflow_executions_finished_total{status="SUCCEEDED"} 1`,
		`cardflow_step_duration_seconds_count{kind="transform",outcome="succeeded"} 1`,
		`cardflow_step_duration_seconds_count{kind="wait",outcome="succeeded"}`,
	} {
		if !bytes.Contains(body, []byte(line)) {
			t.Errorf("/metrics: %q missing", line)
		}
	}
}

// TestMetricsOnlyFromThisMachine refuses /metrics to other machines: they
// get the API's answer for a path it does not have. This machine's
// clients need the metrics token.
func TestMetricsOnlyFromThisMachine(t *testing.T) {
	t.Parallel()
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "metrics") })
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) })
	h := withMetrics(api, metrics, "metrics-token-for-tests")
	for _, c := range []struct {
		remote, auth string
		want         int
	}{
		{"127.0.0.1:5000", "Bearer metrics-token-for-tests", 200},
		{"[::1]:5000", "Bearer metrics-token-for-tests", 200},
		{"127.0.0.1:5000", "", 401},
		{"127.0.0.1:5000", "Bearer another-token", 401},
		{"192.168.1.20:5000", "Bearer metrics-token-for-tests", 404},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", MetricsPath, nil)
		req.RemoteAddr = c.remote
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("/metrics from %s with %q: got %d, want %d", c.remote, c.auth, rec.Code, c.want)
		}
	}
}

// TestMetricsTokenFile: serving makes the token once, keeps it across
// restarts, and nobody but the owner may read the file.
func TestMetricsTokenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := metricsToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := metricsToken(dir)
	if err != nil || again != first || len(first) < 16 {
		t.Errorf("got %q then %q (%v), want the same token of 16 characters or more", first, again, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, MetricsTokenFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file: got %v (%v), want mode 0600", fi.Mode().Perm(), err)
	}
}

// TestMetricsUnreadableFromAWorkflow: with the deployment letting steps
// call loopback, a workflow's http step asks this server for /metrics, as
// the server's own listener serves it; it gets no metrics.
func TestMetricsUnreadableFromAWorkflow(t *testing.T) {
	t.Setenv("CARDFLOW_OUTBOUND_ALLOW", "127.0.0.1, ::1, localhost")
	store, err := boltstore.Open(filepath.Join(t.TempDir(), StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewStack(store, store, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	svc := st.Service
	api, err := httpapi.New(svc, httpapi.KeyAuthenticator{Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	token, err := metricsToken(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(withMetrics(api, st.Metrics.Handler(), token))
	defer srv.Close()

	ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{OrganizationID: "org-a", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "test"})
	wf, err := svc.SaveWorkflow(ctx, app.SaveWorkflowInput{
		WorkflowName: "scrape",
		WorkflowSteps: []cardflow.Step{
			{ID: "start", Name: "Start", Type: "trigger", Config: map[string]any{"kind": "REQUEST"}},
			{ID: "scrape", Name: "Scrape", Type: "http", Config: map[string]any{"method": "GET", "url": "{{ input.url }}"}},
			{ID: "done", Name: "Done", Type: "end", Config: map[string]any{"status": "SUCCEEDED", "output": "{{ steps.scrape.output }}"}},
		},
		WorkflowConnections: []cardflow.Connection{{From: "start", To: "scrape"}, {From: "scrape", To: "done"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishWorkflow(ctx, wf.WorkflowID, wf.WorkflowVersion); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(srv.URL, "127.0.0.1:")
	for _, target := range []string{srv.URL + MetricsPath, "http://localhost:" + port + MetricsPath} {
		body, _ := json.Marshal(map[string]any{"url": target})
		out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: wf.WorkflowID, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		var ex *cardflow.Execution
		testenv.WaitFor(t, "execution "+out.ExecutionID+" to end", func() bool {
			ex, err = svc.GetExecution(ctx, wf.WorkflowID, out.ExecutionID)
			return err == nil && !ex.Open()
		})
		got, _ := json.Marshal(ex)
		if ex.Status != cardflow.ExecFailed || bytes.Contains(got, []byte("go_goroutines")) || bytes.Contains(got, []byte("cardflow_executions")) {
			t.Errorf("GET %s from a step: got %s with %.300s, want FAILED without metrics", target, ex.Status, got)
		}
	}
}
