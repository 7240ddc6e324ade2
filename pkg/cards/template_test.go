package cards

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

// TestCheck covers what saveCard refuses in a card's bindings, and that
// the message names the place.
func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, card string
		want       string // "" for accepted, else the whole message
	}{
		{"no bindings", `{"type": "AdaptiveCard", "body": [{"type": "TextBlock", "text": "plain"}]}`, ""},
		{"good bindings", `{"type": "AdaptiveCard", "body": [{"type": "TextBlock", "$data": "${items}", "$when": "${qty > 0}", "text": "${toUpper(name)}: ${formatNumber(price, 2)}"}]}`, ""},
		{"unknown function in text", `{"body": [{"type": "TextBlock", "text": "a ${toUppr(name)} b"}]}`,
			`card_payload.body[0].text: unknown function "toUppr" in a binding`},
		{"syntax error", `{"body": [{"type": "TextBlock", "text": "Total ${amount +}"}]}`,
			`card_payload.body[0].text: the binding does not parse: syntax error at character 9: the expression ends too early in "amount +"`},
		{"wrong argument type", `{"actions": [{"type": "Action.Submit", "data": {"x": "${toUpper(1)}"}}]}`,
			`card_payload.actions[0].data.x: the binding does not parse: 1 is not of type String in "toUpper(1)"`},
		{"wrong number of arguments", `{"body": [{"type": "TextBlock", "text": "${if(a, b)}"}]}`,
			`card_payload.body[0].text: the binding does not parse: if needs at least 3 arguments in "if(a, b)"`},
		{"backtick in text", "{\"body\": [{\"type\": \"TextBlock\", \"text\": \"use `x` for ${name}\"}]}",
			"card_payload.body[0].text: the binding does not parse: syntax error at character 7: unexpected \"x\" in \"use `x` for ${name}\""},
		{"unclosed string", `{"text": "${'abc}"}`, ""},
		{"unclosed string inside", `{"text": "${concat('abc)}"}`, ""},
		{"deep nesting", `{"text": "${` + strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100) + `}"}`,
			"card_payload.text: the binding does not parse: syntax error at character 62: expression nests too deeply in \"" + strings.Repeat("(", 80) + "…\""},
	} {
		err := Check(decodeJSON(t, tt.card))
		got := ""
		if err != nil {
			if cardflow.ErrorCode(err) != cardflow.EINVALID {
				t.Errorf("%s: got code %s, want %s", tt.name, cardflow.ErrorCode(err), cardflow.EINVALID)
			}
			got = cardflow.ErrorMessage(err)
		}
		if got != tt.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// TestExpandCard covers what a card step sends and why it refuses to.
func TestExpandCard(t *testing.T) {
	t.Parallel()
	const data = `{"name": "Ann", "amount": 1200, "items": [{"n": 1}, {"n": 2}]}`
	for _, tt := range []struct {
		name, card string
		want       string // the card as JSON, or the error message
	}{
		{"expanded", `{"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "TextBlock", "text": "${name}: ${amount}"}]}`,
			`{"body":[{"text":"Ann: 1200","type":"TextBlock"}],"type":"AdaptiveCard","version":"1.5"}`},
		{"bound enumeration", `{"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "TextBlock", "text": "t", "color": "${if(amount > 1000, 'Attention', 'Default')}"}]}`,
			`{"body":[{"color":"Attention","text":"t","type":"TextBlock"}],"type":"AdaptiveCard","version":"1.5"}`},
		{"binding fails", `{"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "TextBlock", "text": "${sub(name, 1)}"}]}`,
			`the card template does not expand: card_payload.body[0].text: ${sub(name, 1)}: name is not a number.`},
		{"invalid after expansion", `{"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "TextBlock", "text": "t", "isVisible": "${name}"}]}`,
			`the expanded card is not valid: card_payload.body[0].isVisible: must be true or false, got "Ann"`},
		{"dropped", `{"type": "AdaptiveCard", "version": "1.5", "$when": "${amount > 5000}", "body": []}`,
			`the card template expands to no card: its $when is not true`},
		{"repeated", `{"type": "AdaptiveCard", "version": "1.5", "$data": "${items}", "body": []}`,
			`the card template expands to 2 cards: its $data is a list, and a card step sends one card`},
	} {
		var d any
		if err := json.Unmarshal([]byte(data), &d); err != nil {
			t.Fatal(err)
		}
		card, err := ExpandCard(context.Background(), decodeJSON(t, tt.card), d)
		var got string
		if err != nil {
			got = cardflow.ErrorMessage(err)
		} else {
			b, _ := json.Marshal(card)
			got = string(b)
		}
		if got != tt.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// TestExpandInputs: a template and its data may come as raw JSON or as Go
// values, and the template expands the same for every data given.
func TestExpandInputs(t *testing.T) {
	t.Parallel()
	type person struct {
		Name string `json:"name"`
		Age  int    `json:"age"`
	}
	tmpl, err := Compile(json.RawMessage(`{"text": "${name} (${age})", "host": "${$host.app}"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name       string
		data, host any
		want       string
	}{
		{"struct", person{"Ann", 31}, nil, `{"host":"${$host.app}","text":"Ann (31)"}`},
		{"map", map[string]any{"name": "Ben", "age": 12}, nil, `{"host":"${$host.app}","text":"Ben (12)"}`},
		{"raw JSON", json.RawMessage(`{"name": "Cy", "age": 45}`), map[string]string{"app": "Teams"}, `{"host":"Teams","text":"Cy (45)"}`},
		{"no data", nil, nil, `{"host":"${$host.app}","text":"${name} (${age})"}`},
	} {
		out, err := tmpl.ExpandHost(context.Background(), tt.data, tt.host)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		b, _ := json.Marshal(out)
		if got := string(b); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestExpandLimits: repetition cannot make a template expand without end.
func TestExpandLimits(t *testing.T) {
	t.Parallel()
	items := make([]any, 400)
	for i := range items {
		items[i] = i
	}
	data := map[string]any{"items": items, "text": strings.Repeat("x", 1<<20)}
	for _, tt := range []struct {
		name, template, want string
	}{
		{"values", `{"a": [{"$data": "${items}", "b": [{"$data": "${$root.items}", "c": 1, "d": 2}]}]}`,
			"the card would be larger than 256 KB as JSON; an expanded card may hold at most 256 KB"},
		{"text", `{"a": [{"$data": "${items}", "t": "${$root.text}"}]}`,
			"the card would be larger than 256 KB as JSON; an expanded card may hold at most 256 KB"},
		{"nested lambdas", `{"a": "${count(foreach(items, x, foreach($root.items, y, foreach($root.items, z, 1))))}"}`,
			"the template needs more than 100000 function calls or builds more than 8 MB of values"},
		{"interpolated text", `{"a": [{"$data": "${items}", "t": "${$root.text}${$root.text}${$root.text}${$root.text}${$root.text}"}]}`,
			"the card would be larger than 256 KB as JSON; an expanded card may hold at most 256 KB"},
	} {
		_, err := Expand(context.Background(), json.RawMessage(tt.template), data)
		if err == nil || !strings.HasSuffix(err.Error(), ": "+tt.want) {
			t.Errorf("%s: got %v, want an error ending in %q", tt.name, err, tt.want)
		}
	}
}

// TestExpandConcurrently: a compiled template serves many expansions at
// once, and leaves the data it is given as it was (run with -race).
func TestExpandConcurrently(t *testing.T) {
	t.Parallel()
	tmpl, err := Compile(json.RawMessage(`{"body": [{"$data": "${items}", "text": "${name}", "all": "${$root}", "made": "${createArray(o['none'], name)}"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]any{"o": map[string]any{}, "items": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}}}
	const want = `{"body":[{"all":{"items":[{"name":"a"},{"name":"b"}],"o":{}},"made":[null,"a"],"text":"a"},{"all":{"items":[{"name":"a"},{"name":"b"}],"o":{}},"made":[null,"b"],"text":"b"}]}`
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := tmpl.Expand(context.Background(), data)
			if err != nil {
				t.Error(err)
				return
			}
			if b, _ := json.Marshal(out); string(b) != want {
				t.Errorf("got %s, want %s", b, want)
			}
		}()
	}
	wg.Wait()
}

// TestFullCaseMappings: toUpper and toLower apply Unicode's full case
// mappings as toLocaleUpperCase and toLocaleLowerCase do in en-US, where Go's
// strings.ToUpper and ToLower map rune for rune.
func TestFullCaseMappings(t *testing.T) {
	for _, tt := range []struct {
		text, want string
	}{
		{"${toUpper('straße')}", "STRASSE"},
		{"${toUpper('ﬁne')}", "FINE"},
		{"${toUpper('ǅemal')}", "ǄEMAL"},
		{"${toUpper('ΐ')}", "\u0399\u0308\u0301"},
		{"${toLower('İstanbul')}", "i\u0307stanbul"},
		{"${toLower('ΟΔΟΣ ΟΔΟΣ.')}", "οδος οδος."},
		{"${toLower('ΑΣΑ')}", "ασα"},
		{"${toLower('Σ')}", "σ"},
		{"${toLower('ΑΣ\\'Α')}", "ασ'α"},
		{"${toLower('Α\u0301Σ')}", "α\u0301ς"},
	} {
		got, err := Expand(context.Background(), map[string]any{"text": tt.text}, nil)
		if err != nil {
			t.Errorf("%s: %v", tt.text, err)
			continue
		}
		if got, want := got.(map[string]any)["text"], tt.want; got != want {
			t.Errorf("%s: got %+q, want %+q", tt.text, got, want)
		}
	}
}
