package cards

import (
	"runtime"
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
			n := allocated(func() { _, got = tmpl.Expand(data) })
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
		got, err := Expand(map[string]any{"text": tt.text}, data)
		if err != nil {
			t.Fatalf("%s: %v", tt.text, err)
		}
		if v := got.(map[string]any)["text"]; v != tt.want {
			t.Errorf("%s: got %v, want %v", tt.text, v, tt.want)
		}
	}
}
