package httpapi

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// WithTeams adds the endpoints Microsoft Teams answers cards through:
// POST /v1/teams/messages when the service answers a Teams bot, GET
// /v1/teams/respond when it answers response links. They authenticate by
// Bot Framework JWT and by signature, not by x-api-key.
//
// Like WithOutbox, the option adds the routes, so a program without Teams
// links none of their handlers.
func WithTeams() Option {
	return func(s *Server) { s.add(s.teamsRoutes()) }
}

func (s *Server) teamsRoutes() []route {
	var out []route
	if s.svc.AnswersBot() {
		out = append(out, route{"POST", "/v1/teams/messages", "", s.teamsMessage})
	}
	if s.svc.AnswersLinks() {
		out = append(out, route{"GET", "/v1/teams/respond", "", s.teamsRespond})
	}
	return out
}

// teamsMessage is the bot's messaging endpoint. Action.Execute gets the
// decision card in its invoke response; other activities get a success
// message.
func (s *Server) teamsMessage(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	out, err := s.svc.AnswerBotActivity(r.Context(), r.Header.Get("Authorization"), body)
	switch {
	case err != nil:
		return err
	case out.Reply != nil:
		return ok(w, out.Reply)
	case !out.Answered:
		return ok(w, map[string]string{"message": "success"})
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
	out, err := s.svc.AnswerLink(ctx, r.URL.Query().Get("token"))
	if err != nil {
		status := StatusOf(err)
		if status >= 500 {
			s.log.ErrorContext(ctx, "response link failed", "error", err)
			return page(status, "Something went wrong", "Your answer could not be recorded. Please try again later.", nil)
		}
		return page(status, "Your answer was not recorded", cardflow.ErrorMessage(err), nil)
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
		by = " by " + wait.Resume.Responder()
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
