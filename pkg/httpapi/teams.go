package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// WithTeams adds the endpoints Microsoft Teams answers cards through:
// POST /v1/teams/messages, GET, HEAD and POST /v1/teams/respond when the
// service answers response links. They authenticate by Bot Framework JWT
// and by signature, not by x-api-key. The messaging endpoint is there
// without a bot too, and refuses every request as unauthenticated (401):
// no Bot Framework token is valid where no bot is.
//
// Like WithOutbox, the option adds the routes, so a program without Teams
// links none of their handlers.
func WithTeams() Option {
	return func(s *Server) {
		s.add(TeamsMessages.routes(s))
		s.addLinkRoutes()
	}
}

// WithResponseLinks adds only the response link endpoints, for a program
// that answers links and is not the bot's messaging endpoint (the
// teamsRespond function on AWS).
func WithResponseLinks() Option {
	return func(s *Server) { s.addLinkRoutes() }
}

// addLinkRoutes adds the response link endpoint when the service answers
// links.
func (s *Server) addLinkRoutes() {
	if s.svc.Links != nil {
		s.add(TeamsRespond.routes(s))
	}
}

// teamsRespond is a response link's page (GET, HEAD) and its confirmation
// form's answer (POST).
func (s *Server) teamsRespond(w http.ResponseWriter, r *http.Request) error {
	if r.Method == http.MethodPost {
		return s.teamsAnswerLink(w, r)
	}
	return s.teamsOpenLink(w, r)
}

// teamsMessage is the bot's messaging endpoint. Action.Execute gets the
// decision card in its invoke response; other activities get a success
// message.
func (s *Server) teamsMessage(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	if s.svc.Bot == nil {
		return cardflow.Errorf(cardflow.EUNAUTHORIZED, "this deployment has no Teams bot, so no Bot Framework token is accepted")
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

// teamsOpenLink opens a signed response link (GET or HEAD): a page with
// the card's question and a form that confirms the answer, or what was
// decided. It records nothing, so link scanners and previews, which open
// links before people do, answer nothing.
func (s *Server) teamsOpenLink(w http.ResponseWriter, r *http.Request) error {
	page, err := s.svc.OpenLink(r.Context(), r.URL.Query().Get("token"))
	s.writeLinkPage(w, r, page, err)
	return nil
}

// maxFormBytes bounds the confirmation form's body: a link's token and
// the confirmation token.
const maxFormBytes = 16 << 10

// teamsAnswerLink records a response link's answer, given the confirmation
// form of the link's page, and shows what was decided.
func (s *Server) teamsAnswerLink(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFormBytes))
	var form url.Values
	if err == nil {
		form, err = url.ParseQuery(string(body))
	}
	var page *app.LinkPage
	if err != nil {
		err = cardflow.Errorf(cardflow.EINVALID, "this confirmation is not valid: open the link again and confirm on its page")
	} else {
		page, err = s.svc.AnswerLink(r.Context(), form.Get("token"), form.Get("confirmation"))
	}
	s.writeLinkPage(w, r, page, err)
	return nil
}

// writeLinkPage shows a response link's page, or why it cannot be shown.
// A decided request is not an error for the person who clicked: they see
// the decision with 200.
func (s *Server) writeLinkPage(w http.ResponseWriter, r *http.Request, page *app.LinkPage, err error) {
	var b strings.Builder
	status := http.StatusOK
	switch {
	case err != nil:
		status = StatusOf(err)
		msg := cardflow.ErrorMessage(err)
		if status >= 500 {
			s.log.ErrorContext(r.Context(), "response link failed", "error", err)
			msg = "Your answer could not be recorded. Please try again later."
		}
		pageStart(&b, "Your answer was not recorded")
		para(&b, msg)
	case page.Confirmation != "":
		pageStart(&b, orDefault(page.StepName, "Confirm your answer"))
		requestedBy(&b, page.Approval)
		if len(page.Question) > 0 {
			b.WriteString(`<section aria-labelledby="q"><h2 id="q">The request</h2>`)
			for _, line := range page.Question {
				para(&b, line)
			}
			b.WriteString(`</section>`)
		}
		b.WriteString(`<section aria-labelledby="a"><h2 id="a">Your answer</h2>`)
		if page.Choice != "" {
			fmt.Fprintf(&b, `<p class="choice">%s</p>`, html.EscapeString(page.Choice))
		}
		facts(&b, page.ChoiceData)
		para(&b, "Nothing is recorded until you confirm.")
		fmt.Fprintf(&b, `<form method="post" action="respond"><input type="hidden" name="token" value="%s"><input type="hidden" name="confirmation" value="%s"><button type="submit">%s</button></form></section>`,
			html.EscapeString(r.URL.Query().Get("token")), html.EscapeString(page.Confirmation), html.EscapeString("Confirm: "+orDefault(page.Choice, "send this answer")))
	case page.Approval != nil:
		approvalPage(&b, page)
	case page.Recorded:
		pageStart(&b, orDefault(page.StepName, "Response"))
		para(&b, "Thank you: your answer was recorded.")
		facts(&b, answerFacts(page.Decided))
	case page.Decided != nil:
		pageStart(&b, orDefault(page.StepName, "Response"))
		when := time.UnixMilli(page.Decided.ReceivedOn).UTC().Format("2 Jan 2006 15:04 MST")
		by := ""
		if who, _ := page.Decided.Payload.(map[string]any)["responder"].(map[string]any); who["name"] != nil {
			by = " by " + page.Decided.Responder()
		}
		para(&b, "This request was already answered"+by+" on "+when+"; nothing more was recorded.")
		facts(&b, answerFacts(page.Decided))
	case page.TimedOut:
		pageStart(&b, orDefault(page.StepName, "Response"))
		para(&b, "This request timed out before it was answered; nothing was recorded.")
	default:
		pageStart(&b, orDefault(page.StepName, "Response"))
		para(&b, page.Closed)
	}
	b.WriteString("</main></body></html>\n")
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Robots-Tag", "noindex, nofollow")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = io.WriteString(w, b.String())
	}
}

// answerFacts lists an answer's fields for the page.
func answerFacts(res *cardflow.Resume) map[string]any {
	payload, _ := res.Payload.(map[string]any)
	out := map[string]any{}
	for k, v := range payload {
		if k != "source" && k != "responder" {
			out[k] = v
		}
	}
	return out
}

// pageStyle is the page's only style; the Content-Security-Policy allows
// it by its hash, and nothing else: no script, no other origin, no frame.
const pageStyle = `body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#242424;line-height:1.4}h1{font-size:1.3rem}h2{font-size:1rem}dt{font-weight:600}dd{margin:0 0 .5rem}.choice{font-weight:600;font-size:1.1rem}button{font:inherit;padding:.5rem 1rem;border:2px solid #242424;border-radius:4px;background:#fff;color:#242424;cursor:pointer}button:focus{outline:3px solid #0f6cbd;outline-offset:2px}`

var pageCSP = func() string {
	sum := sha256.Sum256([]byte(pageStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}()

// pageStart opens a page. Pages are written by hand rather than with
// html/template, whose use of reflection would keep every method of every
// type in each Lambda binary that links this package; every value goes
// through html.EscapeString.
func pageStart(b *strings.Builder, title string) {
	t := html.EscapeString(title)
	fmt.Fprintf(b, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex, nofollow">
<title>%s</title><style>%s</style></head><body><main><h1>%s</h1>`, t, pageStyle, t)
}

func para(b *strings.Builder, text string) {
	fmt.Fprintf(b, "<p>%s</p>", html.EscapeString(text))
}

// facts lists fields, sorted by name.
func facts(b *strings.Builder, m map[string]any) {
	if len(m) == 0 {
		return
	}
	b.WriteString("<dl>")
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, ok := m[k].(string)
		if !ok {
			j, _ := json.Marshal(m[k])
			v = string(j)
		}
		fmt.Fprintf(b, "<dt>%s</dt><dd>%s</dd>", html.EscapeString(k), html.EscapeString(v))
	}
	b.WriteString("</dl>")
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
