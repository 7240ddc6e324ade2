package cards

import (
	"context"
	"testing"

	"github.com/cardflow/cardflow/internal/evalslotstest"
)

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
			release := evalslotstest.TakeTheOnlySlot(t)
			done := make(chan error, 1)
			go func() { done <- tt.expand(context.Background()) }()
			evalslotstest.WaitForWaiter(t, done)
			release()
			if err := <-done; err != nil {
				t.Fatalf("got %v once the slot was given back, want the expansion to succeed", err)
			}

			// A waiting expansion ends with its context, not as a bad card.
			release = evalslotstest.TakeTheOnlySlot(t)
			defer release()
			ctx, cancel := context.WithCancel(context.Background())
			go func() { done <- tt.expand(ctx) }()
			evalslotstest.WaitForWaiter(t, done)
			cancel()
			if got, want := <-done, context.Canceled; got != want {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}
