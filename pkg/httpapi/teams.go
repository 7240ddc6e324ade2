package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/teams"
)

// WithTeams adds the endpoints Microsoft Teams answers cards through:
// POST /v1/teams/messages when in has a bot, GET /v1/teams/respond when it
// has a signing secret. They authenticate by Bot Framework JWT and by
// signature, not by x-api-key.
//
// Like WithOutbox, the option adds the routes, so a program without Teams
// links none of their handlers.
func WithTeams(in *teams.Integration) Option {
	return func(s *Server) {
		if in == nil {
			return
		}
		s.teams = in
		s.add(s.teamsRoutes())
	}
}

func (s *Server) teamsRoutes() []route {
	var out []route
	if s.teams.HasBot() {
		out = append(out, route{"POST", "/v1/teams/messages", "", s.teamsMessage})
	}
	if s.teams.HasLinks() {
		out = append(out, route{"GET", "/v1/teams/respond", "", s.teamsRespond})
	}
	return out
}

// answerContext acts for the organization a verified card names, as the
// person who answered.
func answerContext(ctx context.Context, org, actor string) context.Context {
	return cardflow.NewContextWithPrincipal(ctx, &cardflow.Principal{OrganizationID: org, Scopes: []string{cardflow.ScopeExecute}, Actor: actor})
}

// teamsMessage is the bot's messaging endpoint. Action.Execute gets the
// decision card in its invoke response; Action.Submit gets its card
// replaced through the Bot Connector. Activities that answer no card are
// acknowledged and ignored.
func (s *Server) teamsMessage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	claims, err := s.teams.Verify(ctx, r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	// Activities carry many fields this endpoint does not read, so unknown
	// fields are fine here.
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	var a teams.Activity
	if err := json.Unmarshal(body, &a); err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "the body is not a Bot Framework activity: %v", err)
	}
	// The token names the Bot Connector it came through; the activity must
	// not claim another, or a reply could go elsewhere.
	if claims.ServiceURL != "" && !strings.EqualFold(strings.TrimRight(claims.ServiceURL, "/"), strings.TrimRight(a.ServiceURL, "/")) {
		return cardflow.Errorf(cardflow.EUNAUTHORIZED, "Bot Framework token: the activity's serviceUrl is not the token's")
	}
	if len(claims.Endorsements) > 0 && !slices.Contains(claims.Endorsements, a.ChannelID) {
		return cardflow.Errorf(cardflow.EUNAUTHORIZED, "Bot Framework token: its signing key does not endorse channel %q", a.ChannelID)
	}
	ans, err := teams.ParseAnswer(&a)
	if err != nil {
		return err
	}
	if ans == nil {
		// Installing the bot or writing to it lands here: the log names
		// the conversation, for a workflow's teams profile.
		s.log.InfoContext(ctx, "Teams conversation", "type", a.Type, "service_url", a.ServiceURL,
			"conversation_id", a.Conversation.ID, "tenant_id", a.Conversation.TenantID)
		return ok(w, map[string]string{"message": "success"})
	}
	key, err := s.teams.SigningKey(ctx)
	if err != nil {
		return err
	}
	ref, err := teams.VerifyAction(key, ans.Token)
	if err != nil {
		return err
	}
	who := map[string]any{"id": a.From.ID, "name": a.From.Name, "aad_object_id": a.From.AADObjectID}
	actor := a.From.AADObjectID
	if actor == "" {
		actor = a.From.ID
	}
	payload := ans.Data
	payload["responder"] = who
	out, err := s.svc.AnswerCard(answerContext(ctx, ref.OrganizationID, "teams:"+actor), app.AnswerInput{
		ProcessID: ref.ProcessID, ExecutionID: ref.ExecutionID, Wait: ref.Wait, Payload: payload,
	})
	var card map[string]any
	switch {
	case cardflow.ErrorCode(err) == cardflow.ECONFLICT:
		// The card's request ended without this answer (cancelled, moved
		// on): the approver sees why instead of an error.
		card = teams.DecisionCard(teams.Outcome{Note: "Your answer was not recorded: " + cardflow.ErrorMessage(err) + "."})
		out = &app.AnswerOutput{}
	case err != nil:
		return err
	default:
		card = teams.DecisionCard(teams.Outcome{Title: out.StepName, Decision: out.Wait.Resume, TimedOut: out.Wait.TimedOut})
	}
	if ans.Execute {
		return ok(w, teams.InvokeResponse(card))
	}
	if a.ReplyToID != "" {
		conv := teams.Conversation{ServiceURL: a.ServiceURL, ConversationID: a.Conversation.ID, TenantID: a.Conversation.TenantID}
		if err := s.teams.UpdateCard(ctx, conv, a.ReplyToID, card); err != nil {
			// The answer counts; only the card stays as it was.
			s.log.WarnContext(ctx, "replacing an answered card failed", "error", err)
		}
	}
	return ok(w, map[string]any{"message": "success", "resumed": out.Resumed})
}

// teamsRespond opens a signed response link: it answers the card's wait
// once and shows a page saying what happened.
func (s *Server) teamsRespond(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	page := func(status int, title, text string, facts map[string]string) error {
		writePage(w, status, title, text, facts)
		return nil
	}
	fail := func(err error) error {
		status := StatusOf(err)
		if status >= 500 {
			s.log.ErrorContext(ctx, "response link failed", "error", err)
			return page(status, "Something went wrong", "Your answer could not be recorded. Please try again later.", nil)
		}
		return page(status, "Your answer was not recorded", cardflow.ErrorMessage(err), nil)
	}
	key, err := s.teams.SigningKey(ctx)
	if err != nil {
		return fail(err)
	}
	ref, err := teams.VerifyLink(key, r.URL.Query().Get("token"), s.teams.Now())
	if err != nil {
		return fail(err)
	}
	payload, _ := ref.Choice.(map[string]any)
	if payload == nil {
		payload = map[string]any{}
		if ref.Choice != nil {
			payload["choice"] = ref.Choice
		}
	}
	payload["responder"] = map[string]any{"via": "response link"}
	out, err := s.svc.AnswerCard(answerContext(ctx, ref.OrganizationID, "teams:response-link"), app.AnswerInput{
		ProcessID: ref.ProcessID, ExecutionID: ref.ExecutionID, Wait: ref.Wait, Payload: payload,
	})
	if err != nil {
		return fail(err)
	}
	wait := out.Wait
	switch {
	case out.Resumed:
		return page(http.StatusOK, out.StepName, "Thank you: your answer was recorded.", factsOf(wait.Resume))
	case wait.TimedOut:
		return page(http.StatusConflict, out.StepName, "This request timed out before it was answered; your answer was not recorded.", nil)
	}
	by := ""
	if who, _ := wait.Resume.Payload.(map[string]any)["responder"].(map[string]any); who["name"] != nil {
		by = " by " + teams.Responder(wait.Resume)
	}
	return page(http.StatusConflict, out.StepName, "This request was already answered"+by+"; a response link works once.", factsOf(wait.Resume))
}

// factsOf lists an answer's fields for the result page.
func factsOf(res *cardflow.Resume) map[string]string {
	payload, _ := res.Payload.(map[string]any)
	out := map[string]string{}
	for k, v := range payload {
		if k == "source" || k == "responder" {
			continue
		}
		if s, ok := v.(string); ok {
			out[k] = s
		} else {
			b, _ := json.Marshal(v)
			out[k] = string(b)
		}
	}
	return out
}

// pageHead opens every page; the page is written by hand rather than with
// html/template, whose use of reflection would keep every method of every
// type in each Lambda binary that links this package.
const pageHead = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>%[1]s</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#242424}h1{font-size:1.3rem}dt{font-weight:600}dd{margin:0 0 .5rem}</style>
</head><body><h1>%[1]s</h1><p>%[2]s</p>`

// writePage answers with a small HTML page, for people who opened a link.
func writePage(w http.ResponseWriter, status int, title, text string, facts map[string]string) {
	if title == "" {
		title = "Response"
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	var b strings.Builder
	fmt.Fprintf(&b, pageHead, html.EscapeString(title), html.EscapeString(text))
	if len(facts) > 0 {
		b.WriteString("<dl>")
		for _, k := range slices.Sorted(maps.Keys(facts)) {
			fmt.Fprintf(&b, "<dt>%s</dt><dd>%s</dd>", html.EscapeString(k), html.EscapeString(facts[k]))
		}
		b.WriteString("</dl>")
	}
	b.WriteString("</body></html>\n")
	io.WriteString(w, b.String())
}
