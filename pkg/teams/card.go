package teams

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// DataKey is the key of the signed Ref in a bot card's action data.
const DataKey = "cardflow"

// ContentType is the attachment and invoke-response type of adaptive cards.
const ContentType = "application/vnd.microsoft.card.adaptive"

// isAnswerAction reports whether v is an action that answers the card.
func isAnswerAction(v map[string]any) bool {
	t, _ := v["type"].(string)
	return t == "Action.Submit" || t == "Action.Execute"
}

// rewriteActions returns a deep copy of card with every Action.Submit and
// Action.Execute replaced by what f makes of it, wherever it sits (card
// actions, action sets, show-card cards, select actions).
func rewriteActions(card map[string]any, f func(action map[string]any) (map[string]any, error)) (map[string]any, error) {
	var walk func(v any) (any, error)
	walk = func(v any) (any, error) {
		switch t := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(t))
			for k, e := range t {
				w, err := walk(e)
				if err != nil {
					return nil, err
				}
				out[k] = w
			}
			if isAnswerAction(out) {
				return f(out)
			}
			return out, nil
		case []any:
			out := make([]any, len(t))
			for i, e := range t {
				w, err := walk(e)
				if err != nil {
					return nil, err
				}
				out[i] = w
			}
			return out, nil
		}
		return v, nil
	}
	out, err := walk(card)
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	return m, nil
}

// WithActionData returns card with a token added to the data of every
// Action.Submit and Action.Execute, under DataKey: what sign makes of the
// action's offer (its data and the card's inputs). Data that is not an
// object moves to "data". The refresh goes: Teams runs it by itself when
// the card is shown, and an answer must come from a person.
func WithActionData(card map[string]any, sign func(Offer) (string, error)) (map[string]any, error) {
	inputs := inputIDs(card)
	out, err := rewriteActions(card, func(a map[string]any) (map[string]any, error) {
		data, ok := a["data"].(map[string]any)
		if !ok {
			data = map[string]any{}
			if a["data"] != nil {
				data["data"] = a["data"]
			}
		}
		token, err := sign(offerOf(a, data, inputs))
		if err != nil {
			return nil, err
		}
		data[DataKey] = token
		a["data"] = data
		return a, nil
	})
	if out != nil {
		delete(out, "refresh")
	}
	return out, err
}

// WithResponseLinks returns card with every Action.Submit and
// Action.Execute turned into an Action.OpenUrl to the link that link makes
// of the action's data and title. Inputs cannot travel in a link, and a
// refresh action needs a bot, so the refresh goes.
func WithResponseLinks(card map[string]any, link func(choice any, title string) (string, error)) (map[string]any, error) {
	out, err := rewriteActions(card, func(a map[string]any) (map[string]any, error) {
		choice := a["data"]
		if verb, ok := a["verb"].(string); ok && verb != "" {
			m, _ := choice.(map[string]any)
			if m == nil {
				m = map[string]any{}
			}
			if _, ok := m["verb"]; !ok {
				m["verb"] = verb
			}
			choice = m
		}
		title, _ := a["title"].(string)
		u, err := link(choice, title)
		if err != nil {
			return nil, err
		}
		open := map[string]any{"type": "Action.OpenUrl", "url": u}
		for _, k := range []string{"id", "title", "iconUrl", "style", "tooltip", "isEnabled", "mode"} {
			if v, ok := a[k]; ok {
				open[k] = v
			}
		}
		return open, nil
	})
	if out != nil {
		delete(out, "refresh")
	}
	return out, err
}

// Announcement is an approval's card as a shared chat or channel sees it:
// its text without any button that answers (those answer as an approver,
// from their own copy) and a line saying so.
func Announcement(card map[string]any, approvers []string) map[string]any {
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(t))
			for k, e := range t {
				if m, ok := e.(map[string]any); ok && isAnswerAction(m) {
					continue // a selectAction
				}
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, 0, len(t))
			for _, e := range t {
				if m, ok := e.(map[string]any); ok && isAnswerAction(m) {
					continue
				}
				out = append(out, walk(e))
			}
			return out
		}
		return v
	}
	out, _ := walk(card).(map[string]any)
	if out == nil {
		out = map[string]any{"type": "AdaptiveCard", "version": "1.4"}
	}
	delete(out, "refresh")
	body, _ := out["body"].([]any)
	out["body"] = append(body, textBlock("Approvers answer from their own copies of this card: "+strings.Join(approvers, ", ")+".", map[string]any{"isSubtle": true}))
	return out
}

// hidden are payload keys the decision card does not list.
var hidden = map[string]bool{"source": true, "responder": true, DataKey: true}

// DecisionCard is the card that replaces an answered card: it shows the
// decision and who made it, and has no buttons, so it cannot be answered
// twice.
func DecisionCard(o cardflow.CardOutcome) map[string]any {
	body := []any{}
	if o.Title != "" {
		body = append(body, textBlock(o.Title, map[string]any{"weight": "Bolder", "size": "Medium"}))
	}
	switch {
	case o.Decision != nil:
		when := time.UnixMilli(o.Decision.ReceivedOn).UTC().Format("2 Jan 2006 15:04 MST")
		body = append(body, textBlock(fmt.Sprintf("Answered by %s on %s", o.Decision.Responder(), when), map[string]any{"isSubtle": true}))
		payload, _ := o.Decision.Payload.(map[string]any)
		keys := make([]string, 0, len(payload))
		for k := range payload {
			if !hidden[k] {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		facts := make([]any, 0, len(keys))
		for _, k := range keys {
			facts = append(facts, map[string]any{"title": k, "value": factValue(payload[k])})
		}
		if len(facts) > 0 {
			body = append(body, map[string]any{"type": "FactSet", "facts": facts})
		}
	case o.TimedOut:
		body = append(body, textBlock("This request timed out; no answer was recorded.", nil))
	case o.Note != "":
		body = append(body, textBlock(o.Note, nil))
	default:
		body = append(body, textBlock("This request is closed; no answer was recorded.", nil))
	}
	return map[string]any{
		"type":    "AdaptiveCard",
		"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
		"version": "1.4",
		"body":    body,
	}
}

func textBlock(text string, extra map[string]any) map[string]any {
	b := map[string]any{"type": "TextBlock", "text": text, "wrap": true}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func factValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return strings.TrimSpace(string(b))
}

// WithNote returns card with a line of small, subtle text at the end of
// its body, such as who asked for an approval; card stays as it is.
func WithNote(card map[string]any, text string) map[string]any {
	c := make(map[string]any, len(card)+1)
	for k, v := range card {
		c[k] = v
	}
	body, _ := card["body"].([]any)
	c["body"] = append(body[:len(body):len(body)], textBlock(text, map[string]any{"isSubtle": true, "size": "Small"}))
	return c
}
