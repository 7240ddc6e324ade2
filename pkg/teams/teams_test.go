package teams_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/fakes/teamstest"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/teams"
)

const signingKey = "0123456789abcdef0123456789abcdef-signing"

// secretMap resolves names from a map, like the environment does.
type secretMap map[string]string

func (s secretMap) Secret(_ context.Context, name string) (string, error) {
	if v, ok := s[name]; ok {
		return v, nil
	}
	return "", cardflow.Errorf(cardflow.EINVALID, "secret %q is not set", name)
}

// everyone gives every organization the map's secrets: for tests of what a
// delivery does with a secret, not of whose secret it reads.
func (s secretMap) everyone(string) teams.Secrets { return s }

// outbox records the deliveries that stay in the service.
type outbox struct {
	mu sync.Mutex
	d  []*cardflow.Delivery
}

func (o *outbox) Deliver(_ context.Context, d *cardflow.Delivery) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.d = append(o.d, d)
	return nil
}

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	fake   *teamstest.Server
	in     *teams.Integration
	outbox *outbox
	clock  *clock
}

func fixtureTime() time.Time { return time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC) }

func newFixture(t testing.TB) *fixture {
	t.Helper()
	fake := teamstest.New(t)
	f := &fixture{fake: fake, outbox: &outbox{}, clock: &clock{t: fixtureTime()}}
	sec := secretMap{"signing": signingKey, "bot-secret": teamstest.AppSecret, "approvals-hook": fake.WebhookURL()}
	in, err := teams.New(teams.Config{
		PublicURL: "https://cardflow.example.com/", SigningSecret: "signing",
		AppID: teamstest.AppID, AppSecret: "bot-secret", TokenURL: fake.TokenURL(),
		OpenIDMetadataURL: fake.MetadataURL(), ServiceHosts: []string{fake.Host()},
	}, f.outbox, sec, sec.everyone, teams.WithHTTPClient(fake.Client()), teams.WithClock(f.clock.now))
	if err != nil {
		t.Fatal(err)
	}
	f.in = in
	return f
}

// approvalCard has an Action.Execute, an Action.Submit in an action set
// and one inside a show-card, and an input in the body and in the
// show-card.
func approvalCard() map[string]any {
	return map[string]any{
		"type": "AdaptiveCard", "version": "1.5",
		"body": []any{
			map[string]any{"type": "TextBlock", "text": "Approve 4800 EUR?"},
			map[string]any{"type": "Input.Text", "id": "comment", "label": "Comment"},
			map[string]any{"type": "ActionSet", "actions": []any{
				map[string]any{"type": "Action.Submit", "title": "Reject", "data": map[string]any{"decision": "reject"}},
			}},
		},
		"actions": []any{
			map[string]any{"type": "Action.Execute", "title": "Approve", "verb": "approve", "data": map[string]any{"decision": "approve"}, "style": "positive"},
			map[string]any{"type": "Action.ShowCard", "title": "More", "card": map[string]any{"type": "AdaptiveCard",
				"body": []any{map[string]any{"type": "Input.Date", "id": "until", "label": "Answer by"}},
				"actions": []any{
					map[string]any{"type": "Action.Submit", "title": "Ask", "data": "ask"},
				}}},
		},
		"refresh": map[string]any{"action": map[string]any{"type": "Action.Execute", "verb": "refresh"}},
	}
}

func delivery(profile map[string]any) *cardflow.Delivery {
	return &cardflow.Delivery{
		DeliveryID: "d1", OrganizationID: "org-a", WorkflowID: "wf", ExecutionID: "ex1", StepID: "approve",
		ProcessID: "PO-4711", CardID: "c1", CardVersion: 1, CardPayload: approvalCard(), Wait: 1, Teams: profile,
	}
}

// answerActions lists the card's Action.Submit, Action.Execute and
// Action.OpenUrl actions wherever they sit.
func answerActions(v any) []map[string]any {
	var out []map[string]any
	switch t := v.(type) {
	case map[string]any:
		switch t["type"] {
		case "Action.Submit", "Action.Execute", "Action.OpenUrl":
			out = append(out, t)
		}
		for _, e := range t {
			out = append(out, answerActions(e)...)
		}
	case []any:
		for _, e := range t {
			out = append(out, answerActions(e)...)
		}
	}
	return out
}

func TestOutboxIsTheDefault(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, p := range []map[string]any{nil, {"type": "outbox"}} {
		if err := f.in.Deliver(context.Background(), delivery(p)); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(f.outbox.d); got != 2 {
		t.Errorf("got %d deliveries in the outbox, want 2", got)
	}
	if got := len(f.fake.Requests("/")); got != 0 {
		t.Errorf("got %d requests to Teams, want none", got)
	}
}

func TestWebhookDelivery(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := f.in.Deliver(context.Background(), delivery(map[string]any{"type": "webhook", "webhook_secret": "approvals-hook"})); err != nil {
		t.Fatal(err)
	}
	reqs := f.fake.Requests("/webhook")
	if len(reqs) != 1 {
		t.Fatalf("got %d webhook posts, want 1", len(reqs))
	}
	body := reqs[0].Body
	if body["type"] != "message" {
		t.Errorf("got type %v, want message", body["type"])
	}
	atts, _ := body["attachments"].([]any)
	if len(atts) != 1 {
		t.Fatalf("got %d attachments, want 1", len(atts))
	}
	att := atts[0].(map[string]any)
	if got, ok := att["contentUrl"]; !ok || got != nil {
		t.Errorf("got contentUrl %v (present %v), want null", got, ok)
	}
	if got := att["contentType"]; got != "application/vnd.microsoft.card.adaptive" {
		t.Errorf("got contentType %v", got)
	}
	card := att["content"].(map[string]any)
	if err := cards.Validate(card); err != nil {
		t.Errorf("the card with response links is not a valid adaptive card: %v", err)
	}
	if _, ok := card["refresh"]; ok {
		t.Errorf("the refresh action stayed; a webhook card has no bot to refresh it")
	}
	actions := answerActions(card)
	if len(actions) != 3 {
		t.Fatalf("got %d answer actions, want 3: %v", len(actions), actions)
	}
	choices := map[string]any{}
	for _, a := range actions {
		if a["type"] != "Action.OpenUrl" {
			t.Fatalf("got %v, want every answer action turned into Action.OpenUrl", a)
		}
		u, err := url.Parse(a["url"].(string))
		if err != nil || u.Scheme+"://"+u.Host+u.Path != "https://cardflow.example.com/v1/teams/respond" {
			t.Fatalf("got link %v, want one to https://cardflow.example.com/v1/teams/respond", a["url"])
		}
		ref, err := teams.VerifyLink([]byte(signingKey), u.Query().Get("token"), f.clock.now())
		if err != nil {
			t.Fatal(err)
		}
		if ref.OrganizationID != "org-a" || ref.ProcessID != "PO-4711" || ref.ExecutionID != "ex1" || ref.Wait != 1 {
			t.Errorf("got ref %+v, want org-a, PO-4711, ex1, wait 1", ref)
		}
		if got, want := time.Unix(ref.Expires, 0), f.clock.now().Add(teams.DefaultLinkTTL); !got.Equal(want) {
			t.Errorf("got expiry %v, want %v", got, want)
		}
		choices[a["title"].(string)] = ref.Choice
	}
	if got := choices["Approve"].(map[string]any); got["decision"] != "approve" || got["verb"] != "approve" {
		t.Errorf("got Approve choice %v, want decision and verb approve", got)
	}
	if got := choices["Ask"]; got != "ask" {
		t.Errorf("got Ask choice %v, want the string data", got)
	}
	if got := actions[0]["style"]; got != nil && got != "positive" {
		t.Errorf("got style %v", got)
	}
}

func TestWebhookFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		secret   string // webhook_secret
		status   int    // what the webhook answers
		wantCode string // EINVALID fails the step; "" is a plain error worth a retry
		want     string
	}{
		{"missing secret", "nope", 0, cardflow.EINVALID, `secret "nope" is not set`},
		{"not https", "plain", 0, cardflow.EINVALID, "does not hold an https URL"},
		{"refused", "approvals-hook", 400, cardflow.EINVALID, "the Teams webhook refused the request: 400 Bad Request: The input body for trigger"},
		{"flow deleted", "approvals-hook", 404, cardflow.EINVALID, "404 Not Found"},
		{"throttled", "approvals-hook", 429, "", "answered 429"},
		{"server fault", "approvals-hook", 502, "", "answered 502"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := teamstest.New(t)
			fake.WebhookStatus = tt.status
			sec := secretMap{"signing": signingKey, "approvals-hook": fake.WebhookURL(), "plain": "http://example.com/hook"}
			in, err := teams.New(teams.Config{PublicURL: "https://cardflow.example.com", SigningSecret: "signing"}, &outbox{}, sec, sec.everyone, teams.WithHTTPClient(fake.Client()))
			if err != nil {
				t.Fatal(err)
			}
			err = in.Deliver(context.Background(), delivery(map[string]any{"type": "webhook", "webhook_secret": tt.secret}))
			if err == nil {
				t.Fatal("got no error")
			}
			code := cardflow.ErrorCode(err)
			if tt.wantCode == "" && code == cardflow.EINVALID || tt.wantCode != "" && code != tt.wantCode {
				t.Errorf("got code %s, want %q", code, tt.wantCode)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret-signature") || strings.Contains(err.Error(), "/webhook") {
				t.Errorf("the error %q shows the webhook URL, a credential", err)
			}
		})
	}
}

func TestWebhookLinksNeedPublicURL(t *testing.T) {
	t.Parallel()
	fake := teamstest.New(t)
	sec := secretMap{"signing": signingKey, "hook": fake.WebhookURL()}
	in, err := teams.New(teams.Config{SigningSecret: "signing"}, &outbox{}, sec, sec.everyone, teams.WithHTTPClient(fake.Client()))
	if err != nil {
		t.Fatal(err)
	}
	err = in.Deliver(context.Background(), delivery(map[string]any{"type": "webhook", "webhook_secret": "hook"}))
	if got := cardflow.ErrorMessage(err); !strings.Contains(got, "no public URL") {
		t.Errorf("got %q, want a message about the missing public URL", got)
	}
	// A card without buttons needs no links.
	d := delivery(map[string]any{"type": "webhook", "webhook_secret": "hook"})
	d.CardPayload = map[string]any{"type": "AdaptiveCard", "version": "1.5", "body": []any{map[string]any{"type": "TextBlock", "text": "FYI"}}}
	if err := in.Deliver(context.Background(), d); err != nil {
		t.Errorf("got %v, want a card without buttons delivered", err)
	}
}

func botProfile(fake *teamstest.Server) map[string]any {
	return map[string]any{"type": "bot", "service_url": fake.ServiceURL(), "conversation_id": "19:approvers@thread.tacv2;messageid=1", "tenant_id": "tenant-1"}
}

func TestBotDelivery(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if err := f.in.Deliver(ctx, delivery(botProfile(f.fake))); err != nil {
		t.Fatal(err)
	}
	reqs := f.fake.Requests("/connector/")
	if len(reqs) != 1 {
		t.Fatalf("got %d Bot Connector requests, want 1", len(reqs))
	}
	r := reqs[0]
	if want := "/connector/v3/conversations/19:approvers@thread.tacv2;messageid=1/activities"; r.Method != "POST" || r.Path != want {
		t.Errorf("got %s %s, want POST %s", r.Method, r.Path, want)
	}
	if r.Authorization != "Bearer access-token-1" {
		t.Errorf("got Authorization %q, want the issued token", r.Authorization)
	}
	if got := r.Body["type"]; got != "message" {
		t.Errorf("got activity type %v, want message", got)
	}
	tenant := r.Body["channelData"].(map[string]any)["tenant"].(map[string]any)["id"]
	if tenant != "tenant-1" {
		t.Errorf("got channelData.tenant.id %v, want tenant-1", tenant)
	}
	card := r.Body["attachments"].([]any)[0].(map[string]any)["content"]
	if _, ok := card.(map[string]any)["refresh"]; ok {
		t.Errorf("the refresh action stayed; Teams would run it without a person")
	}
	actions := answerActions(card)
	if len(actions) != 3 {
		t.Fatalf("got %d answer actions, want 3", len(actions))
	}
	// Each action's token offers that action's data (an Execute's verb
	// with it) and the card's inputs.
	offers := map[string]teams.Offer{
		"Approve": {Data: map[string]any{"decision": "approve", "verb": "approve"}, Inputs: []string{"comment", "until"}},
		"Reject":  {Data: map[string]any{"decision": "reject"}, Inputs: []string{"comment", "until"}},
		"Ask":     {Data: map[string]any{"data": "ask"}, Inputs: []string{"comment", "until"}},
	}
	for _, a := range actions {
		data, _ := a["data"].(map[string]any)
		token, _ := data[teams.DataKey].(string)
		ref, err := teams.VerifyAction([]byte(signingKey), token)
		if err != nil {
			t.Fatalf("action %v: %v", a["title"], err)
		}
		if ref.OrganizationID != "org-a" || ref.ProcessID != "PO-4711" || ref.Wait != 1 || ref.ExecutionID != "ex1" {
			t.Errorf("got ref %+v", ref)
		}
		if got, want := *ref.Offer, offers[a["title"].(string)]; !reflect.DeepEqual(got, want) {
			t.Errorf("action %v: got offer %+v, want %+v", a["title"], got, want)
		}
	}
	// The token is reused until shortly before it expires.
	if err := f.in.Deliver(ctx, delivery(botProfile(f.fake))); err != nil {
		t.Fatal(err)
	}
	if got := f.fake.TokensIssued(); got != 1 {
		t.Errorf("got %d tokens issued for two sends, want 1", got)
	}
	f.clock.add(56 * time.Minute)
	if err := f.in.Deliver(ctx, delivery(botProfile(f.fake))); err != nil {
		t.Fatal(err)
	}
	if got := f.fake.TokensIssued(); got != 2 {
		t.Errorf("got %d tokens issued after the first neared expiry, want 2", got)
	}
}

func TestBotDeliveryFailures(t *testing.T) {
	t.Parallel()
	fake := teamstest.New(t)
	mk := func(appSecret string, hosts []string) *teams.Integration {
		in, err := teams.New(teams.Config{
			SigningSecret: "signing", AppID: teamstest.AppID, AppSecret: "bot-secret", TokenURL: fake.TokenURL(),
			OpenIDMetadataURL: fake.MetadataURL(), ServiceHosts: hosts,
		}, &outbox{}, secretMap{"signing": signingKey, "bot-secret": appSecret}, secretMap{}.everyone, teams.WithHTTPClient(fake.Client()))
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	ctx := context.Background()

	err := mk("wrong-secret", []string{fake.Host()}).Deliver(ctx, delivery(botProfile(fake)))
	if cardflow.ErrorCode(err) != cardflow.EINVALID || !strings.Contains(err.Error(), "AADSTS7000215") {
		t.Errorf("wrong secret: got %v, want EINVALID quoting the token endpoint", err)
	}
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Errorf("the error %q shows the client secret", err)
	}

	err = mk(teamstest.AppSecret, nil).Deliver(ctx, delivery(botProfile(fake)))
	if cardflow.ErrorCode(err) != cardflow.EINVALID || !strings.Contains(err.Error(), "is not a Bot Connector host this deployment allows") {
		t.Errorf("foreign host: got %v, want EINVALID naming the host rule", err)
	}

	fake.ConnectorStatus = 404
	err = mk(teamstest.AppSecret, []string{fake.Host()}).Deliver(ctx, delivery(botProfile(fake)))
	if cardflow.ErrorCode(err) != cardflow.EINVALID || !strings.Contains(err.Error(), "conversation not found") {
		t.Errorf("unknown conversation: got %v, want EINVALID with the connector's message", err)
	}

	noBot, err := teams.New(teams.Config{}, &outbox{}, secretMap{}, secretMap{}.everyone)
	if err != nil {
		t.Fatal(err)
	}
	if err := noBot.Deliver(ctx, delivery(botProfile(fake))); !strings.Contains(cardflow.ErrorMessage(err), "has no Teams bot") {
		t.Errorf("no bot: got %v", err)
	}
}

func TestSecretNotSetFailsTheStep(t *testing.T) {
	t.Parallel()
	none := secrets.Env{Lookup: func(string) (string, bool) { return "", false }}
	in, err := teams.New(teams.Config{}, &outbox{}, secrets.ForDeployment(none), func(org string) teams.Secrets { return secrets.ForOrganization(none, org) })
	if err != nil {
		t.Fatal(err)
	}
	err = in.Deliver(context.Background(), delivery(map[string]any{"type": "webhook", "webhook_secret": "approvals-hook"}))
	if got, want := cardflow.ErrorMessage(err), `secret "approvals-hook" is not available`; cardflow.ErrorCode(err) != cardflow.EINVALID || got != want {
		t.Errorf("got %v, want VALIDATION_ERROR %q", err, want)
	}
}

// TestWebhookSecretsAreTheOrganizations plants the deployment's signing
// key and bot secret and two organizations' webhook URLs in one store. A
// delivery of org-a reaches its own webhook; one whose webhook_secret
// names org-b's webhook, the signing key, the bot secret or nothing that
// exists fails with one message and posts nothing anywhere.
func TestWebhookSecretsAreTheOrganizations(t *testing.T) {
	t.Parallel()
	fake, fakeB := teamstest.New(t), teamstest.New(t)
	env := map[string]string{
		secrets.EnvName(secrets.DeploymentKey("signing")):                signingKey,
		secrets.EnvName(secrets.DeploymentKey("bot-secret")):             teamstest.AppSecret,
		secrets.EnvName(secrets.OrganizationKey("org-a", "hook")):        fake.WebhookURL(),
		secrets.EnvName(secrets.OrganizationKey("org-b", "hook")):        fakeB.WebhookURL(),
		secrets.EnvName(secrets.OrganizationKey("org-b", "org-b-hook")):  fakeB.WebhookURL(),
		secrets.EnvName(secrets.OrganizationKey("org-b", "approvals/b")): fakeB.WebhookURL(),
	}
	store := secrets.Env{Lookup: func(name string) (string, bool) { v, ok := env[name]; return v, ok }}
	in, err := teams.New(teams.Config{PublicURL: "https://cardflow.example.com", SigningSecret: "signing"}, &outbox{},
		secrets.ForDeployment(store), func(org string) teams.Secrets { return secrets.ForOrganization(store, org) },
		teams.WithHTTPClient(fake.Client()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := in.Deliver(ctx, delivery(map[string]any{"type": "webhook", "webhook_secret": "hook"})); err != nil {
		t.Fatalf("org-a's own webhook: %v", err)
	}
	if got := len(fake.Requests("/webhook")); got != 1 {
		t.Fatalf("got %d posts to org-a's webhook, want 1", got)
	}
	for _, name := range []string{"org-b-hook", "approvals/b", "signing", "bot-secret", "missing", "../org-b/hook", "org/org-b/hook", "deployment/signing"} {
		err := in.Deliver(ctx, delivery(map[string]any{"type": "webhook", "webhook_secret": name}))
		if got, want := cardflow.ErrorMessage(err), fmt.Sprintf("secret %q is not available", name); cardflow.ErrorCode(err) != cardflow.EINVALID || got != want {
			t.Errorf("webhook_secret %q: got %v, want VALIDATION_ERROR %q", name, err, want)
		}
	}
	if got, gotB := len(fake.Requests("")), len(fakeB.Requests("")); got != 1 || gotB != 0 {
		t.Errorf("got %d requests to org-a's endpoints and %d to org-b's, want only org-a's post", got, gotB)
	}
}

// TestOutboxCopyCarriesNoLink: an approver's copy of an approval's card
// that stays in the service (local mode's outbox, the log on AWS) carries
// no personal link, which any key of the organization, or anyone reading
// the log, could use to answer as the approver. IssueApprovalLinks makes
// that approver's links, on request.
func TestOutboxCopyCarriesNoLink(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	d := delivery(nil)
	d.ApprovalID, d.Approvers, d.Approver = "ex1-0001", []string{"ann@example.com"}, "ann@example.com"
	if err := f.in.Deliver(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(f.outbox.d)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "/v1/teams/respond") || strings.Contains(string(b), "token=") {
		t.Errorf("outbox copy: got %s, want no personal link", b)
	}
	a := &cardflow.Approval{OrganizationID: "org-a", ExecutionID: "ex1", ProcessID: "PO-4711", Wait: 1, CardPayload: approvalCard()}
	links, err := f.in.IssueApprovalLinks(context.Background(), a, "ann@example.com")
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, l := range links {
		u, err := url.Parse(l.URL)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := teams.VerifyLink([]byte(signingKey), u.Query().Get("token"), f.clock.now())
		if err != nil || ref.Who != "ann@example.com" || ref.ExecutionID != "ex1" || ref.Wait != 1 {
			t.Errorf("link %s: got %+v, %v, want one answering as ann", l.URL, ref, err)
		}
		titles = append(titles, l.Title)
	}
	slices.Sort(titles)
	if want := []string{"", "Approve", "Ask", "Reject"}; !slices.Equal(titles, want) {
		t.Errorf("links: got %q, want %q", titles, want)
	}
}

// TestApprovalCopyGoesToItsApproversWebhook: by webhook, an approver's
// copy goes to the webhook approver_webhooks names for them, never to the
// shared webhook_secret; without one of their own (a person the step
// added later, a profile saved before approver_webhooks) the copy fails
// with what to add and nothing is posted. A card step's card, which names
// nobody, still goes to webhook_secret.
func TestApprovalCopyGoesToItsApproversWebhook(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	profile := map[string]any{"type": "webhook", "webhook_secret": "approvals-hook", "approver_webhooks": map[string]any{"ANN@example.com": "ann-hook"}}
	copyFor := func(who string) *cardflow.Delivery {
		d := delivery(profile)
		d.ApprovalID, d.Approvers, d.Approver = "ex1-0001", []string{"ann@example.com", "dan@example.com"}, who
		return d
	}
	err := f.in.Deliver(context.Background(), copyFor("dan@example.com"))
	if cardflow.ErrorCode(err) != cardflow.EINVALID || !strings.Contains(err.Error(), "no webhook of their own for dan@example.com: add approver_webhooks") {
		t.Errorf("dan's copy: got %v, want VALIDATION_ERROR naming dan and approver_webhooks", err)
	}
	if n := len(f.fake.Requests("/webhook")); n != 0 {
		t.Fatalf("dan's copy: got %d webhook posts, want none", n)
	}
	// ann-hook is not set in this fixture: the copy reads that secret,
	// not the shared one.
	err = f.in.Deliver(context.Background(), copyFor("ann@example.com"))
	if cardflow.ErrorCode(err) != cardflow.EINVALID || !strings.Contains(err.Error(), `"ann-hook" is not set`) {
		t.Errorf("ann's copy: got %v, want the error of ann-hook", err)
	}
	if err := f.in.Deliver(context.Background(), delivery(profile)); err != nil {
		t.Fatalf("a card step's card: %v", err)
	}
	if n := len(f.fake.Requests("/webhook")); n != 1 {
		t.Errorf("got %d webhook posts, want the card step's", n)
	}
}

// TestAnnouncementHasNoAnswer: the shared webhook's announcement of an
// approval keeps the card's text and drops every button that answers,
// wherever it sits, and the refresh.
func TestAnnouncementHasNoAnswer(t *testing.T) {
	t.Parallel()
	card := approvalCard()
	card["selectAction"] = map[string]any{"type": "Action.Submit", "data": "row"}
	got := teams.Announcement(card, []string{"ann@example.com", "dan@example.com"})
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Action.Submit", "Action.Execute", "refresh"} {
		if strings.Contains(string(b), s) {
			t.Errorf("announcement: got %s, want no %s", b, s)
		}
	}
	for _, s := range []string{"Approve 4800 EUR?", "Approvers answer from their own copies of this card: ann@example.com, dan@example.com."} {
		if !strings.Contains(string(b), s) {
			t.Errorf("announcement: got %s, want %q", b, s)
		}
	}
	if _, ok := card["refresh"]; !ok {
		t.Errorf("Announcement changed the card it was given")
	}
}
