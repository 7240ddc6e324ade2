package teams_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/fakes/teamstest"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/teams"
)

func TestVerify(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	now := f.clock.now()
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	svc := f.fake.ServiceURL()
	with := func(change func(c map[string]any)) map[string]any {
		c := teamstest.Claims(now, svc)
		change(c)
		return c
	}
	tests := []struct {
		name   string
		header string
		want   string // substring of the error; "" means valid
	}{
		{"valid", "Bearer " + f.fake.Token(t, now, svc), ""},
		{"audience list", "Bearer " + teamstest.Sign(t, f.fake.Key, teamstest.KeyID, "RS256", with(func(c map[string]any) { c["aud"] = []string{"x", teamstest.AppID} })), ""},
		{"expired within skew", "Bearer " + teamstest.Sign(t, f.fake.Key, teamstest.KeyID, "RS256", with(func(c map[string]any) { c["exp"] = now.Add(-4 * time.Minute).Unix() })), ""},
		{"expired", "Bearer " + teamstest.Sign(t, f.fake.Key, teamstest.KeyID, "RS256", with(func(c map[string]any) { c["exp"] = now.Add(-6 * time.Minute).Unix() })), "it expired at"},
		{"no expiry", "Bearer " + teamstest.Sign(t, f.fake.Key, teamstest.KeyID, "RS256", with(func(c map[string]any) { delete(c, "exp") })), "no expiry"},
		{"not yet valid", "Bearer " + teamstest.Sign(t, f.fake.Key, teamstest.KeyID, "RS256", with(func(c map[string]any) { c["nbf"] = now.Add(10 * time.Minute).Unix() })), "not valid before"},
		{"wrong issuer", "Bearer " + teamstest.Sign(t, f.fake.Key, teamstest.KeyID, "RS256", with(func(c map[string]any) { c["iss"] = "https://sts.windows.net/evil/" })), `issuer "https://sts.windows.net/evil/" is not "https://api.botframework.com"`},
		{"wrong audience", "Bearer " + teamstest.Sign(t, f.fake.Key, teamstest.KeyID, "RS256", with(func(c map[string]any) { c["aud"] = "another-bot" })), "audience is not this bot's app id"},
		{"no service url", "Bearer " + teamstest.Sign(t, f.fake.Key, teamstest.KeyID, "RS256", with(func(c map[string]any) { delete(c, "serviceurl") })), "no serviceurl claim"},
		{"empty service url", "Bearer " + teamstest.Sign(t, f.fake.Key, teamstest.KeyID, "RS256", with(func(c map[string]any) { c["serviceurl"] = "" })), "no serviceurl claim"},
		{"unknown kid", "Bearer " + teamstest.Sign(t, other, "rotated-away", "RS256", teamstest.Claims(now, svc)), `signing key "rotated-away" is not one of`},
		{"bad signature", "Bearer " + teamstest.Sign(t, other, teamstest.KeyID, "RS256", teamstest.Claims(now, svc)), "signature does not verify"},
		{"alg none", "Bearer " + teamstest.Sign(t, f.fake.Key, teamstest.KeyID, "none", teamstest.Claims(now, svc)), `alg "none" is not RS256`},
		{"alg HS256", "Bearer " + teamstest.Sign(t, f.fake.Key, teamstest.KeyID, "HS256", teamstest.Claims(now, svc)), `alg "HS256" is not RS256`},
		{"no bearer", "Basic abc", "must carry Bearer"},
		{"empty", "", "must carry Bearer"},
		{"not a JWT", "Bearer abc.def", "not a JWT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims, err := f.in.Verify(context.Background(), tt.header)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v, want a valid token", err)
				}
				if claims.ServiceURL != svc || claims.Endorsements[0] != "msteams" {
					t.Errorf("got claims %+v, want the service URL and the key's endorsements", claims)
				}
				return
			}
			if got := cardflow.ErrorCode(err); got != cardflow.EUNAUTHORIZED {
				t.Fatalf("got code %q (%v), want UNAUTHORIZED", got, err)
			}
			if got := cardflow.ErrorMessage(err); !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

// TestVerifyEndorsements publishes keys with and without endorsements: a
// key that lists them must endorse msteams; one that lists none may sign.
func TestVerifyEndorsements(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mux.HandleFunc("/openid", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": teamstest.Issuer, "jwks_uri": srv.URL + "/keys"})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"keys": []any{
			teamstest.JWK(&key.PublicKey, "teams", "skype", "msteams"),
			teamstest.JWK(&key.PublicKey, "webchat", "webchat", "directline"),
			teamstest.JWK(&key.PublicKey, "unendorsed"),
		}})
	})
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	v, err := teams.NewVerifier(srv.URL+"/openid", "", teamstest.AppID, srv.Client(), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	const serviceURL = "https://smba.trafficmanager.net/emea/"
	for _, tc := range []struct {
		kid  string
		want string // substring of the error; "" means valid
	}{
		{"teams", ""},
		{"unendorsed", ""},
		{"webchat", `its signing key does not endorse channel "msteams"`},
	} {
		claims, err := v.Verify(context.Background(), "Bearer "+teamstest.Sign(t, key, tc.kid, "RS256", teamstest.Claims(now, serviceURL)))
		if tc.want == "" {
			if err != nil || claims.ServiceURL != serviceURL {
				t.Errorf("key %s: got %+v, %v, want the token valid", tc.kid, claims, err)
			}
			continue
		}
		if cardflow.ErrorCode(err) != cardflow.EUNAUTHORIZED || !strings.Contains(cardflow.ErrorMessage(err), tc.want) {
			t.Errorf("key %s: got %v, want UNAUTHORIZED containing %q", tc.kid, err, tc.want)
		}
	}
}

func TestVerifyCachesKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	svc := f.fake.ServiceURL()
	for i := 0; i < 3; i++ {
		if _, err := f.in.Verify(ctx, "Bearer "+f.fake.Token(t, f.clock.now(), svc)); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.fake.KeyFetches(); got != 1 {
		t.Errorf("got %d key fetches for three tokens, want 1", got)
	}
	// An unknown key id fetches again, but not more than once a minute.
	unknown := "Bearer " + teamstest.Sign(t, f.fake.Key, "new-kid", "RS256", teamstest.Claims(f.clock.now(), svc))
	f.clock.add(2 * time.Minute)
	for i := 0; i < 3; i++ {
		f.in.Verify(ctx, unknown)
	}
	if got := f.fake.KeyFetches(); got != 2 {
		t.Errorf("got %d key fetches after three unknown key ids, want 2", got)
	}
	// After a day the keys are fetched again.
	f.clock.add(24 * time.Hour)
	if _, err := f.in.Verify(ctx, "Bearer "+f.fake.Token(t, f.clock.now(), svc)); err != nil {
		t.Fatal(err)
	}
	if got := f.fake.KeyFetches(); got != 3 {
		t.Errorf("got %d key fetches after a day, want 3", got)
	}
}

func TestSignedTokens(t *testing.T) {
	t.Parallel()
	key := []byte(signingKey)
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	ref := teams.Ref{OrganizationID: "org-a", ProcessID: "PO-1", ExecutionID: "ex1", Wait: 2, Choice: map[string]any{"decision": "approve"}, Expires: now.Add(time.Hour).Unix()}
	link, err := teams.SignLink(key, ref)
	if err != nil {
		t.Fatal(err)
	}
	action, err := teams.SignAction(key, ref, teams.Offer{Data: map[string]any{"decision": "approve"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := teams.VerifyLink(key, link, now)
	if err != nil || got.OrganizationID != "org-a" || got.Wait != 2 || got.Choice.(map[string]any)["decision"] != "approve" {
		t.Fatalf("got %+v, %v, want the ref back", got, err)
	}
	payload, sig, _ := strings.Cut(link, ".")
	forged := strings.Replace(payload, payload[:4], "eyJv", 1) + "." + sig
	tests := []struct {
		name, token string
		verify      func(string) (*teams.Ref, error)
		want        string
	}{
		{"expired", link, func(s string) (*teams.Ref, error) { return teams.VerifyLink(key, s, now.Add(2*time.Hour)) }, "expired on"},
		{"other key", link, func(s string) (*teams.Ref, error) {
			return teams.VerifyLink([]byte("another key of thirty-two bytes!!"), s, now)
		}, "changed or cut short"},
		{"cut short", link[:len(link)-3], func(s string) (*teams.Ref, error) { return teams.VerifyLink(key, s, now) }, "changed or cut short"},
		{"payload changed", forged + "x", func(s string) (*teams.Ref, error) { return teams.VerifyLink(key, s, now) }, "changed or cut short"},
		{"action as link", action, func(s string) (*teams.Ref, error) { return teams.VerifyLink(key, s, now) }, "changed or cut short"},
		{"link as action", link, func(s string) (*teams.Ref, error) { return teams.VerifyAction(key, s) }, "card's response data is not valid"},
		{"empty", "", func(s string) (*teams.Ref, error) { return teams.VerifyLink(key, s, now) }, "changed or cut short"},
	}
	for _, tt := range tests {
		_, err := tt.verify(tt.token)
		if cardflow.ErrorCode(err) != cardflow.EINVALID || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want VALIDATION_ERROR containing %q", tt.name, err, tt.want)
		}
	}
	big := ref
	big.Choice = strings.Repeat("x", 600)
	if _, err := teams.SignLink(key, big); cardflow.ErrorCode(err) != cardflow.EINVALID {
		t.Errorf("got %v, want a too large choice refused", err)
	}
}

func TestParseAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		activity teams.Activity
		want     *teams.Answer // nil: not a card answer
		wantErr  string
	}{
		{"execute", teams.Activity{Type: "invoke", Name: "adaptiveCard/action", Value: []byte(`{"action": {"type": "Action.Execute", "verb": "approve", "data": {"decision": "approve", "comment": "ok", "cardflow": "tok"}}, "trigger": "manual"}`)},
			&teams.Answer{Execute: true, Token: "tok", Data: map[string]any{"decision": "approve", "comment": "ok", "verb": "approve"}}, ""},
		{"submit", teams.Activity{Type: "message", Value: []byte(`{"decision": "reject", "cardflow": "tok"}`)},
			&teams.Answer{Token: "tok", Data: map[string]any{"decision": "reject"}}, ""},
		{"chat message", teams.Activity{Type: "message"}, nil, ""},
		{"other card's submit", teams.Activity{Type: "message", Value: []byte(`{"x": 1}`)}, nil, ""},
		{"conversation update", teams.Activity{Type: "conversationUpdate"}, nil, ""},
		{"execute without token", teams.Activity{Type: "invoke", Name: "adaptiveCard/action", Value: []byte(`{"action": {"verb": "approve"}}`)}, nil, "carries no \"cardflow\" data"},
		{"execute bad value", teams.Activity{Type: "invoke", Name: "adaptiveCard/action", Value: []byte(`[1]`)}, nil, "invoke's value is not"},
	}
	for _, tt := range tests {
		got, err := teams.ParseAnswer(&tt.activity)
		if tt.wantErr != "" {
			if cardflow.ErrorCode(err) != cardflow.EINVALID || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: got %v, want VALIDATION_ERROR containing %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if (got == nil) != (tt.want == nil) {
			t.Fatalf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
		if got == nil {
			continue
		}
		if got.Execute != tt.want.Execute || got.Token != tt.want.Token || len(got.Data) != len(tt.want.Data) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
		for k, v := range tt.want.Data {
			if got.Data[k] != v {
				t.Errorf("%s: got data[%s] = %v, want %v", tt.name, k, got.Data[k], v)
			}
		}
	}
}

func TestDecisionCard(t *testing.T) {
	t.Parallel()
	res := &cardflow.Resume{Source: "TEAMS", Actor: "teams:aad-1", ReceivedOn: time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC).UnixMilli(),
		Payload: map[string]any{"source": "TEAMS", "decision": "approve", "amount": 4800.0, "responder": map[string]any{"name": "Ann Example"}}}
	card := teams.DecisionCard(cardflow.CardOutcome{Title: "Manager approval", Decision: res})
	if _, ok := card["actions"]; ok {
		t.Errorf("the decision card has actions; it must not be answerable again")
	}
	if err := cards.Validate(card); err != nil {
		t.Errorf("the decision card is not a valid adaptive card: %v", err)
	}
	text := strings.Join(texts(card), "|")
	for _, want := range []string{"Manager approval", "Answered by Ann Example on 21 Nov 2026 09:30 UTC", "decision=approve", "amount=4800"} {
		if !strings.Contains(text, want) {
			t.Errorf("got %q, want it to contain %q", text, want)
		}
	}
	if strings.Contains(text, "responder") || strings.Contains(text, "source") {
		t.Errorf("got %q, want source and responder left out of the facts", text)
	}
	timedOut := strings.Join(texts(teams.DecisionCard(cardflow.CardOutcome{Title: "x", TimedOut: true})), "|")
	if !strings.Contains(timedOut, "timed out") {
		t.Errorf("got %q, want a timed-out note", timedOut)
	}
}

// texts lists a card's text blocks and facts (as title=value).
func texts(v any) []string {
	var out []string
	switch t := v.(type) {
	case map[string]any:
		if s, ok := t["text"].(string); ok {
			out = append(out, s)
		}
		if title, ok := t["title"].(string); ok {
			out = append(out, title+"="+t["value"].(string))
		}
		for _, e := range t {
			out = append(out, texts(e)...)
		}
	case []any:
		for _, e := range t {
			out = append(out, texts(e)...)
		}
	}
	return out
}
