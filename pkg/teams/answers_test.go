package teams_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/teams"
)

func TestVerifyActivity(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ref := teams.Ref{OrganizationID: "org-a", ProcessID: "PO-4711", ExecutionID: "ex1", Wait: 2}
	token := signAction(t, ref, teams.Offer{Data: map[string]any{"decision": "approve", "verb": "approve"}})
	rejectToken := signAction(t, ref, teams.Offer{Data: map[string]any{"decision": "reject"}})
	valid := "Bearer " + f.fake.Token(t, f.clock.now(), f.fake.ServiceURL())
	conversation := map[string]any{"id": "19:approvers@thread.tacv2", "tenantId": "tenant-1"}
	invoke := func(data map[string]any) map[string]any {
		return map[string]any{
			"type": "invoke", "name": "adaptiveCard/action", "channelId": "msteams", "serviceUrl": f.fake.ServiceURL(),
			"from":         map[string]any{"id": "29:ann", "name": "Ann Example", "aadObjectId": "aad-ann"},
			"conversation": conversation,
			"value":        map[string]any{"action": map[string]any{"type": "Action.Execute", "verb": "approve", "data": data}},
		}
	}
	with := func(a map[string]any, k string, v any) map[string]any {
		a[k] = v
		return a
	}
	submit := map[string]any{
		"type": "message", "channelId": "msteams", "serviceUrl": f.fake.ServiceURL(), "replyToId": "activity-1",
		"from":         map[string]any{"id": "29:carl", "name": "Carl Example"},
		"conversation": map[string]any{"id": "a:1-personal-chat"},
		"value":        map[string]any{"decision": "reject", teams.DataKey: rejectToken},
	}
	chat := map[string]any{"type": "message", "text": "hello", "channelId": "msteams", "serviceUrl": f.fake.ServiceURL(), "conversation": conversation}
	for _, tt := range []struct {
		name          string
		authorization string
		activity      any
		want          *cardflow.BotActivity
		code, mention string
	}{
		{"Action.Execute", valid, invoke(map[string]any{"decision": "approve", teams.DataKey: token}), &cardflow.BotActivity{
			Type:         "invoke",
			Conversation: cardflow.BotConversation{ServiceURL: f.fake.ServiceURL(), ConversationID: "19:approvers@thread.tacv2", TenantID: "tenant-1"},
			Answer: &cardflow.CardAnswer{OrganizationID: "org-a", ProcessID: "PO-4711", ExecutionID: "ex1", Wait: 2, Actor: "teams:aad-ann", Identities: []string{"aad-ann"}, Payload: map[string]any{
				"decision": "approve", "verb": "approve", "responder": map[string]any{"id": "29:ann", "name": "Ann Example", "aad_object_id": "aad-ann"},
			}},
			ReplyWithCard: true,
		}, "", ""},
		{"Action.Submit without an Azure AD id", valid, submit, &cardflow.BotActivity{
			Type:         "message",
			Conversation: cardflow.BotConversation{ServiceURL: f.fake.ServiceURL(), ConversationID: "a:1-personal-chat"},
			ReplyToID:    "activity-1",
			Answer: &cardflow.CardAnswer{OrganizationID: "org-a", ProcessID: "PO-4711", ExecutionID: "ex1", Wait: 2, Actor: "teams:29:carl", Payload: map[string]any{
				"decision": "reject", "responder": map[string]any{"id": "29:carl", "name": "Carl Example", "aad_object_id": ""},
			}},
		}, "", ""},
		{"chat message", valid, chat, &cardflow.BotActivity{
			Type:         "message",
			Conversation: cardflow.BotConversation{ServiceURL: f.fake.ServiceURL(), ConversationID: "19:approvers@thread.tacv2", TenantID: "tenant-1"},
		}, "", ""},
		{"no token", "", chat, nil, cardflow.EUNAUTHORIZED, "Bearer"},
		{"not an activity", valid, []any{"hello"}, nil, cardflow.EINVALID, "not a Bot Framework activity"},
		{"other service url", valid, with(invoke(map[string]any{teams.DataKey: token}), "serviceUrl", "https://smba.trafficmanager.net/emea/"), nil, cardflow.EUNAUTHORIZED, "serviceUrl is not the token's"},
		{"channel not endorsed", valid, with(invoke(map[string]any{teams.DataKey: token}), "channelId", "skype"), nil, cardflow.EUNAUTHORIZED, `does not endorse channel "skype"`},
		{"tampered data", valid, invoke(map[string]any{teams.DataKey: "x" + token}), nil, cardflow.EINVALID, "changed or cut short"},
		{"not our card", valid, invoke(map[string]any{"decision": "approve"}), nil, cardflow.EINVALID, "not sent by this service"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, err := json.Marshal(tt.activity)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.in.VerifyActivity(context.Background(), tt.authorization, body)
			if tt.code != "" {
				if cardflow.ErrorCode(err) != tt.code || !strings.Contains(cardflow.ErrorMessage(err), tt.mention) {
					t.Fatalf("got %v, want %s mentioning %q", err, tt.code, tt.mention)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v (answer %+v), want %+v (answer %+v)", got, got.Answer, tt.want, tt.want.Answer)
			}
		})
	}
}

func signAction(t *testing.T, ref teams.Ref, offer teams.Offer) string {
	t.Helper()
	token, err := teams.SignAction([]byte(signingKey), ref, offer)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// TestVerifyActivityOffers: an answer holds what its button's data says
// and the card's inputs, nothing else. Before each action's token signed
// its data and the card's input ids, one token served every button, and
// an answer could carry any decision and any field.
func TestVerifyActivityOffers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ref := teams.Ref{OrganizationID: "org-a", ProcessID: "PO-4711", ExecutionID: "ex1", Wait: 1}
	inputs := []string{"comment", "until"}
	approve := signAction(t, ref, teams.Offer{Data: map[string]any{"decision": "approve", "verb": "approve", "level": 2.0}, Inputs: inputs})
	reject := signAction(t, ref, teams.Offer{Data: map[string]any{"decision": "reject"}, Inputs: inputs})
	overridden := signAction(t, ref, teams.Offer{Data: map[string]any{"decision": "approve", "comment": "none"}, Inputs: inputs})
	// A token as cards posted before offers carried it: the reference
	// alone, validly signed.
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"o":"org-a","p":"PO-4711","x":"ex1","w":1}`))
	mac := hmac.New(sha256.New, []byte(signingKey))
	mac.Write([]byte("cardflow-teams-action\n" + payload))
	earlier := payload + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))

	valid := "Bearer " + f.fake.Token(t, f.clock.now(), f.fake.ServiceURL())
	execute := func(verb string, data map[string]any) map[string]any {
		return map[string]any{
			"type": "invoke", "name": "adaptiveCard/action", "channelId": "msteams", "serviceUrl": f.fake.ServiceURL(),
			"from":         map[string]any{"id": "29:eve", "name": "Eve Example", "aadObjectId": "aad-eve"},
			"conversation": map[string]any{"id": "19:approvers@thread.tacv2"},
			"value":        map[string]any{"action": map[string]any{"type": "Action.Execute", "verb": verb, "data": data}},
		}
	}
	submit := func(value map[string]any) map[string]any {
		return map[string]any{
			"type": "message", "channelId": "msteams", "serviceUrl": f.fake.ServiceURL(), "replyToId": "activity-1",
			"from":         map[string]any{"id": "29:eve", "name": "Eve Example", "aadObjectId": "aad-eve"},
			"conversation": map[string]any{"id": "a:1-personal-chat"},
			"value":        value,
		}
	}
	for _, tt := range []struct {
		name     string
		activity map[string]any
		want     map[string]any // the payload without the responder; nil: refused
		mention  string
	}{
		{"the button's data", execute("approve", map[string]any{"decision": "approve", "level": 2.0, teams.DataKey: approve}),
			map[string]any{"decision": "approve", "verb": "approve", "level": 2.0}, ""},
		{"with inputs", execute("approve", map[string]any{"decision": "approve", "level": 2.0, "comment": "ok", "until": "2026-12-01", teams.DataKey: approve}),
			map[string]any{"decision": "approve", "verb": "approve", "level": 2.0, "comment": "ok", "until": "2026-12-01"}, ""},
		{"submit", submit(map[string]any{"decision": "reject", "comment": "", teams.DataKey: reject}), map[string]any{"decision": "reject", "comment": ""}, ""},
		{"an input named as a data key", submit(map[string]any{"decision": "approve", "comment": "typed", teams.DataKey: overridden}),
			map[string]any{"decision": "approve", "comment": "typed"}, ""},
		{"a decision no button offers", execute("approve", map[string]any{"decision": "pay", "level": 2.0, teams.DataKey: approve}), nil,
			`this answer's "decision" is not what the card's button sends`},
		{"another button's decision", submit(map[string]any{"decision": "approve", teams.DataKey: reject}), nil, `"decision" is not what the card's button sends`},
		{"the decision left out", execute("approve", map[string]any{"level": 2.0, teams.DataKey: approve}), nil, `"decision" is not what the card's button sends`},
		{"the data's value changed", execute("approve", map[string]any{"decision": "approve", "level": 9.0, teams.DataKey: approve}), nil, `"level" is not what`},
		{"another verb", execute("escalate", map[string]any{"decision": "approve", "level": 2.0, teams.DataKey: approve}), nil, `"verb" is not what`},
		{"a verb on a submit button", execute("approve", map[string]any{"decision": "reject", teams.DataKey: reject}), nil,
			`this answer holds "verb", which is neither the button's data nor an input of the card`},
		{"a field the card does not have", submit(map[string]any{"decision": "reject", "amount": 1, teams.DataKey: reject}), nil,
			`this answer holds "amount", which is neither the button's data nor an input of the card`},
		{"a token of an earlier version", submit(map[string]any{"decision": "reject", teams.DataKey: earlier}), nil, "sent by an earlier version"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, err := json.Marshal(tt.activity)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.in.VerifyActivity(context.Background(), valid, body)
			if tt.want == nil {
				if cardflow.ErrorCode(err) != cardflow.EINVALID || !strings.Contains(cardflow.ErrorMessage(err), tt.mention) {
					t.Fatalf("got %v, want VALIDATION_ERROR mentioning %q", err, tt.mention)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			payload := got.Answer.Payload
			delete(payload, "responder")
			if !reflect.DeepEqual(payload, tt.want) {
				t.Errorf("got payload %v, want %v", payload, tt.want)
			}
		})
	}
}

func TestVerifyResponseLink(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	link := func(choice any, expires time.Time) string {
		t.Helper()
		token, err := teams.SignLink([]byte(signingKey), teams.Ref{OrganizationID: "org-a", ProcessID: "PO-4711", ExecutionID: "ex1", Wait: 1, Choice: choice, Expires: expires.Unix()})
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	later := f.clock.now().Add(time.Hour)
	via := map[string]any{"via": "response link"}
	for _, tt := range []struct {
		name    string
		token   string
		want    map[string]any
		mention string
	}{
		{"object choice", link(map[string]any{"decision": "approve", "verb": "approve"}, later), map[string]any{"decision": "approve", "verb": "approve", "responder": via}, ""},
		{"other choice", link("ask", later), map[string]any{"choice": "ask", "responder": via}, ""},
		{"no choice", link(nil, later), map[string]any{"responder": via}, ""},
		{"expired", link("ask", f.clock.now().Add(-time.Minute)), nil, "expired on"},
		{"tampered", "x" + link("ask", later), nil, "changed or cut short"},
		// A field this version does not know, such as the approver a
		// personal link will name, refuses the link instead of being
		// ignored.
		{"unknown field", signedLink(t, `{"o":"org-a","p":"PO-4711","x":"ex1","w":1,"c":"ask","e":`+strconv.FormatInt(later.Unix(), 10)+`,"u":"ann@example.com"}`), nil, "not valid"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.in.VerifyResponseLink(context.Background(), tt.token)
			if tt.mention != "" {
				if cardflow.ErrorCode(err) != cardflow.EINVALID || !strings.Contains(cardflow.ErrorMessage(err), tt.mention) {
					t.Fatalf("got %v, want VALIDATION_ERROR mentioning %q", err, tt.mention)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := &cardflow.CardAnswer{OrganizationID: "org-a", ProcessID: "PO-4711", ExecutionID: "ex1", Wait: 1, Actor: "teams:response-link", Payload: tt.want}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

// signedLink signs a link's raw payload, as the service signs links.
func signedLink(t *testing.T, payload string) string {
	t.Helper()
	p := base64.RawURLEncoding.EncodeToString([]byte(payload))
	h := hmac.New(sha256.New, []byte(signingKey))
	h.Write([]byte("cardflow-teams-link\n" + p))
	return p + "." + base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func TestResponseLinkConfirmation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	ref := teams.Ref{OrganizationID: "org-a", ProcessID: "PO-4711", ExecutionID: "ex1", Wait: 1, Choice: map[string]any{"decision": "approve"}, Title: "Approve", Expires: f.clock.now().Add(time.Hour).Unix()}
	approve, err := teams.SignLink([]byte(signingKey), ref)
	if err != nil {
		t.Fatal(err)
	}
	ref.Choice, ref.Title = map[string]any{"decision": "reject"}, "Reject"
	reject, err := teams.SignLink([]byte(signingKey), ref)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.in.VerifyResponseLink(ctx, approve)
	if err != nil || got.Label != "Approve" {
		t.Fatalf("got %+v, %v, want the button's title", got, err)
	}
	confirm, err := f.in.ConfirmResponseLink(ctx, approve)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, token, confirmation string
		ok                        bool
	}{
		{"its own link", approve, confirm, true},
		{"another link", reject, confirm, false},
		{"tampered", approve, "A" + confirm[1:], false},
		{"none", approve, "", false},
		{"signed with another key", approve, teams.SignConfirmation([]byte("another key of more than thirty-two characters"), approve), false},
	} {
		err := f.in.VerifyConfirmation(ctx, tt.token, tt.confirmation)
		if tt.ok != (err == nil) || (err != nil && cardflow.ErrorCode(err) != cardflow.EINVALID) {
			t.Errorf("%s: got %v, want ok: %v", tt.name, err, tt.ok)
		}
	}
}

func TestDecisionReplies(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	o := cardflow.CardOutcome{Title: "Manager approval", Decision: &cardflow.Resume{Actor: "teams:aad-ann", Payload: map[string]any{"decision": "approve"}}}
	reply := f.in.DecisionReply(o)
	if reply["statusCode"] != 200 || reply["type"] != teams.ContentType || !reflect.DeepEqual(reply["value"], teams.DecisionCard(o)) {
		t.Errorf("got %v, want an invoke response with the decision card", reply)
	}

	conv := cardflow.BotConversation{ServiceURL: f.fake.ServiceURL(), ConversationID: "a:1-personal-chat", TenantID: "tenant-1"}
	if err := f.in.ReplaceCard(context.Background(), conv, "activity-1", o); err != nil {
		t.Fatal(err)
	}
	reqs := f.fake.Requests("/connector/")
	if len(reqs) != 1 {
		t.Fatalf("got %d Bot Connector requests, want 1", len(reqs))
	}
	r := reqs[0]
	if want := "/connector/v3/conversations/a:1-personal-chat/activities/activity-1"; r.Method != "PUT" || r.Path != want {
		t.Errorf("got %s %s, want PUT %s", r.Method, r.Path, want)
	}
	card := r.Body["attachments"].([]any)[0].(map[string]any)["content"]
	if got, want := jsonText(t, card), jsonText(t, teams.DecisionCard(o)); got != want {
		t.Errorf("replacing card: got %s, want %s", got, want)
	}

	conv.ServiceURL = "https://example.com/"
	if err := f.in.ReplaceCard(context.Background(), conv, "activity-1", o); cardflow.ErrorCode(err) != cardflow.EINVALID {
		t.Errorf("replacing through a host that is no Bot Connector: got %v, want VALIDATION_ERROR", err)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
