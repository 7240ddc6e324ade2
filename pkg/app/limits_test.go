package app_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/tokenbucket"
)

func limitedService(tb testing.TB, now func() time.Time, defaults cardflow.Limits) *app.Service {
	tb.Helper()
	store, err := boltstore.Open(filepath.Join(tb.TempDir(), "cardflow.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	svc, err := app.New(store, app.Deps{}, app.WithClock(now), app.WithLimits(defaults, tokenbucket.New(now)))
	if err != nil {
		tb.Fatal(err)
	}
	return svc
}

// TestLimitsOf resolves an organization's limits: its override's fields
// over the defaults, read again once the cached override is old.
func TestLimitsOf(t *testing.T) {
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	svc := limitedService(t, func() time.Time { return now }, cardflow.Limits{RatePerSecond: 10, Burst: 20, MaxOpenExecutions: 100})
	ctx := context.Background()
	if _, err := svc.SetLimits(ctx, cardflow.Limits{OrganizationID: "org-a", MaxOpenExecutions: 5}); err != nil {
		t.Fatal(err)
	}
	// Written around the service, as another instance would.
	if err := svc.Store().PutLimits(ctx, &cardflow.Limits{OrganizationID: "org-b", RatePerSecond: 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		org  string
		want cardflow.Limits
	}{
		{"org-a", cardflow.Limits{OrganizationID: "org-a", RatePerSecond: 10, Burst: 20, MaxOpenExecutions: 5}},
		{"org-b", cardflow.Limits{OrganizationID: "org-b", RatePerSecond: 1, Burst: 20, MaxOpenExecutions: 100}},
		{"org-c", cardflow.Limits{OrganizationID: "org-c", RatePerSecond: 10, Burst: 20, MaxOpenExecutions: 100}},
	} {
		got, err := svc.LimitsOf(ctx, c.org)
		if err != nil || got != c.want {
			t.Errorf("LimitsOf(%s): got %+v, %v, want %+v", c.org, got, err, c.want)
		}
	}
	if err := svc.Store().PutLimits(ctx, &cardflow.Limits{OrganizationID: "org-b", RatePerSecond: 2}); err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.LimitsOf(ctx, "org-b"); got.RatePerSecond != 1 {
		t.Errorf("within the cache's time: got rate %g, want the cached 1", got.RatePerSecond)
	}
	now = now.Add(31 * time.Second)
	if got, _ := svc.LimitsOf(ctx, "org-b"); got.RatePerSecond != 2 {
		t.Errorf("after the cache's time: got rate %g, want 2", got.RatePerSecond)
	}
	if err := svc.ClearLimits(ctx, "org-a"); err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.LimitsOf(ctx, "org-a"); got.MaxOpenExecutions != 100 {
		t.Errorf("after clear: got cap %d, want the default 100", got.MaxOpenExecutions)
	}
	if _, err := svc.SetLimits(ctx, cardflow.Limits{OrganizationID: "org-a", Burst: -1}); cardflow.ErrorCode(err) != cardflow.EINVALID {
		t.Errorf("negative burst: got %v, want VALIDATION_ERROR", err)
	}
}

// BenchmarkAdmit is the whole limit check of a request in local mode:
// the organization's limits (a cached override) and its token bucket.
func BenchmarkAdmit(b *testing.B) {
	svc := limitedService(b, time.Now, cardflow.Limits{RatePerSecond: 1e9, Burst: 1e9})
	p := &cardflow.Principal{OrganizationID: "org-a"}
	ctx := context.Background()
	for b.Loop() {
		if err := svc.Admit(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}
