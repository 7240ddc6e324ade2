package app_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestRotateWebhook: a rotation returns a new secret in the Standard
// Webhooks form, once; the store keeps the old one as the previous secret
// for as long as asked; lists show neither; bad input changes nothing.
func TestRotateWebhook(t *testing.T) {
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	svc, err := app.New(store, app.Deps{}, app.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	added, err := svc.AddWebhook(ctx, "acme", "https://hooks.example.com/cardflow")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := standardwebhooks.NewWebhook(added.Secret); err != nil {
		t.Errorf("the added secret %q... is not in the whsec_ base64 form: %v", added.Secret[:8], err)
	}

	for _, tt := range []struct {
		name, org, id string
		keep          time.Duration
		wantCode      string
	}{
		{"negative overlap", "acme", added.WebhookID, -time.Second, cardflow.EINVALID},
		{"overlap too long", "acme", added.WebhookID, 8 * 24 * time.Hour, cardflow.EINVALID},
		{"another organization's", "other", added.WebhookID, time.Hour, cardflow.ENOTFOUND},
		{"unknown id", "acme", "01KB0AT3M6XQF1V2SZ9R3HPJ4T", time.Hour, cardflow.ENOTFOUND},
	} {
		if _, err := svc.RotateWebhook(ctx, tt.org, tt.id, tt.keep); cardflow.ErrorCode(err) != tt.wantCode {
			t.Errorf("%s: got %v, want code %s", tt.name, err, tt.wantCode)
		}
	}
	if list, _ := store.ListWebhooks(ctx, "acme"); len(list) != 1 || list[0].Secret != added.Secret || list[0].PreviousSecret != "" {
		t.Fatalf("after refused rotations: the stored webhook changed")
	}

	rotated, err := svc.RotateWebhook(ctx, "", added.WebhookID, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Secret == added.Secret || rotated.PreviousSecret != "" {
		t.Errorf("got a rotation that shows the old secret or keeps it as the new one")
	}
	if _, err := standardwebhooks.NewWebhook(rotated.Secret); err != nil {
		t.Errorf("the rotated secret is not in the whsec_ base64 form: %v", err)
	}
	stored, err := store.ListWebhooks(ctx, "acme")
	if err != nil || len(stored) != 1 {
		t.Fatalf("got %d stored webhooks (%v), want 1", len(stored), err)
	}
	w := stored[0]
	if got, want := w.Secrets(now), []string{rotated.Secret, added.Secret}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("secrets that sign now: got %d, want the new and the old", len(got))
	}
	if got := w.Secrets(now.Add(24 * time.Hour)); len(got) != 1 || got[0] != rotated.Secret {
		t.Errorf("secrets that sign after the overlap: got %d, want the new one alone", len(got))
	}
	listed, err := svc.ListWebhooks(ctx, "acme")
	if err != nil || len(listed) != 1 || listed[0].Secret != "" || listed[0].PreviousSecret != "" {
		t.Errorf("list: got a secret shown (%v)", err)
	}
}
