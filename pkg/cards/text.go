package cards

import (
	"context"
	"strings"
)

// Reader reads what a card asks, as plain text, for pages that show a card
// without an Adaptive Cards renderer (a response link's confirmation page).
type Reader struct{}

// Bounds of CardText, so a long card still makes a small page.
const (
	maxTextLines = 40
	maxTextRunes = 4000
)

// CardText expands the card template payload with data, as a card step
// does before it sends it, and returns its text, one line per text block,
// rich text block or fact ("title: value"), in reading order. Inputs,
// images and actions have no text to read there; hidden elements are left
// out.
func (Reader) CardText(ctx context.Context, payload map[string]any, data any) ([]string, error) {
	card, err := ExpandCard(ctx, payload, data)
	if err != nil {
		return nil, err
	}
	var out []string
	left := maxTextRunes
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s == "" || len(out) == maxTextLines || left <= 0 {
			return
		}
		if r := []rune(s); len(r) > left {
			s = string(r[:left]) + "…"
		}
		left -= len([]rune(s))
		out = append(out, s)
	}
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case []any:
			for _, e := range t {
				walk(e)
			}
		case map[string]any:
			if visible, ok := t["isVisible"].(bool); ok && !visible {
				return
			}
			switch t["type"] {
			case "TextBlock":
				s, _ := t["text"].(string)
				add(s)
			case "RichTextBlock":
				var b strings.Builder
				inlines, _ := t["inlines"].([]any)
				for _, in := range inlines {
					switch r := in.(type) {
					case string:
						b.WriteString(r)
					case map[string]any:
						s, _ := r["text"].(string)
						b.WriteString(s)
					}
				}
				add(b.String())
			case "FactSet":
				facts, _ := t["facts"].([]any)
				for _, f := range facts {
					m, _ := f.(map[string]any)
					title, _ := m["title"].(string)
					value, _ := m["value"].(string)
					add(strings.TrimSpace(title + ": " + value))
				}
			default:
				// Containers: their children, in order.
				for _, k := range []string{"body", "items", "columns", "rows", "cells"} {
					walk(t[k])
				}
			}
		}
	}
	walk(card)
	return out, nil
}
