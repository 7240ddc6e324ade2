package cardflow_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// nested returns n arrays, one in the other, around inner.
func nested(n int, inner string) string {
	return strings.Repeat("[", n) + inner + strings.Repeat("]", n)
}

func TestNesting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, json string
		want       int
	}{
		{"scalar", `1`, 0},
		{"string of brackets", `"[{[{"`, 0},
		{"empty array", `[]`, 1},
		{"object", `{"a": 1}`, 1},
		{"mixed", `{"a": [1, {"b": "]}"}], "c": {}}`, 3},
		{"escaped quote in a string", `["\"[[", [1]]`, 2},
		{"escaped backslash ends a string", `["\\", [1]]`, 2},
		{"unicode escape", `["\u005b", {"x": "é["}]`, 2},
		{"siblings", `[[1], [[2]], [3]]`, 3},
		{"attack", nested(10_001, ""), 10_001},
		{"malformed: closes first", `]]][[`, 2},
		{"malformed: unclosed", nested(5, "")[:5], 5},
	} {
		if got := cardflow.Nesting([]byte(tc.json)); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestCheckNesting(t *testing.T) {
	t.Parallel()
	if err := cardflow.CheckNesting("the body", []byte(nested(cardflow.MaxNesting, "1"))); err != nil {
		t.Errorf("%d levels: got %v, want nil", cardflow.MaxNesting, err)
	}
	err := cardflow.CheckNesting("the body", []byte(nested(10_001, "")))
	if got, want := cardflow.ErrorMessage(err), "the body nests 10001 levels deep; the limit is 64"; got != want {
		t.Errorf("message: got %q, want %q", got, want)
	}
	if got, want := cardflow.ErrorCode(err), cardflow.EINVALID; got != want {
		t.Errorf("code: got %s, want %s", got, want)
	}
}

func TestPrune(t *testing.T) {
	t.Parallel()
	shallow := `{"a": [1, "[[[", {"b": null}], "c": "\"]"}`
	for _, tc := range []struct {
		name, json, want string
	}{
		{"shallow stays as it is", shallow, shallow},
		{"256 levels stay", nested(256, "1"), nested(256, "1")},
		{"deeper is null", nested(10_001, "1"), nested(256, "null")},
		{"only what lies deep", `{"keep": 1, "deep": ` + nested(300, `"x"`) + `, "after": [2]}`,
			`{"keep": 1, "deep": ` + nested(255, "null") + `, "after": [2]}`},
		{"brackets in a pruned string", nested(257, `"]]]\"]"`), nested(256, "null")},
	} {
		got := cardflow.Prune([]byte(tc.json))
		if string(got) != tc.want {
			t.Errorf("%s: got %.80s... (%d bytes), want %.80s... (%d bytes)", tc.name, got, len(got), tc.want, len(tc.want))
		}
		if !json.Valid(got) {
			t.Errorf("%s: the pruned JSON is not valid", tc.name)
		}
	}
}

// tokenDepth is how deep valid JSON nests by the decoder's tokens.
func tokenDepth(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			deepest = max(deepest, depth)
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
}

// FuzzNesting holds the byte scan to the decoder: for valid JSON both
// count the same depth, and Prune changes only what lies deeper than 256
// levels, leaving valid JSON.
func FuzzNesting(f *testing.F) {
	for _, seed := range []string{`1`, `{"a": [1, {"b": "]}"}]}`, `["\"[", "\\", "\u005b"]`, nested(300, `{"x": "[["}`), `]]][[`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := cardflow.Nesting(b)
		if got > len(b) {
			t.Fatalf("Nesting: got %d for %d bytes", got, len(b))
		}
		pruned := cardflow.Prune(b)
		if !json.Valid(b) {
			return
		}
		if want := tokenDepth(b); got != want {
			t.Fatalf("Nesting(%q): got %d, want %d as the decoder counts", b, got, want)
		}
		if !json.Valid(pruned) {
			t.Fatalf("Prune(%q) = %q, not valid JSON", b, pruned)
		}
		if d := cardflow.Nesting(pruned); d > 256 || (got <= 256 && !bytes.Equal(pruned, b)) {
			t.Fatalf("Prune(%q) = %q, %d levels deep", b, pruned, d)
		}
	})
}
