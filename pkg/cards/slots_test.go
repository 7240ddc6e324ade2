package cards

import (
	"context"
	"runtime"
	"testing"

	"github.com/cardflow/cardflow/pkg/evalslots"
)

// takeTheOnlySlot sets the process to one evaluation at once and takes
// that slot, as an expansion in the middle of its work holds it; release
// gives it back.
func takeTheOnlySlot(t *testing.T) (release func()) {
	t.Helper()
	before := evalslots.Limit()
	if err := evalslots.SetLimit(1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = evalslots.SetLimit(before) })
	s, err := evalslots.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.Release
}

// waitForWaiter returns once an expansion waits for a slot, and fails the
// test if instead one ends (done) while the only slot is taken.
func waitForWaiter(t *testing.T, done <-chan error) {
	t.Helper()
	for evalslots.Waiting() == 0 {
		select {
		case err := <-done:
			t.Fatalf("an expansion ran while the only slot was taken (it returned %v)", err)
		default:
			runtime.Gosched()
		}
	}
}

func TestExpansionsTakeTurns(t *testing.T) {
	card := map[string]any{"type": "AdaptiveCard", "version": "1.5", "body": []any{
		map[string]any{"type": "TextBlock", "text": "${title}"}}}
	data := map[string]any{"title": "Travel request"}
	for _, tt := range []struct {
		name   string
		expand func(context.Context) error
	}{
		{"Checker.ExpandCard", func(ctx context.Context) error { _, err := Checker{}.ExpandCard(ctx, card, data); return err }},
		{"Reader.CardText", func(ctx context.Context) error { _, err := Reader{}.CardText(ctx, card, data); return err }},
		{"Expand", func(ctx context.Context) error { _, err := Expand(ctx, card, data); return err }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			release := takeTheOnlySlot(t)
			done := make(chan error, 1)
			go func() { done <- tt.expand(context.Background()) }()
			waitForWaiter(t, done)
			release()
			if err := <-done; err != nil {
				t.Fatalf("got %v once the slot was given back, want the expansion to succeed", err)
			}

			// A waiting expansion ends with its context, not as a bad card.
			release = takeTheOnlySlot(t)
			defer release()
			ctx, cancel := context.WithCancel(context.Background())
			go func() { done <- tt.expand(ctx) }()
			waitForWaiter(t, done)
			cancel()
			if got, want := <-done, context.Canceled; got != want {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}
