package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/fakes/saptest"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/localmode"
)

// syncBuffer is a log sink safe for the runner's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSecretsStayOut plants secrets (a SAP basic auth password, an OAuth
// client secret, a bearer token) in workflows that succeed and fail, with
// servers that echo the credentials back, and searches everything the
// service writes for the values and their base64 forms.
func TestSecretsStayOut(t *testing.T) {
	const (
		basicPW   = "Pw-basic-9f3K2q"
		wrongPW   = "Pw-wrong-7Hx1Lm"
		oauthCS   = "oauth-cs-4Tg8Vb"
		oauthBad  = "oauth-bad-2Qw9Er"
		bearerTok = "bearer-tk-6Yp3Ns"
	)
	planted := map[string]string{
		"CARDFLOW_SECRET_ORG_S__SAP_BASIC":     "CARDFLOW:" + basicPW,
		"CARDFLOW_SECRET_ORG_S__SAP_WRONG":     `{"username": "SAPUSER", "password": "` + wrongPW + `"}`,
		"CARDFLOW_SECRET_ORG_S__SAP_OAUTH":     "cardflow-app:" + oauthCS,
		"CARDFLOW_SECRET_ORG_S__SAP_OAUTH_BAD": "cardflow-app:" + oauthBad,
		"CARDFLOW_SECRET_ORG_S__BOT_TOKEN":     bearerTok,
	}
	for k, v := range planted {
		t.Setenv(k, v)
	}
	t.Setenv("CARDFLOW_OUTBOUND_ALLOW", "127.0.0.1")

	basicSAP := saptest.New(saptest.Config{Client: "100", User: "CARDFLOW", Password: basicPW, Echo: true})
	defer basicSAP.Close()
	oauthSAP := saptest.New(saptest.Config{Version: "V4", Client: "100", ClientID: "cardflow-app", ClientSecret: oauthCS, Echo: true})
	defer oauthSAP.Close()
	// echo answers with the request's headers: as JSON, or as a short
	// error text under /fail.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			http.Error(w, "denied for "+r.Header.Get("Authorization"), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"authorization": r.Header.Get("Authorization"), "all": r.Header})
	}))
	defer echo.Close()

	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dbPath := filepath.Join(t.TempDir(), "cardflow.db")
	store, err := boltstore.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(store, store, localmode.Config{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			st.Close()
		}
	}()
	if _, err := st.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(st.Service, httpapi.KeyAuthenticator{Service: st.Service}, httpapi.WithLogger(log), httpapi.WithOutbox(store))
	if err != nil {
		t.Fatal(err)
	}
	answers := &syncBuffer{}
	count := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		answers.Write(append(rec.Body.Bytes(), '\n'))
		answers.mu.Lock()
		count++
		answers.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
			answers.Write([]byte(k + ": " + strings.Join(v, ",") + "\n"))
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer srv.Close()
	e := &env{t: t, srv: srv, svc: st.Service, store: store, now: time.Now()}
	admin := e.key("org-s", "read", "admin", "execute")

	step := func(id, typ string, cfg map[string]any) map[string]any {
		return map[string]any{"id": id, "name": "Step " + id, "type": typ, "config": cfg}
	}
	basic := func(secret string) map[string]any {
		return map[string]any{"erp": map[string]any{"type": "SAP", "base_url": basicSAP.URL, "client": "100", "auth": map[string]any{"type": "basic", "secret": secret}}}
	}
	oauth := func(secret string) map[string]any {
		return map[string]any{"erp": map[string]any{"type": "SAP", "base_url": oauthSAP.URL, "client": "100", "odata_version": "V4",
			"auth": map[string]any{"type": "oauth2", "secret": secret, "token_url": oauthSAP.URL + saptest.TokenPath}}}
	}
	create := func(srv *saptest.Server) map[string]any {
		return step("call", "erp", map[string]any{"method": "POST", "service": srv.Service(), "entity": "A_PurchaseOrder", "body": map[string]any{"Supplier": "17300001"}})
	}
	bearer := map[string]any{"type": "bearer", "secret": "bot-token"}
	for _, tc := range []struct {
		name         string
		integrations map[string]any
		call         map[string]any
		want         string
	}{
		{"SAP basic auth", basic("sap-basic"), create(basicSAP), "SUCCEEDED"},
		{"SAP basic auth refused", basic("sap-wrong"), step("call", "erp", map[string]any{"service": basicSAP.Service(), "entity": "A_PurchaseOrder"}), "FAILED"},
		{"SAP basic auth refused on a change", basic("sap-wrong"), create(basicSAP), "FAILED"},
		{"SAP OAuth", oauth("sap-oauth"), create(oauthSAP), "SUCCEEDED"},
		{"SAP OAuth refused", oauth("sap-oauth-bad"), create(oauthSAP), "FAILED"},
		{"bearer", nil, step("call", "http", map[string]any{"method": "POST", "url": echo.URL + "/ok", "auth": bearer}), "SUCCEEDED"},
		{"bearer refused", nil, step("call", "http", map[string]any{"method": "GET", "url": echo.URL + "/fail", "auth": bearer}), "FAILED"},
	} {
		body := map[string]any{
			"workflow_name": tc.name,
			"workflow_steps": []any{
				step("start", "trigger", map[string]any{"kind": "REQUEST"}),
				tc.call,
				step("done", "end", map[string]any{"status": "SUCCEEDED", "output": "{{ steps.call.output }}"}),
			},
			"workflow_connections": []any{map[string]any{"from": "start", "to": "call"}, map[string]any{"from": "call", "to": "done"}},
		}
		if tc.integrations != nil {
			body["workflow_integrations"] = tc.integrations
		}
		r := e.do("POST", "/v1/workflows/saveWorkflow", admin, body)
		if r.status != 200 {
			t.Fatalf("%s: saveWorkflow: got %d %s", tc.name, r.status, r.raw)
		}
		wf := str(r.body["item"].(map[string]any)["workflow_id"])
		e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 1})
		r = e.do("POST", "/v1/workflows/triggerworkflow/"+wf, admin, map[string]any{"n": 1})
		if r.status != 200 {
			t.Fatalf("%s: trigger: got %d %s", tc.name, r.status, r.raw)
		}
		item := e.awaitStatus(admin, wf, str(r.body["service_execution_id"]), tc.want)
		e.get("/v1/workflows/getWorkflowExecutionHistory", admin, "workflow_id", wf)
		if tc.name == "bearer" {
			// The echo came back, with the token cut out.
			out, _ := item["workflow_output_payload"].(map[string]any)
			body, _ := out["body"].(map[string]any)
			if got, want := body["authorization"], "Bearer [redacted]"; got != want {
				t.Errorf("bearer: got echoed authorization %v, want %q", got, want)
			}
		}
	}
	e.get("/v1/workflows/getOrganizationExecutions", admin, "limit", "30")
	e.get("/v1/workflows/getOrganizationWorkflows", admin, "limit", "30")
	// A request that fails names no secret either.
	e.do("POST", "/v1/workflows/saveWorkflow", admin, map[string]any{"workflow_name": "inline", "workflow_integrations": basic("CARDFLOW:" + basicPW)})

	st.Close()
	closed = true
	stored, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}

	outputs := map[string]string{"logs": logs.String(), "stored records": string(stored), "API responses": answers.String()}
	if count < 20 {
		t.Fatalf("got %d API responses, want every one of them recorded", count)
	}
	// The pairs whose base64 form an Authorization header carries.
	values := []string{basicPW, wrongPW, oauthCS, oauthBad, bearerTok, "SAPUSER:" + wrongPW, "cardflow-app:" + oauthCS}
	for _, v := range planted {
		values = append(values, v)
	}
	formSet := map[string]bool{}
	for _, v := range values {
		formSet[v], formSet[base64.StdEncoding.EncodeToString([]byte(v))], formSet[base64.RawURLEncoding.EncodeToString([]byte(v))] = true, true, true
	}
	var forms []string
	for f := range formSet {
		forms = append(forms, f)
	}
	sort.Strings(forms)
	names := make([]string, 0, len(outputs))
	for n := range outputs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, f := range forms {
			if strings.Contains(outputs[n], f) {
				t.Errorf("%s hold the secret form %q", n, f)
			}
		}
	}
	if !strings.Contains(outputs["API responses"], "[redacted]") {
		t.Error("no answer shows a redaction: the echoes did not come back")
	}
}
