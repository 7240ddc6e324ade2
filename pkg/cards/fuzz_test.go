package cards

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzExpand feeds templates and data to Compile, Check and Expand: they
// must return, without panicking, and what Expand returns must be JSON.
// The seed corpus in testdata/fuzz/FuzzExpand holds realistic cards and
// odd bindings; `go test -fuzz FuzzExpand ./pkg/cards` explores from there.
func FuzzExpand(f *testing.F) {
	f.Add(`{"type": "AdaptiveCard", "body": [{"type": "TextBlock", "$data": "${items}", "text": "${$index}: ${name}"}]}`, `{"items": [{"name": "a"}]}`)
	f.Add(`{"text": "${if(a > 1, concat('x', string(a)), formatNumber(a, 2))}"}`, `{"a": 2}`)
	f.Fuzz(func(t *testing.T, template, data string) {
		var tmpl, d any
		if json.Unmarshal([]byte(template), &tmpl) != nil || json.Unmarshal([]byte(data), &d) != nil {
			return
		}
		if m, ok := tmpl.(map[string]any); ok {
			_ = Check(m)
		}
		compiled, err := Compile(tmpl)
		if err != nil {
			return
		}
		out, err := compiled.Expand(context.Background(), d)
		if err != nil {
			return
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("Expand gave a value that is not JSON: %v", err)
		}
	})
}
