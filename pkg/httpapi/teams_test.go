package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/cardflow/cardflow/internal/fakes/teamstest"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/teams"
)

const teamsSigningKey = "a signing key of more than thirty-two characters"

// envStore is a store of secrets in the environment variables of env.
func envStore(env map[string]string) secrets.Store {
	return secrets.Env{Lookup: func(name string) (string, bool) { v, ok := env[name]; return v, ok }}
}

// newTeamsEnv is newEnv with the Teams integration: a bot and response
// links, against the fake Microsoft endpoints.
func newTeamsEnv(t *testing.T) (*env, *teamstest.Server) {
	t.Helper()
	fake := teamstest.New(t)
	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	t.Cleanup(srv.Close)
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(store, store, localmode.Config{
		EarlyResume: 2 * time.Second,
		Teams: teams.Config{
			PublicURL: srv.URL, SigningSecret: "teams-signing",
			AppID: teamstest.AppID, AppSecret: "bot-secret", TokenURL: fake.TokenURL(),
			OpenIDMetadataURL: fake.MetadataURL(), ServiceHosts: []string{fake.Host()},
		},
		TeamsOptions: []teams.Option{teams.WithHTTPClient(fake.Client())},
		TeamsTenants: map[string]string{"tenant-1": "org-a"},
		Secrets: envStore(map[string]string{
			secrets.EnvName(secrets.DeploymentKey("teams-signing")):             teamsSigningKey,
			secrets.EnvName(secrets.DeploymentKey("bot-secret")):                teamstest.AppSecret,
			secrets.EnvName(secrets.OrganizationKey("org-a", "approvals-hook")): fake.WebhookURL(),
			// Webhooks of one person's own chat each.
			secrets.EnvName(secrets.OrganizationKey("org-a", "ann-hook")): fake.WebhookURLFor("ann"),
			secrets.EnvName(secrets.OrganizationKey("org-a", "bob-hook")): fake.WebhookURLFor("bob"),
			secrets.EnvName(secrets.OrganizationKey("org-a", "cy-hook")):  fake.WebhookURLFor("cy"),
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(st.Service, httpapi.KeyAuthenticator{Service: st.Service}, httpapi.WithOutbox(store), httpapi.WithTeams(), httpapi.WithApprovalLinks())
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = api
	return &env{t: t, srv: srv, svc: st.Service, store: store, now: time.Now()}, fake
}

// teamsCard asks for approval with Action.Execute and Action.Submit buttons.
func teamsCard() map[string]any {
	return map[string]any{
		"type": "AdaptiveCard", "version": "1.5",
		"body": []any{
			map[string]any{"type": "TextBlock", "text": "Approve ${amount} EUR?", "wrap": true},
			map[string]any{"type": "Input.Text", "id": "comment", "label": "Comment"},
		},
		"actions": []any{
			map[string]any{"type": "Action.Execute", "title": "Approve", "verb": "approve", "data": map[string]any{"decision": "approve"}},
			map[string]any{"type": "Action.Submit", "title": "Reject", "data": map[string]any{"decision": "reject"}},
		},
	}
}

// teamsApproval publishes teamsCard and an approval workflow delivering it
// by the given Teams profile.
func (e *env) teamsApproval(admin string, profile map[string]any) string {
	e.t.Helper()
	r := e.do("POST", "/v1/adaptive-cards/saveCard", admin, map[string]any{"card_name": "Approval", "card_payload": teamsCard()})
	if r.status != 200 {
		e.t.Fatalf("saveCard: got %d %s", r.status, r.raw)
	}
	cardID := str(r.body["item"].(map[string]any)["card_id"])
	e.do("POST", "/v1/adaptive-cards/publishCard", admin, map[string]any{"card_id": cardID, "card_version": 1})
	e.registerBotConversation(admin, profile)
	body := approvalBody(cardID)
	body["workflow_integrations"] = map[string]any{"teams": profile}
	r = e.do("POST", "/v1/workflows/saveWorkflow", admin, body)
	if r.status != 200 {
		e.t.Fatalf("saveWorkflow: got %d %s", r.status, r.raw)
	}
	wf := str(r.body["item"].(map[string]any)["workflow_id"])
	if r := e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 1}); r.status != 200 {
		e.t.Fatalf("publishWorkflow: got %d %s", r.status, r.raw)
	}
	return wf
}

// registerBotConversation registers the conversation of a bot profile
// for the admin key's organization: the bot posts only into the
// organization's conversations.
func (e *env) registerBotConversation(admin string, profile map[string]any) {
	e.t.Helper()
	if profile["type"] != "bot" {
		return
	}
	reg := map[string]any{"conversation_id": profile["conversation_id"], "service_url": profile["service_url"]}
	if profile["tenant_id"] != nil {
		reg["tenant_id"] = profile["tenant_id"]
	}
	if r := e.do("POST", "/v1/teams/registerConversation", admin, reg); r.status != 200 {
		e.t.Fatalf("registerConversation: got %d %s", r.status, r.raw)
	}
}

// awaitRequests waits until the fake has n requests under prefix.
func awaitRequests(t *testing.T, fake *teamstest.Server, prefix string, n int) []teamstest.Request {
	t.Helper()
	var got []teamstest.Request
	testenv.WaitFor(t, fmt.Sprintf("%d requests to %s", n, prefix), func() bool {
		got = fake.Requests(prefix)
		return len(got) >= n
	})
	return got
}

// cardActions returns the actions of the card in a posted activity or
// webhook envelope, by title.
func cardActions(t *testing.T, body map[string]any) map[string]map[string]any {
	t.Helper()
	card := body["attachments"].([]any)[0].(map[string]any)["content"].(map[string]any)
	out := map[string]map[string]any{}
	for _, a := range card["actions"].([]any) {
		m := a.(map[string]any)
		out[str(m["title"])] = m
	}
	return out
}

// botPost sends an activity to the messaging endpoint with a bearer token.
func (e *env) botPost(token string, activity map[string]any) response {
	e.t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return e.send("POST", "/v1/teams/messages", "", activity, h)
}

func invoke(fake *teamstest.Server, from string, data map[string]any) map[string]any {
	return map[string]any{
		"type": "invoke", "name": "adaptiveCard/action", "channelId": "msteams", "serviceUrl": fake.ServiceURL(),
		"from":         map[string]any{"id": "29:" + from, "name": strings.ToUpper(from[:1]) + from[1:] + " Example", "aadObjectId": "aad-" + from},
		"conversation": map[string]any{"id": "19:approvers@thread.tacv2", "tenantId": "tenant-1"},
		"value":        map[string]any{"action": map[string]any{"type": "Action.Execute", "verb": data["decision"], "data": data}, "trigger": "manual"},
	}
}

// awaitWaitOpen waits until the process record has its wait open, so an
// answer claims it rather than being kept for it.
func (e *env) awaitWaitOpen(org, processID string) {
	e.t.Helper()
	testenv.WaitFor(e.t, "the wait of process "+processID+" to open", func() bool {
		p, err := e.store.GetProcess(context.Background(), org, processID)
		return err == nil && p.Wait != nil
	})
}

func resumedEvents(ex map[string]any) int {
	n := 0
	for _, ev := range ex["workflow_event_log"].(map[string]any)["events"].([]any) {
		if ev.(map[string]any)["type"] == cardflow.EventResumed {
			n++
		}
	}
	return n
}

func TestTeamsBotAnswer(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	profile := map[string]any{"type": "bot", "service_url": fake.ServiceURL(), "conversation_id": "19:approvers@thread.tacv2", "tenant_id": "tenant-1"}
	wf := e.teamsApproval(admin, profile)

	r := e.trigger(run, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-7", map[string]any{"amount": 4800})
	id := str(r.body["service_execution_id"])
	posted := awaitRequests(t, fake, "/connector/", 1)[0]
	if posted.Method != "POST" || posted.Path != "/connector/v3/conversations/19:approvers@thread.tacv2/activities" {
		t.Fatalf("got %s %s, want the card posted to the conversation", posted.Method, posted.Path)
	}
	if got := jsonOf(posted.Body); !strings.Contains(got, "Approve 4800 EUR?") {
		t.Errorf("posted card: got %s, want the card expanded with the step's data", got)
	}
	actions := cardActions(t, posted.Body)
	data := actions["Approve"]["data"].(map[string]any)
	rejectData := actions["Reject"]["data"].(map[string]any)
	e.awaitWaitOpen("org-a", "PO-7")

	now := time.Now()
	valid := fake.Token(t, now, fake.ServiceURL())
	answer := map[string]any{"decision": "approve", "comment": "within budget", teams.DataKey: data[teams.DataKey]}
	for _, tc := range []struct {
		name, token string
		activity    map[string]any
		status      int
		mention     string
	}{
		{"no token", "", invoke(fake, "ann", answer), 401, "Bearer"},
		{"wrong audience", teamstest.Sign(t, fake.Key, teamstest.KeyID, "RS256", func() map[string]any {
			c := teamstest.Claims(now, fake.ServiceURL())
			c["aud"] = "another-bot"
			return c
		}()), invoke(fake, "ann", answer), 401, "audience"},
		{"other service url", fake.Token(t, now, "https://smba.trafficmanager.net/emea/"), invoke(fake, "ann", answer), 401, "serviceUrl"},
		{"tampered data", valid, invoke(fake, "ann", map[string]any{"decision": "approve", teams.DataKey: "x" + str(data[teams.DataKey])}), 400, "changed or cut short"},
		{"not our card", valid, invoke(fake, "ann", map[string]any{"decision": "approve"}), 400, "not sent by this service"},
		{"a decision the card does not offer", valid, invoke(fake, "ann", map[string]any{"decision": "pay", teams.DataKey: data[teams.DataKey]}), 400,
			`this answer's "decision" is not what the card's button sends`},
		{"another button's token", valid, invoke(fake, "ann", map[string]any{"decision": "approve", teams.DataKey: rejectData[teams.DataKey]}), 400,
			`"decision" is not what the card's button sends`},
		{"a field the card does not have", valid, invoke(fake, "ann", map[string]any{"decision": "approve", "amount": 1, teams.DataKey: data[teams.DataKey]}), 400,
			`this answer holds "amount", which is neither the button's data nor an input of the card`},
	} {
		if r := e.botPost(tc.token, tc.activity); r.status != tc.status || !strings.Contains(r.msg(), tc.mention) {
			t.Errorf("%s: got %d %s, want %d mentioning %q", tc.name, r.status, r.raw, tc.status, tc.mention)
		}
	}
	if ex := e.awaitStatus(run, wf, id, "WAITING"); resumedEvents(ex) != 0 {
		t.Fatalf("a refused request resumed the execution")
	}

	// Another organization's wait is out of reach, even with a validly
	// signed reference: the organization comes from the signed data.
	key := []byte(teamsSigningKey)
	ref, err := teams.VerifyAction(key, str(data[teams.DataKey]))
	if err != nil {
		t.Fatal(err)
	}
	ref.OrganizationID = "org-b"
	foreign, _ := teams.SignAction(key, *ref, *ref.Offer)
	if r := e.botPost(valid, invoke(fake, "eve", map[string]any{"decision": "approve", teams.DataKey: foreign})); r.status != 404 {
		t.Errorf("reference to org-b: got %d %s, want 404", r.status, r.raw)
	}

	r = e.botPost(valid, invoke(fake, "ann", answer))
	if r.status != 200 || r.body["statusCode"] != float64(200) || r.body["type"] != "application/vnd.microsoft.card.adaptive" {
		t.Fatalf("answer: got %d %s, want an invoke response with a card", r.status, r.raw)
	}
	card := r.body["value"].(map[string]any)
	if _, ok := card["actions"]; ok {
		t.Errorf("the decision card has buttons: %s", r.raw)
	}
	if got := jsonOf(card); !strings.Contains(got, "Manager approval") || !strings.Contains(got, "Answered by Ann Example") || !strings.Contains(got, "within budget") {
		t.Errorf("decision card: got %s, want the step, the decision and who made it", got)
	}
	done := e.awaitStatus(run, wf, id, "SUCCEEDED")
	out := done["workflow_output_payload"].(map[string]any)
	who, _ := out["responder"].(map[string]any)
	if out["source"] != "TEAMS" || out["decision"] != "approve" || out["verb"] != "approve" || out["comment"] != "within budget" ||
		who["aad_object_id"] != "aad-ann" || who["id"] != "29:ann" || who["name"] != "Ann Example" {
		t.Errorf("output: got %v, want source TEAMS, the submitted data and the responder", out)
	}
	if _, ok := out[teams.DataKey]; ok {
		t.Errorf("output: the signed reference leaked into the step output: %v", out)
	}

	// A second click, by anyone, resumes nothing and shows the decision.
	r = e.botPost(valid, invoke(fake, "bob", map[string]any{"decision": "approve", teams.DataKey: data[teams.DataKey]}))
	if r.status != 200 || jsonOf(r.body["value"]) != jsonOf(card) {
		t.Errorf("second click: got %d %s, want the same decision card %s", r.status, r.raw, jsonOf(card))
	}
	if got := resumedEvents(e.awaitStatus(run, wf, id, "SUCCEEDED")); got != 1 {
		t.Errorf("got %d Resumed events, want 1", got)
	}

	if r := e.do("GET", "/v1/teams/messages", "", nil); r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("GET of the messaging endpoint: got %d %s, want 405 allowing POST", r.status, r.raw)
	}

	// Activities that answer no card are acknowledged.
	chat := map[string]any{"type": "message", "text": "hello", "channelId": "msteams", "serviceUrl": fake.ServiceURL()}
	if r := e.botPost(valid, chat); r.status != 200 || r.body["message"] != "success" {
		t.Errorf("chat message: got %d %s, want 200", r.status, r.raw)
	}
}

func TestTeamsBotSubmit(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	wf := e.teamsApproval(admin, map[string]any{"type": "bot", "service_url": fake.ServiceURL(), "conversation_id": "a:1-personal-chat"})
	id := str(e.trigger(run, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 2000}).body["service_execution_id"])
	posted := awaitRequests(t, fake, "/connector/", 1)[0]
	data := cardActions(t, posted.Body)["Reject"]["data"].(map[string]any)
	e.awaitWaitOpen("org-a", id)

	submit := map[string]any{
		"type": "message", "channelId": "msteams", "serviceUrl": fake.ServiceURL(), "replyToId": "activity-1",
		"from":         map[string]any{"id": "29:carl", "name": "Carl Example", "aadObjectId": "aad-carl"},
		"conversation": map[string]any{"id": "a:1-personal-chat"},
		"value":        map[string]any{"decision": "reject", "comment": "too much", teams.DataKey: data[teams.DataKey]},
	}
	token := fake.Token(t, time.Now(), fake.ServiceURL())
	if r := e.botPost(token, submit); r.status != 200 || r.body["resumed"] != true {
		t.Fatalf("submit: got %d %s, want 200 resumed", r.status, r.raw)
	}
	out := e.awaitStatus(run, wf, id, "SUCCEEDED")["workflow_output_payload"].(map[string]any)
	if out["decision"] != "reject" || out["source"] != "TEAMS" || out["responder"].(map[string]any)["name"] != "Carl Example" {
		t.Errorf("output: got %v", out)
	}
	// The answered card was replaced by the decision card.
	reqs := awaitRequests(t, fake, "/connector/", 2)
	put := reqs[1]
	if put.Method != "PUT" || put.Path != "/connector/v3/conversations/a:1-personal-chat/activities/activity-1" {
		t.Fatalf("got %s %s, want the answered activity updated", put.Method, put.Path)
	}
	if got := jsonOf(put.Body); !strings.Contains(got, "Answered by Carl Example") || strings.Contains(got, "Action.") {
		t.Errorf("updated card: got %s, want the decision without buttons", got)
	}
	if r := e.botPost(token, submit); r.status != 200 || r.body["resumed"] != false {
		t.Errorf("second submit: got %d %s, want 200, not resumed", r.status, r.raw)
	}
}

func init() {
	// Response link pages are HTML; the spec says so, and their bodies are
	// read as text when responses are validated.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder)
}

// page opens a response link and checks the answer against openapi.yaml.
func (e *env) page(link string) (int, string) {
	e.t.Helper()
	status, body, _ := e.linkRequest("GET", link, nil)
	return status, body
}

// linkRequest sends a request to a response link: GET or HEAD opens it,
// POST sends its confirmation form. It checks that the answer is a page
// that matches openapi.yaml and loads nothing from elsewhere.
func (e *env) linkRequest(method, link string, form url.Values) (int, string, http.Header) {
	e.t.Helper()
	var reqBody []byte
	if form != nil {
		reqBody = []byte(form.Encode())
	}
	req, err := http.NewRequest(method, link, bytes.NewReader(reqBody))
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		e.t.Errorf("%s %s: got Content-Type %q, want an HTML page", method, link, ct)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'none'; style-src 'sha256-") || !strings.Contains(csp, "form-action 'self'") {
		e.t.Errorf("%s %s: got Content-Security-Policy %q, want nothing but the page's style and its form", method, link, csp)
	}
	if method != "HEAD" {
		e.validate(req, reqBody, resp, body)
	}
	return resp.StatusCode, string(body), resp.Header
}

// confirmForm reads the hidden fields of a link page's confirmation form.
func confirmForm(t *testing.T, page string) url.Values {
	t.Helper()
	form := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="(\w+)" value="([^"]*)">`).FindAllStringSubmatch(page, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	if form.Get("token") == "" || form.Get("confirmation") == "" {
		t.Fatalf("got page %s, want a confirmation form with the token and a confirmation", page)
	}
	return form
}

// waitState returns an execution's status and how many events it logged.
func (e *env) waitState(key, wf, id string) (string, float64) {
	e.t.Helper()
	r := e.get("/v1/workflows/getWorkflowExecutionById", key, "workflow_id", wf, "workflow_execution_id", id)
	item := r.body["item"].(map[string]any)
	return str(item["status"]), item["workflow_event_log"].(map[string]any)["total"].(float64)
}

func TestTeamsResponseLinks(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	wf := e.teamsApproval(admin, map[string]any{"type": "webhook", "webhook_secret": "approvals-hook"})
	id := str(e.trigger(run, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-9", map[string]any{"amount": 9000}).body["service_execution_id"])
	posted := awaitRequests(t, fake, "/webhook", 1)[0]
	if posted.Body["type"] != "message" {
		t.Fatalf("webhook got %v, want a message envelope", posted.Body)
	}
	if got := jsonOf(posted.Body); !strings.Contains(got, "Approve 9000 EUR?") {
		t.Errorf("posted card: got %s, want the card expanded with the step's data", got)
	}
	actions := cardActions(t, posted.Body)
	approve, reject := str(actions["Approve"]["url"]), str(actions["Reject"]["url"])
	if actions["Approve"]["type"] != "Action.OpenUrl" || !strings.HasPrefix(approve, e.srv.URL+"/v1/teams/respond?token=") {
		t.Fatalf("got %v, want an Action.OpenUrl response link", actions["Approve"])
	}
	e.awaitWaitOpen("org-a", "PO-9")

	u, _ := url.Parse(approve)
	token := u.Query().Get("token")
	key := []byte(teamsSigningKey)
	ref, err := teams.VerifyLink(key, token, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	expired := *ref
	expired.Expires = time.Now().Add(-time.Minute).Unix()
	expiredToken, _ := teams.SignLink(key, expired)
	foreign := *ref
	foreign.OrganizationID = "org-b"
	foreignToken, _ := teams.SignLink(key, foreign)
	base := e.srv.URL + "/v1/teams/respond?token="
	for _, tc := range []struct {
		name, link string
		status     int
		mention    string
	}{
		{"tampered", base + token[:10] + "A" + token[11:], 400, "changed or cut short"},
		{"no token", e.srv.URL + "/v1/teams/respond", 400, "not valid"},
		{"expired", base + expiredToken, 400, "expired on"},
		{"another organization", base + foreignToken, 404, "PO-9"},
	} {
		if status, body := e.page(tc.link); status != tc.status || !strings.Contains(body, tc.mention) {
			t.Errorf("%s: got %d %s, want %d mentioning %q", tc.name, status, body, tc.status, tc.mention)
		}
	}

	// Opening the link, as Safe Links, Mimecast or a link preview does,
	// any number of times and by HEAD too, changes nothing: the execution
	// waits and logs no event.
	status0, events0 := e.waitState(run, wf, id)
	var page string
	for _, method := range []string{"GET", "HEAD", "GET", "HEAD", "GET"} {
		status, body, h := e.linkRequest(method, approve, nil)
		if status != 200 || h.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: got %d %v, want 200 and no-store", method, status, h)
		}
		if method == "GET" {
			page = body
		}
	}
	for _, want := range []string{"<h1>Manager approval</h1>", "Approve 9000 EUR?", `<p class="choice">Approve</p>`, `<form method="post" action="respond">`, "<button type=\"submit\">Confirm: Approve</button>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page: got %s, want it to contain %s", page, want)
		}
	}
	if strings.Contains(page, "<script") {
		t.Errorf("page: got %s, want no script", page)
	}
	if status, events := e.waitState(run, wf, id); status != "WAITING" || status0 != "WAITING" || events != events0 {
		t.Fatalf("after opening the link: got %s with %v events, want WAITING with %v", status, events, events0)
	}

	// The form's POST answers, once; a tampered token or confirmation, or
	// a POST of the link itself as a scanner might send, answers nothing.
	form := confirmForm(t, page)
	endpoint := e.srv.URL + "/v1/teams/respond"
	// The tampered confirmation differs in its first character, whatever
	// that is.
	tampered := "A" + form.Get("confirmation")[1:]
	if tampered == form.Get("confirmation") {
		tampered = "B" + tampered[1:]
	}
	for _, tc := range []struct {
		name    string
		link    string
		form    url.Values
		mention string
	}{
		{"tampered token", endpoint, url.Values{"token": {token[:10] + "A" + token[11:]}, "confirmation": {form.Get("confirmation")}}, "changed or cut short"},
		{"tampered confirmation", endpoint, url.Values{"token": {token}, "confirmation": {tampered}}, "confirmation is not valid"},
		{"another link's confirmation", endpoint, url.Values{"token": {reject[strings.Index(reject, "token=")+6:]}, "confirmation": {form.Get("confirmation")}}, "confirmation is not valid"},
		{"the link posted", approve, url.Values{}, "not valid"},
	} {
		if status, body, _ := e.linkRequest("POST", tc.link, tc.form); status != 400 || !strings.Contains(body, tc.mention) {
			t.Errorf("%s: got %d %s, want 400 mentioning %q", tc.name, status, body, tc.mention)
		}
	}
	if status, events := e.waitState(run, wf, id); status != "WAITING" || events != events0 {
		t.Fatalf("after refused posts: got %s with %v events, want WAITING with %v", status, events, events0)
	}
	status, body, _ := e.linkRequest("POST", endpoint, form)
	if status != 200 || !strings.Contains(body, "your answer was recorded") || !strings.Contains(body, "approve") {
		t.Fatalf("confirm: got %d %s, want the answer recorded", status, body)
	}
	out := e.awaitStatus(run, wf, id, "SUCCEEDED")["workflow_output_payload"].(map[string]any)
	if out["decision"] != "approve" || out["verb"] != "approve" || out["source"] != "TEAMS" {
		t.Errorf("output: got %v, want the link's choice with source TEAMS", out)
	}
	_, events1 := e.waitState(run, wf, id)
	p, err := e.store.GetProcess(context.Background(), "org-a", "PO-9")
	if err != nil {
		t.Fatal(err)
	}
	first := *p.Wait.Resume

	// A replayed POST (a double click, a reload) and a late click on
	// either button show the recorded answer with 200 and record nothing.
	rejectForm := url.Values{"token": {reject[strings.Index(reject, "token=")+6:]}}
	rejectForm.Set("confirmation", teams.SignConfirmation(key, rejectForm.Get("token")))
	for _, tc := range []struct {
		method, link string
		form         url.Values
	}{
		{"POST", endpoint, form}, {"POST", endpoint, form}, {"POST", endpoint, rejectForm}, {"GET", approve, nil}, {"GET", reject, nil},
	} {
		if status, body, _ := e.linkRequest(tc.method, tc.link, tc.form); status != 200 || !strings.Contains(body, "already answered on") || strings.Contains(body, "<form") {
			t.Errorf("late %s: got %d %s, want 200 already answered, without a form", tc.method, status, body)
		}
	}
	p, err = e.store.GetProcess(context.Background(), "org-a", "PO-9")
	if err != nil {
		t.Fatal(err)
	}
	if _, events := e.waitState(run, wf, id); events != events1 || p.Wait.Resume.ReceivedOn != first.ReceivedOn || jsonOf(p.Wait.Resume.Payload) != jsonOf(first.Payload) {
		t.Errorf("after the late clicks: %v events and answer %+v, want %v events and the first answer %+v", events, p.Wait.Resume, events1, first)
	}
}

// TestTeamsResponseLinkPageEscapes sends a card whose text and choice carry
// markup: the page shows it as text.
func TestTeamsResponseLinkPageEscapes(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	card := map[string]any{
		"type": "AdaptiveCard", "version": "1.5",
		"body": []any{
			map[string]any{"type": "TextBlock", "text": "Pay ${vendor}?", "wrap": true},
			map[string]any{"type": "FactSet", "facts": []any{map[string]any{"title": "<i>Vendor</i>", "value": "${vendor}"}}},
		},
		"actions": []any{map[string]any{"type": "Action.Submit", "title": `Pay "<b>now</b>"`, "data": map[string]any{"note": `"><script>alert(2)</script>`}}},
	}
	r := e.do("POST", "/v1/adaptive-cards/saveCard", admin, map[string]any{"card_name": "Pay", "card_payload": card})
	cardID := str(r.body["item"].(map[string]any)["card_id"])
	e.do("POST", "/v1/adaptive-cards/publishCard", admin, map[string]any{"card_id": cardID, "card_version": 1})
	body := approvalBody(cardID)
	steps := body["workflow_steps"].([]any)
	steps[2].(map[string]any)["config"].(map[string]any)["data"] = map[string]any{"vendor": "{{ input.vendor }}"}
	body["workflow_integrations"] = map[string]any{"teams": map[string]any{"type": "webhook", "webhook_secret": "approvals-hook"}}
	r = e.do("POST", "/v1/workflows/saveWorkflow", admin, body)
	if r.status != 200 {
		t.Fatalf("saveWorkflow: got %d %s", r.status, r.raw)
	}
	wf := str(r.body["item"].(map[string]any)["workflow_id"])
	e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 1})
	e.trigger(run, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-X", map[string]any{"amount": 5000, "vendor": `<img src=x onerror=alert(1)> & Co`})
	link := str(cardActions(t, awaitRequests(t, fake, "/webhook", 1)[0].Body)[`Pay "<b>now</b>"`]["url"])
	e.awaitWaitOpen("org-a", "PO-X")
	status, page := e.page(link)
	if status != 200 {
		t.Fatalf("got %d %s, want the confirmation page", status, page)
	}
	for _, want := range []string{"Pay &lt;img src=x onerror=alert(1)&gt; &amp; Co?", "&lt;i&gt;Vendor&lt;/i&gt;: &lt;img", `<p class="choice">Pay &#34;&lt;b&gt;now&lt;/b&gt;&#34;</p>`, "&#34;&gt;&lt;script&gt;alert(2)&lt;/script&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page: got %s, want it to contain %s", page, want)
		}
	}
	for _, bad := range []string{"<img", "<script", "<b>", "<i>"} {
		if strings.Contains(page, bad) {
			t.Errorf("page: got %s, want no %s element", page, bad)
		}
	}
}

func TestTeamsDeliveryMisconfigured(t *testing.T) {
	t.Parallel()
	e, _ := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")

	// A profile that cannot work is refused when saved.
	body := approvalBody("unused")
	body["workflow_integrations"] = map[string]any{"teams": map[string]any{"type": "bot", "conversation_id": "19:x"}}
	if r := e.do("POST", "/v1/workflows/saveWorkflow", admin, body); r.status != 400 || !strings.Contains(r.msg(), "https service_url") {
		t.Errorf("saveWorkflow with a bot profile without service_url: got %d %s, want 400", r.status, r.raw)
	}

	// A secret missing at run time fails the card step, readably, instead
	// of retrying for ever.
	wf := e.teamsApproval(admin, map[string]any{"type": "webhook", "webhook_secret": "unset-hook"})
	id := str(e.trigger(run, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 5000}).body["service_execution_id"])
	failed := e.awaitStatus(run, wf, id, "FAILED")
	if got := jsonOf(failed["workflow_output_payload"]); !strings.Contains(got, `delivery: secret \"unset-hook\" is not available`) {
		t.Errorf("output: got %s, want the delivery failure", got)
	}
}

func TestTeamsEndpointsNeedConfiguration(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{"/v1/teams/messages", "/v1/teams/respond"} {
		if r := e.do("POST", path, "", map[string]any{}); r.status != 404 {
			t.Errorf("%s without a Teams setup: got %d %s, want 404", path, r.status, r.raw)
		}
	}
}

func TestTeamsBotAnswerAfterCancel(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	wf := e.teamsApproval(admin, map[string]any{"type": "bot", "service_url": fake.ServiceURL(), "conversation_id": "19:approvers@thread.tacv2"})
	id := str(e.trigger(run, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-5", map[string]any{"amount": 3000}).body["service_execution_id"])
	posted := awaitRequests(t, fake, "/connector/", 1)[0]
	data := cardActions(t, posted.Body)["Approve"]["data"].(map[string]any)
	e.awaitWaitOpen("org-a", "PO-5")
	if r := e.do("POST", "/v1/workflows/cancelExecution", run, map[string]any{"workflow_id": wf, "workflow_execution_id": id}); r.status != 200 {
		t.Fatalf("cancel: got %d %s", r.status, r.raw)
	}

	// The approver clicks the card that is still in the chat.
	r := e.botPost(fake.Token(t, time.Now(), fake.ServiceURL()), invoke(fake, "ann", map[string]any{"decision": "approve", teams.DataKey: data[teams.DataKey]}))
	if r.status != 200 || !strings.Contains(jsonOf(r.body["value"]), "Your answer was not recorded: the execution "+id+" of this card has ended") {
		t.Fatalf("click after cancel: got %d %s, want a card saying the request ended", r.status, r.raw)
	}
	if ex := e.awaitStatus(run, wf, id, "CANCELLED"); resumedEvents(ex) != 0 {
		t.Errorf("a click after the cancel resumed the execution")
	}
}
