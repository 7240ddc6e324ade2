package cards

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// decode parses a card as the API does.
func decode(t *testing.T, name string, data []byte) map[string]any {
	t.Helper()
	var card map[string]any
	if err := json.Unmarshal(data, &card); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return card
}

// message returns the message of an error of Validate, "" for nil, and
// fails the test if the error is not an EINVALID *cardflow.Error.
func message(t *testing.T, name string, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	if code := cardflow.ErrorCode(err); code != cardflow.EINVALID {
		t.Errorf("%s: got code %q, want %q", name, code, cardflow.EINVALID)
	}
	return cardflow.ErrorMessage(err)
}

// card wraps body elements in a card of version 1.5.
func card(body string) string {
	return `{"type": "AdaptiveCard", "version": "1.5", "body": [` + body + `]}`
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, card, want string
	}{
		{
			name: "empty object",
			card: `{}`,
			want: `card_payload: AdaptiveCard requires "type"; card_payload: AdaptiveCard requires "version"`,
		},
		{
			name: "valid lang",
			card: `{"type": "AdaptiveCard", "version": "1.5", "lang": "de", "body": [{"type": "TextBlock", "text": "Hallo", "lang": "DE"}]}`,
		},
		{
			name: "bad lang",
			card: card(`{"type": "TextBlock", "text": "Hello", "lang": "english"}`),
			want: `card_payload.body[0].lang: must be a language code such as "en", got "english"`,
		},
		{
			name: "many problems",
			card: card(`{"type": "TextBlock"}, {"type": "TextBlock"}, {"type": "TextBlock"},
				{"type": "TextBlock"}, {"type": "TextBlock"}, {"type": "TextBlock"}, {"type": "TextBlock"}`),
			want: `card_payload.body[0]: TextBlock requires "text"; card_payload.body[1]: TextBlock requires "text"; ` +
				`card_payload.body[2]: TextBlock requires "text"; card_payload.body[3]: TextBlock requires "text"; ` +
				`card_payload.body[4]: TextBlock requires "text"; and 2 more problems`,
		},
		{
			name: "long value",
			card: card(`{"type": "TextBlock", "text": "x", "size": "an unreasonably long size that goes on and on"}`),
			want: `card_payload.body[0].size: must be one of "default", "small", "medium", "large", "extraLarge", ` +
				`got "an unreasonably long size that goes on a…"`,
		},
		{
			name: "quoted property name",
			card: card(`{"type": "Input.ChoiceSet", "id": "c", "choices": [{"title": "a", "value": "a"}], "choices.data": {}}`),
			want: `card_payload.body[0]["choices.data"]: is new in Adaptive Cards 1.6; cards must be 1.5 or older`,
		},
		{
			name: "unknown selectAction despite fallback",
			card: card(`{"type": "Container", "items": [], "selectAction": {"type": "Action.Popover", "fallback": "drop"}}`),
			want: `card_payload.body[0].selectAction.type: unknown action type "Action.Popover"`,
		},
		{
			name: "unknown inline",
			card: card(`{"type": "RichTextBlock", "inlines": [{"type": "Mention", "text": "@a"}]}`),
			want: `card_payload.body[0].inlines[0].type: unknown inline type "Mention"`,
		},
		{
			name: "fallback chain",
			card: card(`{"type": "Chart.Pie", "fallback": {"type": "Chart.Donut", "id": "c",
				"fallback": {"type": "TextBlock", "id": "c", "text": "no chart"}}}`),
		},
		{
			name: "id shared with fallback of an enclosing container",
			card: card(`{"type": "Container", "items": [{"type": "Input.Text", "id": "a"}],
				"fallback": {"type": "Input.Text", "id": "a"}}`),
		},
		{
			name: "ids in two fallbacks",
			card: card(`{"type": "Foo", "fallback": {"type": "Input.Text", "id": "a"}},
				{"type": "Bar", "fallback": {"type": "Input.Text", "id": "a"}}`),
			want: `card_payload.body[1].fallback.id: duplicate id "a", also used at card_payload.body[0].fallback.id`,
		},
		{
			name: "id beside a fallback of a sibling",
			card: card(`{"type": "Container", "items": [{"type": "Input.Text", "id": "a"}]},
				{"type": "Container", "items": [], "fallback": {"type": "Input.Text", "id": "a"}}`),
			want: `card_payload.body[1].fallback.id: duplicate id "a", also used at card_payload.body[0].items[0].id`,
		},
		{
			name: "prefix of another index",
			card: card(`{"type": "Foo", "fallback": {"type": "Input.Text", "id": "a"}},
				{"type": "TextBlock", "text": "1"}, {"type": "TextBlock", "text": "2"}, {"type": "TextBlock", "text": "3"},
				{"type": "TextBlock", "text": "4"}, {"type": "TextBlock", "text": "5"}, {"type": "TextBlock", "text": "6"},
				{"type": "TextBlock", "text": "7"}, {"type": "TextBlock", "text": "8"}, {"type": "TextBlock", "text": "9"},
				{"type": "Input.Text", "id": "a"}`),
			want: `card_payload.body[10].id: duplicate id "a", also used at card_payload.body[0].fallback.id`,
		},
		{
			name: "toggle target inside a ShowCard",
			card: `{"type": "AdaptiveCard", "version": "1.5",
				"actions": [
					{"type": "Action.ShowCard", "card": {"type": "AdaptiveCard", "body": [{"type": "TextBlock", "id": "more", "text": "x"}]}},
					{"type": "Action.ToggleVisibility", "targetElements": ["more"]}
				]}`,
		},
		{
			name: "version of a ShowCard's card is its host's",
			card: `{"type": "AdaptiveCard", "version": "1.5",
				"actions": [{"type": "Action.ShowCard", "card": {"type": "AdaptiveCard", "version": "1.6"}}]}`,
		},
		{
			name: "old version",
			card: `{"type": "AdaptiveCard", "version": "0.5"}`,
		},
		{
			name: "far future version",
			card: `{"type": "AdaptiveCard", "version": "12.0"}`,
			want: `card_payload.version: must be "1.5" or older, got "12.0"`,
		},
		{
			name: "enumeration of one value",
			card: `{"type": "AdaptiveCard", "version": "1.5", "msteams": {"width": "full"}}`,
		},
		{
			name: "requires",
			card: card(`{"type": "TextBlock", "text": "x", "requires": {"a": "*", "b": "1.2", "c": "1.2.3", "d": "1"}}`),
			want: `card_payload.body[0].requires.d: must be "*" or a version such as "1.0", got "1"`,
		},
	}
	for _, tt := range tests {
		got := message(t, tt.name, Validate(decode(t, tt.name, []byte(tt.card))))
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// TestValidateGoValues validates cards built in Go rather than decoded, whose
// numbers need not be float64.
func TestValidateGoValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		card map[string]any
		want string
	}{
		{
			name: "int and json.Number",
			card: map[string]any{
				"type": "AdaptiveCard", "version": "1.5",
				"body": []any{
					map[string]any{"type": "TextBlock", "text": "x", "maxLines": 2},
					map[string]any{"type": "Input.Number", "id": "n", "min": json.Number("1"), "max": uint8(9)},
				},
			},
		},
		{
			name: "typed slice",
			card: map[string]any{"type": "AdaptiveCard", "version": "1.5", "body": []map[string]any{}},
			want: `card_payload.body: must be an array, got a []map[string]interface {}`,
		},
		{
			name: "nil",
			card: nil,
			want: `card_payload: AdaptiveCard requires "type"; card_payload: AdaptiveCard requires "version"`,
		},
	}
	for _, tt := range tests {
		got := message(t, tt.name, Validate(tt.card))
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// corpusWant holds what Validate says of each broken card of the corpus.
// Valid cards are named valid-*.json, broken ones invalid-*.json.
var corpusWant = map[string]string{
	"invalid-action-mode.json":                 `card_payload.actions[0].mode: must be one of "primary", "secondary", got "hidden"`,
	"invalid-action-style.json":                `card_payload.actions[0].style: must be one of "default", "positive", "destructive", got "danger"`,
	"invalid-background-fill-mode.json":        `card_payload.body[0].backgroundImage.fillMode: must be one of "cover", "repeatHorizontally", "repeatVertically", "repeat", got "stretch"`,
	"invalid-card-type.json":                   `card_payload.type: must be "AdaptiveCard", got "MessageCard"`,
	"invalid-choice-without-value.json":        `card_payload.body[0].choices[1]: Input.Choice requires "value"`,
	"invalid-choiceset-style.json":             `card_payload.body[0].style: must be one of "compact", "expanded", "filtered", got "dropdown"`,
	"invalid-choiceset-without-choices.json":   `card_payload.body[0].choices: must hold at least one choice`,
	"invalid-column-width.json":                `card_payload.body[0].columns[1].width: must be "auto", "stretch", a weight such as 2 or a size in pixels such as "50px", got "wide"`,
	"invalid-container-style.json":             `card_payload.body[0].style: must be one of "default", "emphasis", "good", "attention", "warning", "accent", got "danger"`,
	"invalid-duplicate-element-ids.json":       `card_payload.body[2].id: duplicate id "comment", also used at card_payload.body[1].id`,
	"invalid-duplicate-id-action-element.json": `card_payload.actions[0].id: duplicate id "approve", also used at card_payload.body[0].id`,
	"invalid-duplicate-id-from-fallback.json":  `card_payload.body[1].fallback.id: duplicate id "total", also used at card_payload.body[0].id`,
	"invalid-duplicate-id-in-showcard.json":    `card_payload.actions[0].card.body[0].id: duplicate id "reason", also used at card_payload.body[0].id`,
	"invalid-element-in-table-row.json":        `card_payload.body[0].rows[0].cells[0].type: "TextBlock" is not allowed here`,
	"invalid-fallback-to-unknown.json":         `card_payload.body[0].fallback.type: unknown element type "Chart.Donut"`,
	"invalid-height-not-string.json":           `card_payload.body[0].height: must be one of "auto", "stretch", got 200`,
	"invalid-image-set-size.json":              `card_payload.body[0].imageSize: must be one of "small", "medium", "large", got "auto"`,
	"invalid-image-width.json":                 `card_payload.body[0].width: must be a size in pixels such as "50px", got 120`,
	"invalid-input-id-not-string.json":         `card_payload.body[0].id: must be a string, got 7`,
	"invalid-input-without-id.json":            `card_payload.body[1]: Input.Text requires "id"`,
	"invalid-min-height.json":                  `card_payload.body[0].minHeight: must be a size in pixels such as "50px", got "100"`,
	"invalid-openurl-empty-url.json":           `card_payload.body[0].selectAction.url: must not be empty`,
	"invalid-openurl-without-url.json":         `card_payload.actions[0]: Action.OpenUrl requires "url"`,
	"invalid-property-from-1.6.json":           `card_payload.body[0].labelPosition: is new in Adaptive Cards 1.6; cards must be 1.5 or older`,
	"invalid-refresh-action-type.json":         `card_payload.refresh.action.type: "Action.Submit" is not allowed here`,
	"invalid-refresh-user-ids.json":            `card_payload.refresh.userIds[1]: must be a string, got 42`,
	"invalid-requires-version.json":            `card_payload.body[0].requires["acme.liveStatus"]: must be "*" or a version such as "1.0", got "latest"`,
	"invalid-selectaction-showcard.json":       `card_payload.body[0].selectAction.type: "Action.ShowCard" is not allowed here`,
	"invalid-showcard-card-type.json":          `card_payload.actions[0].card.type: must be "AdaptiveCard", got "Container"`,
	"invalid-showcard-without-card.json":       `card_payload.actions[0]: Action.ShowCard requires "card"`,
	"invalid-table-column-width.json":          `card_payload.body[0].columns[1].width: must be a weight such as 2 or a size in pixels such as "50px", got "stretch"`,
	"invalid-text-input-style.json":            `card_payload.body[0].style: must be one of "text", "tel", "url", "email", "password", got "phone"`,
	"invalid-textblock-in-inlines.json":        `card_payload.body[0].inlines[1].type: "TextBlock" is not allowed here`,
	"invalid-textblock-size.json":              `card_payload.body[0].size: must be one of "default", "small", "medium", "large", "extraLarge", got "huge"`,
	"invalid-unknown-action.json":              `card_payload.actions[0].type: unknown action type "Action.Foo"`,
	"invalid-unknown-element-in-column.json":   `card_payload.body[2].columns[0].items[1].type: unknown element type "Map"`,
	"invalid-unknown-element-in-showcard.json": `card_payload.actions[0].card.body[0].type: unknown element type "Input.RichText"`,
	"invalid-version-empty.json":               `card_payload.version: must be a version such as "1.5", got ""`,
	"invalid-version-not-a-version.json":       `card_payload.version: must be a version such as "1.5", got "latest"`,
	"invalid-version-too-new.json":             `card_payload.version: must be "1.5" or older, got "1.6"`,
}

type corpusCard struct {
	name string
	data []byte
}

func readCorpus(t *testing.T) []corpusCard {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var corpus []corpusCard
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, corpusCard{filepath.Base(f), data})
	}
	return corpus
}

func TestValidateCorpus(t *testing.T) {
	t.Parallel()
	seen := make(map[string]bool)
	for _, c := range readCorpus(t) {
		seen[c.name] = true
		want, broken := corpusWant[c.name]
		if broken != strings.HasPrefix(c.name, "invalid-") || !broken && !strings.HasPrefix(c.name, "valid-") {
			t.Errorf("%s: name it invalid-*.json with an entry in corpusWant, or valid-*.json without", c.name)
			continue
		}
		got := message(t, c.name, Validate(decode(t, c.name, c.data)))
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, want)
		}
	}
	for name := range corpusWant {
		if !seen[name] {
			t.Errorf("corpusWant has %s, which is not in testdata/corpus", name)
		}
	}
}

// goOnlyTests are broken cards whose problem Microsoft's parser does not
// see (TestAgreesWithMicrosoftParser checks that it accepts them), so they
// stay out of the corpus. Its reasons: it ignores strings, booleans and
// numbers of the wrong type and anything that is not an object where an
// element goes; it requires few of the properties the specification does;
// it accepts a card without type or version, and any version string that
// contains one; it never looks at a fallback it does not use, nor at the
// content an enclosing fallback replaces, once parsed; it knows nothing of
// msteams; it does not count the ids of TextRuns and inline actions; and
// it takes a misplaced type, or a missing one, for an unknown type that a
// fallback may replace.
var goOnlyTests = []struct {
	name, card, want string
}{
	{
		name: "no type",
		card: `{"version": "1.5"}`,
		want: `card_payload: AdaptiveCard requires "type"`,
	},
	{
		name: "no version",
		card: `{"type": "AdaptiveCard", "body": [{"type": "TextBlock", "text": "x"}]}`,
		want: `card_payload: AdaptiveCard requires "version"`,
	},
	{
		name: "version number",
		card: `{"type": "AdaptiveCard", "version": 1.5}`,
		want: `card_payload.version: must be a version string such as "1.5", got 1.5`,
	},
	{
		name: "version of three parts",
		card: `{"type": "AdaptiveCard", "version": "1.5.3"}`,
		want: `card_payload.version: must be a version such as "1.5", got "1.5.3"`,
	},
	{
		name: "schema number",
		card: `{"$schema": 5, "type": "AdaptiveCard", "version": "1.5"}`,
		want: `card_payload.$schema: must be a string, got 5`,
	},
	{
		name: "body not an array",
		card: `{"type": "AdaptiveCard", "version": "1.5", "body": {"type": "TextBlock", "text": "x"}}`,
		want: `card_payload.body: must be an array, got an object`,
	},
	{
		name: "element not an object",
		card: card(`"Hello"`),
		want: `card_payload.body[0]: must be an element, got "Hello"`,
	},
	{
		name: "element without type",
		card: card(`{"text": "Hello", "fallback": "drop"}`),
		want: `card_payload.body[0]: element requires "type"`,
	},
	{
		name: "misplaced type with fallback",
		card: card(`{"type": "Column", "items": [], "fallback": "drop"}`),
		want: `card_payload.body[0].type: "Column" is not allowed here`,
	},
	{
		name: "bad fallback",
		card: card(`{"type": "Rating", "fallback": "none"}`),
		want: `card_payload.body[0].fallback: must be "drop" or an element, got "none"`,
	},
	{
		name: "unused fallback",
		card: card(`{"type": "TextBlock", "text": "x", "fallback": {"type": "TextBlock", "text": "y", "size": "huge"}}`),
		want: `card_payload.body[0].fallback.size: must be one of "default", "small", "medium", "large", "extraLarge", got "huge"`,
	},
	{
		name: "content an enclosing fallback replaces",
		card: card(`{"type": "Container", "fallback": "drop", "items": [{"type": "Chart.Bar"}, {"type": "Input.Text", "label": "x"}]}`),
		want: `card_payload.body[0].items[1]: Input.Text requires "id"`,
	},
	{
		name: "TextBlock without text",
		card: card(`{"type": "TextBlock", "weight": "bolder"}`),
		want: `card_payload.body[0]: TextBlock requires "text"`,
	},
	{
		name: "boolean as string",
		card: card(`{"type": "TextBlock", "text": "x", "wrap": "true"}`),
		want: `card_payload.body[0].wrap: must be true or false, got "true"`,
	},
	{
		name: "enumeration as number",
		card: card(`{"type": "TextBlock", "text": "x", "size": 3}`),
		want: `card_payload.body[0].size: must be one of "default", "small", "medium", "large", "extraLarge", got 3`,
	},
	{
		name: "number as string",
		card: card(`{"type": "TextBlock", "text": "x", "maxLines": "2"}`),
		want: `card_payload.body[0].maxLines: must be a number, got "2"`,
	},
	{
		name: "string as number",
		card: card(`{"type": "TextBlock", "text": 42}`),
		want: `card_payload.body[0].text: must be a string, got 42`,
	},
	{
		name: "minHeight number",
		card: card(`{"type": "Container", "items": [], "minHeight": 50}`),
		want: `card_payload.body[0].minHeight: must be a size in pixels such as "50px", got 50`,
	},
	{
		name: "Image without url",
		card: card(`{"type": "Image", "altText": "Logo"}`),
		want: `card_payload.body[0]: Image requires "url"`,
	},
	{
		name: "ImageSet of TextBlock",
		card: card(`{"type": "ImageSet", "images": [{"type": "TextBlock", "url": "https://example.com/a.png"}]}`),
		want: `card_payload.body[0].images[0].type: "TextBlock" is not allowed here`,
	},
	{
		name: "Media without sources",
		card: card(`{"type": "Media", "poster": "https://example.com/p.png"}`),
		want: `card_payload.body[0]: Media requires "sources"`,
	},
	{
		name: "MediaSource without url",
		card: card(`{"type": "Media", "sources": [{"mimeType": "video/mp4"}]}`),
		want: `card_payload.body[0].sources[0]: MediaSource requires "url"`,
	},
	{
		name: "Fact without value",
		card: card(`{"type": "FactSet", "facts": [{"title": "Owner"}]}`),
		want: `card_payload.body[0].facts[0]: Fact requires "value"`,
	},
	{
		name: "Container without items",
		card: card(`{"type": "Container", "style": "emphasis"}`),
		want: `card_payload.body[0]: Container requires "items"`,
	},
	{
		name: "ActionSet without actions",
		card: card(`{"type": "ActionSet"}`),
		want: `card_payload.body[0]: ActionSet requires "actions"`,
	},
	{
		name: "RichTextBlock without inlines",
		card: card(`{"type": "RichTextBlock"}`),
		want: `card_payload.body[0]: RichTextBlock requires "inlines"`,
	},
	{
		name: "inline number",
		card: card(`{"type": "RichTextBlock", "inlines": [42]}`),
		want: `card_payload.body[0].inlines[0]: must be a string or a TextRun, got 42`,
	},
	{
		name: "TableCell without items",
		card: card(`{"type": "Table", "columns": [{"width": 1}], "rows": [{"type": "TableRow", "cells": [{"type": "TableCell"}]}]}`),
		want: `card_payload.body[0].rows[0].cells[0]: TableCell requires "items"`,
	},
	{
		name: "Input.Toggle without title",
		card: card(`{"type": "Input.Toggle", "id": "agree"}`),
		want: `card_payload.body[0]: Input.Toggle requires "title"`,
	},
	{
		name: "Input.Date value",
		card: card(`{"type": "Input.Date", "id": "d", "value": "31/01/2024"}`),
		want: `card_payload.body[0].value: must be a date such as "2024-01-31", got "31/01/2024"`,
	},
	{
		name: "Input.Time value",
		card: card(`{"type": "Input.Time", "id": "t", "min": "9:00"}`),
		want: `card_payload.body[0].min: must be a time such as "09:30", got "9:00"`,
	},
	{
		name: "Action.Submit associatedInputs",
		card: `{"type": "AdaptiveCard", "version": "1.5", "actions": [{"type": "Action.Submit", "associatedInputs": "some"}]}`,
		want: `card_payload.actions[0].associatedInputs: must be one of "auto", "none", got "some"`,
	},
	{
		name: "ToggleVisibility without targets",
		card: `{"type": "AdaptiveCard", "version": "1.5", "actions": [{"type": "Action.ToggleVisibility", "title": "More"}]}`,
		want: `card_payload.actions[0]: Action.ToggleVisibility requires "targetElements"`,
	},
	{
		name: "ToggleVisibility of a missing element",
		card: `{"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "TextBlock", "id": "more", "text": "x"}],
			"actions": [{"type": "Action.ToggleVisibility", "targetElements": ["more", {"elementId": "less"}]}]}`,
		want: `card_payload.actions[0].targetElements[1].elementId: no element has id "less"`,
	},
	{
		name: "ToggleVisibility isVisible",
		card: `{"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "TextBlock", "id": "more", "text": "x"}],
			"actions": [{"type": "Action.ToggleVisibility", "targetElements": [{"elementId": "more", "isVisible": "no"}]}]}`,
		want: `card_payload.actions[0].targetElements[0].isVisible: must be true or false, got "no"`,
	},
	{
		name: "ShowCard's card without type",
		card: `{"type": "AdaptiveCard", "version": "1.5", "actions": [{"type": "Action.ShowCard", "card": {"body": []}}]}`,
		want: `card_payload.actions[0].card: AdaptiveCard requires "type"`,
	},
	{
		name: "duplicate TextRun id",
		card: card(`{"type": "TextBlock", "id": "who", "text": "x"},
			{"type": "RichTextBlock", "inlines": [{"type": "TextRun", "id": "who", "text": "y"}]}`),
		want: `card_payload.body[1].inlines[0].id: duplicate id "who", also used at card_payload.body[0].id`,
	},
	{
		name: "duplicate inlineAction id",
		card: card(`{"type": "Input.Text", "id": "q", "inlineAction": {"type": "Action.Submit", "id": "q"}}`),
		want: `card_payload.body[0].inlineAction.id: duplicate id "q", also used at card_payload.body[0].id`,
	},
	{
		name: "requires number",
		card: card(`{"type": "TextBlock", "text": "x", "requires": {"acme.feature": 1}}`),
		want: `card_payload.body[0].requires["acme.feature"]: must be "*" or a version such as "1.0", got 1`,
	},
	{
		name: "BackgroundImage without url",
		card: card(`{"type": "Container", "items": [], "backgroundImage": {"fillMode": "repeat"}}`),
		want: `card_payload.body[0].backgroundImage: BackgroundImage requires "url"`,
	},
	{
		name: "refresh without action",
		card: `{"type": "AdaptiveCard", "version": "1.5", "refresh": {"userIds": []}}`,
		want: `card_payload.refresh: Refresh requires "action"`,
	},
	{
		name: "authentication resource",
		card: `{"type": "AdaptiveCard", "version": "1.5", "authentication": {"tokenExchangeResource": {"id": "x", "uri": "api://x"}}}`,
		want: `card_payload.authentication.tokenExchangeResource: TokenExchangeResource requires "providerId"`,
	},
	{
		name: "msteams width",
		card: `{"type": "AdaptiveCard", "version": "1.5", "msteams": {"width": "Wide"}}`,
		want: `card_payload.msteams.width: must be "Full", got "Wide"`,
	},
	{
		name: "msteams mention",
		card: `{"type": "AdaptiveCard", "version": "1.5", "msteams": {"entities": [{"type": "mention", "text": "<at>Ana</at>"}]}}`,
		want: `card_payload.msteams.entities[0]: mention requires "mentioned"`,
	},
	{
		name: "msteams entity",
		card: `{"type": "AdaptiveCard", "version": "1.5", "msteams": {"entities": [{"text": "<at>Ana</at>"}]}}`,
		want: `card_payload.msteams.entities[0]: entity requires "type"`,
	},
}

func TestValidateGoOnly(t *testing.T) {
	t.Parallel()
	for _, tt := range goOnlyTests {
		got := message(t, tt.name, Validate(decode(t, tt.name, []byte(tt.card))))
		if got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
