package app_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
)

// TestSaveCardChecker: saveCard runs the card checker it is given; a card
// editor without one is not built (TestAreasNeedTheirDependencies).
func TestSaveCardChecker(t *testing.T) {
	valid := map[string]any{
		"type": "AdaptiveCard", "version": "1.5",
		"body": []any{map[string]any{"type": "TextBlock", "text": "Approve ${amount}?"}},
	}
	invalid := map[string]any{"type": "AdaptiveCard", "version": "1.5", "body": "not a list"}
	tests := []struct {
		name    string
		payload map[string]any
		code    string // "" for success
	}{
		{"checked valid", valid, ""},
		{"checked invalid", invalid, cardflow.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			svc, err := app.New(store, app.Deps{CardChecker: cards.Checker{}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
				OrganizationID: "org", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "tester"})
			_, err = svc.SaveCard(ctx, app.SaveCardInput{CardName: "approve", CardPayload: tc.payload})
			if got := cardflow.ErrorCode(err); err != nil && got != tc.code || err == nil && tc.code != "" {
				t.Fatalf("SaveCard: got error %v (code %q), want code %q", err, got, tc.code)
			}
			page, err := svc.ListCards(ctx, cardflow.ListOptions[cardflow.CardKey]{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(page.Items), map[bool]int{true: 1, false: 0}[tc.code == ""]; got != want {
				t.Errorf("cards stored: got %d, want %d", got, want)
			}
		})
	}
}
