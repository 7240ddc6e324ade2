package engine_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// An expression or card binding that would build a huge string fails its
// step with a plain reason, without the memory ever being spent: before
// the limits, the transform below took a server from 46 MB to 4.6 GB.
func TestStepsThatWouldBuildTooMuchFail(t *testing.T) {
	big := strings.Repeat("a", 60_000)
	for _, tc := range []struct {
		name string
		ask  cardflow.Step
		card bool
		want string // in the reason
	}{
		{"transform", step("ask", "transform", obj{"output": `{{ size(input.s.replace("a", input.s)) }}`}), false,
			"replace would build a string of 3.4 GiB; a string may hold at most 1 MiB"},
		{"transform joining a mapped list", step("ask", "transform", obj{"output": `{{ lists.range(5000).map(i, input.s).join("") }}`}), false,
			"join would build a string of 286.1 MiB; a string may hold at most 1 MiB"},
		{"card", step("ask", "card", obj{"card_id": "CARD", "data": obj{"s": "{{ input.s }}"}, "timeout": "PT1H"}), true,
			"replace would build a string of 3.4 GiB; a string may hold at most 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			steps := []cardflow.Step{
				step("start", "trigger", obj{"kind": "REQUEST"}),
				tc.ask,
				step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.ask.output }}"}),
			}
			conns := []cardflow.Connection{{From: "start", To: "ask"}, {From: "ask", To: "done"}}
			if tc.card {
				f.cardWith(steps, obj{"type": "AdaptiveCard", "body": []any{obj{"type": "TextBlock", "text": "${replace(s, 'a', s)}"}}})
			}
			ref := f.start(steps, conns, obj{"s": big}, nil)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res := f.advance(ref)
			runtime.ReadMemStats(&after)
			if res.Status != cardflow.ExecFailed {
				t.Fatalf("got %+v, want FAILED", res)
			}
			got, _ := f.get(ref).WorkflowOutputPayload["error"].(string)
			if !strings.Contains(got, tc.want) {
				t.Errorf("reason: got %q, want it to contain %q", got, tc.want)
			}
			// The store writes the execution, with its 60 KB input, a few
			// times; the refused call itself allocates next to nothing.
			if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
				t.Errorf("advancing allocated %d MB, want at most 64 MB", n>>20)
			}
		})
	}
}
