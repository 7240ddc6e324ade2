package httpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/cardflow/cardflow/internal/fakes/saptest"
	"github.com/cardflow/cardflow/internal/fakes/teamstest"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/teams"
)

// memorySecretsManager stands in for the Secrets Manager API: it holds
// values by secret id, answers ResourceNotFoundException for the others,
// and notes every id asked for.
type memorySecretsManager struct {
	mu     sync.Mutex
	values map[string]string
	ids    []string
}

func (m *memorySecretsManager) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ids = append(m.ids, *in.SecretId)
	v, ok := m.values[*in.SecretId]
	if !ok {
		msg := "Secrets Manager can't find the specified secret."
		return nil, &types.ResourceNotFoundException{Message: &msg}
	}
	return &secretsmanager.GetSecretValueOutput{Name: in.SecretId, SecretString: &v}, nil
}

// keyOf reads a key path (org/<org>/<name> or deployment/<name>) back.
func keyOf(path string) secrets.Key {
	ns, rest, _ := strings.Cut(path, "/")
	if ns == "deployment" {
		return secrets.DeploymentKey(rest)
	}
	org, name, _ := strings.Cut(rest, "/")
	return secrets.OrganizationKey(org, name)
}

// TestSecretsBelongToTheirOrganization is the attack of an organization's
// admin on other organizations' secrets and on the deployment's own. Two
// organizations' secrets (org-b's under names org-a also uses, and under
// names only org-b has) and the deployment's Teams signing key and bot
// secret are planted in each kind of store. org-a's admin then saves and
// runs workflows whose http step auth, erp profile and Teams
// webhook_secret name org-b's secrets, the deployment's and one that
// exists nowhere, each aimed at a receiver that would take them. Every
// one fails with the same message, naming the secret and nothing else;
// no receiver hears from them; no value, and no hint of where secrets are
// stored, reaches the logs or the API's answers. org-a's own secrets,
// including those whose names org-b shares, work.
func TestSecretsBelongToTheirOrganization(t *testing.T) {
	const (
		tokenA, sharedA, pwA = "token-of-org-a-7Kq2", "shared-of-org-a-3Mw8", "pw-of-org-a-5Rt1"
		tokenB, sharedB, pwB = "token-of-org-b-9Xc4", "shared-of-org-b-1Hv6", "pw-of-org-b-8Lp3"
		onlyB                = "only-of-org-b-4Nz7"
		botSecret            = "bot-secret-of-the-deployment-2Gf5"
	)
	t.Setenv("CARDFLOW_OUTBOUND_ALLOW", "127.0.0.1")

	// The receivers: an http endpoint that notes every request, a SAP
	// system that takes org-a's credentials and one that takes org-b's,
	// and org-a's and org-b's Teams webhooks.
	var mu sync.Mutex
	var heard []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		heard = append(heard, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"ok": true})
	}))
	defer receiver.Close()
	sapA := saptest.New(saptest.Config{Client: "100", User: "CARDFLOW", Password: pwA})
	defer sapA.Close()
	sapB := saptest.New(saptest.Config{Client: "100", User: "CARDFLOW", Password: pwB, Echo: true})
	defer sapB.Close()
	hookA, hookB := teamstest.New(t), teamstest.New(t)

	planted := map[string]string{
		"org/org-a/token":          tokenA,
		"org/org-a/shared":         sharedA,
		"org/org-a/sap":            "CARDFLOW:" + pwA,
		"org/org-a/hook":           hookA.WebhookURL(),
		"org/org-b/token":          tokenB,
		"org/org-b/shared":         sharedB,
		"org/org-b/b-only":         onlyB,
		"org/org-b/sap-b":          "CARDFLOW:" + pwB,
		"org/org-b/hook-b":         hookB.WebhookURL(),
		"deployment/teams-signing": teamsSigningKey,
		"deployment/bot-secret":    botSecret,
	}
	// Everything that must never leave org-b or the deployment, and its
	// base64 forms.
	var forbidden []string
	for _, v := range []string{tokenB, sharedB, pwB, "CARDFLOW:" + pwB, onlyB, hookB.WebhookURL(), teamsSigningKey, botSecret} {
		forbidden = append(forbidden, v, base64.StdEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v)))
	}

	sm := &memorySecretsManager{values: map[string]string{}}
	dir := t.TempDir()
	env := map[string]string{}
	for path, v := range planted {
		sm.values["cardflow/"+path] = v
		env[secrets.EnvName(keyOf(path))] = v
		file := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	smStore, err := secrets.NewSecretsManager(sm, "cardflow/")
	if err != nil {
		t.Fatal(err)
	}
	stores := []struct {
		kind  string
		store secrets.Store
	}{
		{"environment", envStore(env)},
		{"files", secrets.Dir{Path: dir}},
		{"Secrets Manager", secrets.NewCache(smStore, time.Minute, nil)},
	}
	for _, s := range stores {
		t.Run(s.kind, func(t *testing.T) {
			mu.Lock()
			heard = nil
			mu.Unlock()
			posted := len(hookA.Requests(""))
			logs := &syncBuffer{}
			e := newSecretsEnv(t, s.store, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), hookA)
			admin := e.key("org-a", "read", "admin", "execute")
			var answers strings.Builder
			run := func(body map[string]any, want string) map[string]any {
				t.Helper()
				r := e.do("POST", "/v1/workflows/saveWorkflow", admin, body)
				// Saving names a secret without looking it up: the
				// answer is the same whoever has it.
				if r.status != 200 {
					t.Fatalf("saveWorkflow: got %d %s, want 200", r.status, r.raw)
				}
				wf := str(r.body["item"].(map[string]any)["workflow_id"])
				if r := e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 1}); r.status != 200 {
					t.Fatalf("publishWorkflow: got %d %s", r.status, r.raw)
				}
				return e.runToEnd(admin, wf, want, &answers)
			}
			httpCall := func(secret string) map[string]any {
				return callWorkflow(map[string]any{"id": "call", "name": "Call", "type": "http", "config": map[string]any{
					"method": "GET", "url": receiver.URL, "auth": map[string]any{"type": "bearer", "secret": secret}}}, nil)
			}
			erpCall := func(secret string, srv *saptest.Server) map[string]any {
				return callWorkflow(map[string]any{"id": "call", "name": "Call", "type": "erp", "config": map[string]any{"service": srv.Service(), "entity": "A_PurchaseOrder"}},
					map[string]any{"erp": map[string]any{"type": "SAP", "base_url": srv.URL, "client": "100", "auth": map[string]any{"type": "basic", "secret": secret}}})
			}
			cardID := e.card(admin)
			webhook := func(secret string) map[string]any {
				body := approvalBody(cardID)
				body["workflow_integrations"] = map[string]any{"teams": map[string]any{"type": "webhook", "webhook_secret": secret}}
				return body
			}

			// org-a's own secrets work, those whose names org-b shares too.
			run(httpCall("token"), "SUCCEEDED")
			run(httpCall("shared"), "SUCCEEDED")
			run(erpCall("sap", sapA), "SUCCEEDED")
			run(webhook("hook"), "WAITING")
			mu.Lock()
			if got, want := strings.Join(heard, ","), "Bearer "+tokenA+",Bearer "+sharedA; got != want {
				t.Errorf("the receiver heard %q, want %q", got, want)
			}
			mu.Unlock()
			// The execution is recorded WAITING before its card goes out.
			testenv.WaitFor(t, "org-a's webhook to get the card", func() bool { return len(hookA.Requests(""))-posted >= 1 })
			if got := len(hookA.Requests("")) - posted; got != 1 {
				t.Errorf("org-a's webhook got %d posts, want 1", got)
			}

			// org-b's, the deployment's and a secret that exists nowhere,
			// through each kind of reference.
			for _, attack := range []struct {
				secret string
				body   map[string]any
				prefix string
			}{
				{"b-only", httpCall("b-only"), ""},
				{"teams-signing", httpCall("teams-signing"), ""},
				{"bot-secret", httpCall("bot-secret"), ""},
				{"missing", httpCall("missing"), ""},
				{"sap-b", erpCall("sap-b", sapB), ""},
				{"teams-signing", erpCall("teams-signing", sapB), ""},
				{"bot-secret", erpCall("bot-secret", sapB), ""},
				{"missing", erpCall("missing", sapB), ""},
				{"hook-b", webhook("hook-b"), "delivery: "},
				{"teams-signing", webhook("teams-signing"), "delivery: "},
				{"bot-secret", webhook("bot-secret"), "delivery: "},
				{"missing", webhook("missing"), "delivery: "},
			} {
				item := run(attack.body, "FAILED")
				out, _ := item["workflow_output_payload"].(map[string]any)
				if got, want := str(out["error"]), fmt.Sprintf("%ssecret %q is not available", attack.prefix, attack.secret); got != want {
					t.Errorf("naming %q: got the error %q, want %q", attack.secret, got, want)
				}
			}
			mu.Lock()
			if len(heard) != 2 {
				t.Errorf("the receiver heard %d requests, want only org-a's 2", len(heard))
			}
			mu.Unlock()
			if got := sapB.Calls(); len(got) != 0 {
				t.Errorf("the SAP system org-a aimed at got %v, want nothing", got)
			}
			if got, gotB := len(hookA.Requests(""))-posted, len(hookB.Requests("")); got != 1 || gotB != 0 {
				t.Errorf("org-a's webhook got %d requests and org-b's %d, want 1 and 0", got, gotB)
			}

			answers.Write(e.get("/v1/workflows/getOrganizationExecutions", admin, "limit", "30").raw)
			seen := map[string]string{"the service log": logs.String(), "the API's answers": answers.String()}
			for where, text := range seen {
				for _, v := range forbidden {
					if strings.Contains(text, v) {
						t.Errorf("%s hold %q", where, v)
					}
				}
				for _, hint := range []string{"CARDFLOW_SECRET", "CARDFLOW_DEPLOYMENT_SECRET", "org/org-", "deployment/", dir, "Secrets Manager", "not set"} {
					if strings.Contains(text, hint) {
						t.Errorf("%s say where secrets are kept: %q", where, hint)
					}
				}
			}
		})
	}
	for _, id := range sm.ids {
		if !strings.HasPrefix(id, "cardflow/org/org-a/") && id != "cardflow/deployment/teams-signing" {
			t.Errorf("asked Secrets Manager for %s", id)
		}
	}
}

// callWorkflow is a workflow of one step, call, whose output is the
// workflow's.
func callWorkflow(call, integrations map[string]any) map[string]any {
	body := map[string]any{
		"workflow_name": "Call",
		"workflow_steps": []any{
			map[string]any{"id": "start", "name": "Start", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
			call,
			map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{"status": "SUCCEEDED", "output": "{{ steps.call.output }}"}},
		},
		"workflow_connections": []any{map[string]any{"from": "start", "to": "call"}, map[string]any{"from": "call", "to": "done"}},
	}
	if integrations != nil {
		body["workflow_integrations"] = integrations
	}
	return body
}

// newSecretsEnv is newEnv with Teams webhooks (response links signed by the
// deployment's key) and secrets from store.
func newSecretsEnv(t *testing.T, store secrets.Store, log *slog.Logger, fake *teamstest.Server) *env {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	t.Cleanup(srv.Close)
	db, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(db, db, localmode.Config{
		Log:          log,
		Teams:        teams.Config{PublicURL: srv.URL, SigningSecret: "teams-signing"},
		TeamsOptions: []teams.Option{teams.WithHTTPClient(fake.Client())},
		Secrets:      store,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(st.Service, httpapi.KeyAuthenticator{Service: st.Service}, httpapi.WithLogger(log), httpapi.WithOutbox(db), httpapi.WithTeams())
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = api
	return &env{t: t, srv: srv, svc: st.Service, store: db, now: time.Now()}
}

// card publishes teamsCard and returns its id.
func (e *env) card(admin string) string {
	e.t.Helper()
	r := e.do("POST", "/v1/adaptive-cards/saveCard", admin, map[string]any{"card_name": "Approval", "card_payload": teamsCard()})
	if r.status != 200 {
		e.t.Fatalf("saveCard: got %d %s", r.status, r.raw)
	}
	id := str(r.body["item"].(map[string]any)["card_id"])
	if r := e.do("POST", "/v1/adaptive-cards/publishCard", admin, map[string]any{"card_id": id, "card_version": 1}); r.status != 200 {
		e.t.Fatalf("publishCard: got %d %s", r.status, r.raw)
	}
	return id
}

// runToEnd triggers workflow wf with an amount that needs approval, waits
// for the status want and returns the execution, noting every answer in
// answers.
func (e *env) runToEnd(key, wf, want string, answers *strings.Builder) map[string]any {
	e.t.Helper()
	r := e.trigger(key, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 5000})
	if r.status != 200 {
		e.t.Fatalf("trigger: got %d %s", r.status, r.raw)
	}
	answers.Write(r.raw)
	item := e.awaitStatus(key, wf, str(r.body["service_execution_id"]), want)
	answers.WriteString(jsonOf(item))
	h := e.get("/v1/workflows/getWorkflowExecutionHistory", key, "workflow_id", wf)
	answers.Write(h.raw)
	return item
}
