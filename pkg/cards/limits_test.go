package cards

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// maxAlloc bounds what one refused expansion may allocate. The first of
// these templates reached 6.3 GB before the check after each call; sized
// before they build, each allocates at most a few megabytes. It measures
// allocation, not time.
const maxAlloc = 40 << 20

func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestFunctionsAreBoundedBeforeTheyBuild(t *testing.T) {
	s := strings.Repeat("a", 60_000)
	items := make([]any, 100)
	for i := range items {
		items[i] = s
	}
	data := map[string]any{"s": s, "big": strings.Repeat("b", 900_000), "items": items,
		"obj": map[string]any{"a": s, "b": s}}
	tests := []struct {
		name, text string
		want       string // in the error
	}{
		{"replace", "${replace(s, 'a', s)}", "replace would build a string of 3.4 GiB; a string may hold at most 1 MiB"},
		{"join of a mapped list", "${join(foreach(items, x, x), '')}", "join would build a string of more than 1 MiB"},
		{"join with a long separator", "${join(createArray(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18), s)}",
			"join would build a string of more than 1 MiB"},
		{"concat", "${count(concat(s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s))}", "concat would build a string of more than 1 MiB"},
		{"concat of lists", "${count(concat(split(big, ','), split(big, ''), items))}", "split would build a list of 900000 elements"},
		{"plus", "${big + big}", "+ would build a string of more than 1 MiB"},
		{"nested doubling", "${count(concat(concat(concat(concat(concat(s, s), concat(s, s)), concat(concat(s, s), concat(s, s))), " +
			"concat(concat(concat(s, s), concat(s, s)), concat(concat(s, s), concat(s, s)))), s, s))}", "concat would build a string of more than 1 MiB"},
		{"string of a large list", "${string(items)}", "string would build a string of more than"},
		{"toUpper", "${toUpper(concat(big, 'x'))}", "toUpper would build a string of 2.6 MiB"},
		{"doubling in a loop", "${count(foreach(items, x, concat(x, big)))}", "the template needs more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := Compile(map[string]any{"type": "TextBlock", "text": tt.text})
			if err != nil {
				t.Fatal(err)
			}
			var got error
			n := allocated(func() { _, got = tmpl.Expand(context.Background(), data) })
			if got == nil || !strings.Contains(got.Error(), tt.want) {
				t.Fatalf("got error %v, want one with %q", got, tt.want)
			}
			if n > maxAlloc {
				t.Errorf("allocated %s, want at most %s", size(int(n)), size(maxAlloc))
			}
		})
	}
}

func TestSizedFunctionsKeepTheirResults(t *testing.T) {
	t.Parallel()
	data := map[string]any{"name": "Ada", "tags": []any{"a", "b"}, "n": 2.0}
	tests := []struct {
		text string
		want any
	}{
		{"${replace('banana', 'a', 'o')}", "bonono"},
		{"${join(tags, '-')}", "a-b"},
		{"${join(tags, ', ', ' and ')}", "a and b"},
		{"${concat(name, '!', n)}", "Ada!2"},
		{"${name + ' ' + n}", "Ada 2"},
		{"${string(n + 1)}", "3"},
		{"${toUpper(name)}", "ADA"},
		{"${count(split('a,b,c', ','))}", 3.0},
		{"${count(concat(tags, tags))}", 4.0},
		{"${setProperty(json('{}'), 'k', name).k}", "Ada"},
	}
	for _, tt := range tests {
		got, err := Expand(context.Background(), map[string]any{"text": tt.text}, data)
		if err != nil {
			t.Fatalf("%s: %v", tt.text, err)
		}
		if v := got.(map[string]any)["text"]; v != tt.want {
			t.Errorf("%s: got %v, want %v", tt.text, v, tt.want)
		}
	}
}

// TestRepeatedBindingsAreBoundedByTheBytesTheyProduce: a binding of a
// whole object counted as one value, and $data repeated it, so a 40 KB
// request to previewCard answered 400 MB. Every insertion now counts the
// value's size as JSON, and the expansion stops at maxCardBytes before
// the output (or its encoding) is built: each refusal allocates at most
// a few megabytes, measured as allocation, not time.
func TestRepeatedBindingsAreBoundedByTheBytesTheyProduce(t *testing.T) {
	obj := map[string]any{}
	for i := range 100 {
		obj[strconv.Itoa(i)] = strings.Repeat("o", 400)
	}
	items := make([]any, 2000)
	for i := range items {
		items[i] = float64(i)
	}
	list := []any{strings.Repeat("l", 4000), strings.Repeat("m", 4000)}
	data := map[string]any{"obj": obj, "items": items, "list": list, "s": strings.Repeat("s", 4000),
		"objs": []any{obj, obj, obj, obj, obj, obj, obj, obj}}
	const want = "the card would be larger than 256 KB as JSON; an expanded card may hold at most 256 KB"
	tests := []struct {
		name, template, where string
	}{
		{"$data repeats a whole object", `{"body": [{"$data": "${$root.items}", "type": "Container", "o": "${$root.obj}"}]}`,
			"card_payload.body[0].o: ${$root.obj}: "},
		{"$data repeats $root", `{"body": [{"$data": "${$root.items}", "all": "${$root}"}]}`, "card_payload.body[0].all: ${$root}: "},
		{"nested $data repeats a string", `{"body": [{"$data": "${$root.items}", "rows": [{"$data": "${$root.items}", "t": "${$root.s}"}]}]}`,
			"card_payload.body[0].rows[0].t: ${$root.s}: "},
		{"a list of one object many times", `{"body": "${foreach($root.items, x, $root.obj)}"}`, "card_payload.body: ${foreach($root.items, x, $root.obj)}: "},
		{"a list written into text", `{"text": "list: ${foreach($root.items, x, $root.list)}"}`, "card_payload.text: list: ${foreach($root.items, x, $root.list)}: "},
		{"flattened lists repeated", `{"body": [{"$data": "${$root.items}", "o": ["${$root.objs}"]}]}`, "card_payload.body[0].o[0]: ${$root.objs}: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := Compile(json.RawMessage(tt.template))
			if err != nil {
				t.Fatal(err)
			}
			var got error
			n := allocated(func() {
				var out any
				if out, got = tmpl.Expand(context.Background(), data); got == nil {
					// What the server does with a card it was given.
					_, _ = json.Marshal(out)
				}
			})
			if got == nil || got.Error() != tt.where+want {
				t.Errorf("got error %v, want %q", got, tt.where+want)
			}
			if n > maxRefusedAlloc {
				t.Errorf("allocated %s, want at most %s", size(int(n)), size(maxRefusedAlloc))
			}
			t.Logf("allocated %s", size(int(n)))
		})
	}
}

// maxRefusedAlloc bounds what an expansion refused for its output's size
// may allocate: the output up to maxCardBytes, a few times over.
const maxRefusedAlloc = 8 << 20

func TestCardsWithinTheBoundExpand(t *testing.T) {
	t.Parallel()
	obj := map[string]any{"a": strings.Repeat("<", 1000), "n": 1.5, "ok": true, "none": nil, "l": []any{"x", 2.0}}
	data := map[string]any{"obj": obj, "items": []any{1.0, 2.0, 3.0}}
	// Just under the bound: the card's text and three copies of obj, about
	// 6 KB each as JSON (encoding/json writes each < as \u003c).
	big := strings.Repeat("t", maxCardBytes-3*6040-100)
	tmpl, err := Compile(map[string]any{"text": big, "body": []any{map[string]any{"$data": "${$root.items}", "o": "${$root.obj}", "i": "${$index}"}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := tmpl.Expand(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(b), maxCardBytes; got > want || got < want-200 {
		t.Errorf("got a card of %d bytes, want one just under %d", got, want)
	}
	counted, written := jsonLen(out, maxCardBytes*2), len(b)
	if counted != written {
		t.Errorf("counted %d bytes, json.Marshal wrote %d", counted, written)
	}
}

// TestFunctionWorkIsBoundedPerExpansion: a preview whose bindings build
// large strings in a loop, each under the 1 MiB of a string, took 64 MB
// an expansion before its budget spoke; 32 read-key previews at once took
// a server to 796 MB. The budget is now 8 MiB built an expansion.
func TestFunctionWorkIsBoundedPerExpansion(t *testing.T) {
	items := make([]any, 1000)
	for i := range items {
		items[i] = float64(i)
	}
	data := map[string]any{"items": items, "big": strings.Repeat("b", 200_000)}
	tmpl, err := Compile(map[string]any{"type": "TextBlock", "text": "${count(foreach($root.items, x, concat($root.big, x)))}"})
	if err != nil {
		t.Fatal(err)
	}
	var got error
	n := allocated(func() { _, got = tmpl.Expand(context.Background(), data) })
	if got == nil || !strings.HasSuffix(got.Error(), "the template needs more than 100000 function calls or builds more than 8 MB of values") {
		t.Errorf("got error %v, want the budget's", got)
	}
	if n > 16<<20 {
		t.Errorf("allocated %s, want at most %s", size(int(n)), size(16<<20))
	}
	t.Logf("allocated %s", size(int(n)))
}

// TestReadingTheDataBuildsNothing: reads of the data are not counted
// against what an expansion builds, so a card that tests a large field
// for each of many items expands, though 400 reads of 200 KB passed the
// 64 MB the budget was.
func TestReadingTheDataBuildsNothing(t *testing.T) {
	t.Parallel()
	items := make([]any, 400)
	for i := range items {
		items[i] = float64(i)
	}
	data := map[string]any{"items": items, "big": strings.Repeat("b", 200_000) + "x"}
	out, err := Expand(context.Background(), json.RawMessage(`{"body": [{"$data": "${$root.items}", "$when": "${contains($root.big, 'x') && length($root['big']) > $index}", "i": "${$index}"}]}`), data)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(out.(map[string]any)["body"].([]any)); got != len(items) {
		t.Errorf("got %d items, want %d", got, len(items))
	}
}
