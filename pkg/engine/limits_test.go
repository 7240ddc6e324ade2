package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// An expression or card binding that would build a huge string fails its
// step with a plain reason, without the memory ever being spent: before
// the limits, the transform below took a server from 46 MB to 4.6 GB.
func TestStepsThatWouldBuildTooMuchFail(t *testing.T) {
	onEachStore(t, testStepsThatWouldBuildTooMuchFail)
}

func testStepsThatWouldBuildTooMuchFail(t *testing.T, b backend) {
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
			"+ would bring what this expression builds to more than 16 MiB; an evaluation may build at most 16 MiB"},
		// Before shared references were counted, this one marshalled 960 MB
		// and took a server to 3.1 GB.
		{"transform doubling shared lists", step("ask", "transform", obj{"output": "{{ " + nestedBinds(14, "l14") + " }}"}), false,
			"a list would bring what this expression builds to more than 16 MiB; an evaluation may build at most 16 MiB"},
		{"transform comparing a shared structure with itself", step("ask", "transform", obj{"output": "{{ " + nestedBinds(28, "l28 == l28") + " }}"}), false,
			"a list would bring what this expression builds to more than 16 MiB"},
		// 3.8 MB as JSON, within what an expression may build and yield; the
		// output is encoded until it passes 64 KB, not whole.
		{"transform yielding shared lists", step("ask", "transform", obj{"output": "{{ " + nestedBinds(6, "l6") + " }}"}), false,
			"its output is more than the 64 KB a step may pass on"},
		{"card", step("ask", "card", obj{"card_id": "CARD", "data": obj{"s": "{{ input.s }}"}, "timeout": "PT1H"}), true,
			"replace would build a string of 3.4 GiB; a string may hold at most 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, b)
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

// TestCardStepsAreBoundedByTheCardTheyBuild: a card whose $data repeats a
// whole-value binding counted the binding as one value, and a card step
// stored a 60 MB card in its delivery. The step now fails with the
// card's limit as its reason, and stores no delivery.
func TestCardStepsAreBoundedByTheCardTheyBuild(t *testing.T) {
	onEachStore(t, testCardStepsAreBoundedByTheCardTheyBuild)
}

func testCardStepsAreBoundedByTheCardTheyBuild(t *testing.T, b backend) {
	facts := make([]any, 100)
	for i := range facts {
		facts[i] = obj{"title": "t", "value": strings.Repeat("v", 400)}
	}
	items := make([]any, 2000)
	for i := range items {
		items[i] = i
	}
	f := newFixture(t, b)
	steps := []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("ask", "card", obj{"card_id": "CARD", "data": obj{"facts": "{{ input.facts }}", "items": "{{ input.items }}"}, "timeout": "PT1H"}),
		step("done", "end", obj{"status": "SUCCEEDED"}),
	}
	f.cardWith(steps, obj{"type": "AdaptiveCard", "version": "1.5", "body": []any{
		obj{"$data": "${items}", "type": "FactSet", "facts": "${$root.facts}"},
	}})
	ref := f.start(steps, []cardflow.Connection{{From: "start", To: "ask"}, {From: "ask", To: "done"}}, obj{"facts": facts, "items": items}, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := f.advance(ref)
	runtime.ReadMemStats(&after)
	if res.Status != cardflow.ExecFailed {
		t.Fatalf("got %+v, want FAILED", res)
	}
	got, _ := f.get(ref).WorkflowOutputPayload["error"].(string)
	const want = "card_payload.body[0].facts: ${$root.facts}: the card would be larger than 256 KB as JSON; an expanded card may hold at most 256 KB"
	if !strings.Contains(got, want) {
		t.Errorf("reason: got %q, want it to contain %q", got, want)
	}
	if ds, _, err := f.outbox.ListDeliveries(context.Background(), f.org, 10, ""); err != nil || len(ds) != 0 {
		t.Errorf("deliveries: got %d (%v), want none", len(ds), err)
	}
	rec, err := json.Marshal(f.get(ref))
	if err != nil {
		t.Fatal(err)
	}
	// The execution holds its 50 KB input, and nothing of the card.
	if len(rec) > 256<<10 {
		t.Errorf("the execution record is %d KB, want at most 256 KB", len(rec)>>10)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("advancing allocated %d MB, want at most 64 MB", n>>20)
	}
	t.Logf("advancing allocated %.1f MB; the execution record is %d KB", float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), len(rec)>>10)
}

// nestedBinds doubles a list of two references to input.s depth times
// with cel.bind, then evaluates body over the last level, l<depth>.
func nestedBinds(depth int, body string) string {
	var b strings.Builder
	prev := "input.s"
	for i := 1; i <= depth; i++ {
		fmt.Fprintf(&b, "cel.bind(l%d, [%s, %s], ", i, prev, prev)
		prev = fmt.Sprintf("l%d", i)
	}
	return b.String() + body + strings.Repeat(")", depth)
}
