package localscheduler_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/schedulertest"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/localscheduler"
)

func TestContract(t *testing.T) {
	schedulertest.Run(t, func(t *testing.T) schedulertest.Harness {
		s, err := localscheduler.New(func(context.Context, *cardflow.Schedule, time.Time) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return schedulertest.Harness{Scheduler: s, Inspect: func(t *testing.T, sc *cardflow.Schedule) schedulertest.State {
			got, next, ok := s.Lookup(sc.OrganizationID, sc.WorkflowID, sc.WorkflowVersion)
			if !ok {
				return schedulertest.State{}
			}
			return schedulertest.State{Exists: true, Enabled: !next.IsZero(), Expression: got.Expression, Timezone: got.Timezone}
		}}
	})
}

// fires records what a scheduler fired.
type fires struct {
	mu  sync.Mutex
	got []string
}

func (f *fires) fire(_ context.Context, sc *cardflow.Schedule, at time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, sc.WorkflowID+"@"+at.UTC().Format(time.RFC3339))
	return nil
}

func (f *fires) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	got := f.got
	f.got = nil
	return got
}

func TestFiresOnTimeAndSkipsPausedRuns(t *testing.T) {
	now := time.Date(2026, 3, 27, 7, 0, 0, 0, time.UTC) // Friday, 08:00 in Berlin
	var f fires
	s, err := localscheduler.New(f.fire, localscheduler.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sc := &cardflow.Schedule{OrganizationID: "org", WorkflowID: "wf", WorkflowVersion: 1,
		Expression: "cron(0 8 ? * MON-FRI *)", Timezone: "Europe/Berlin", State: cardflow.ScheduleActive}
	if err := s.Put(ctx, sc); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		at   time.Time
		want []string
	}{
		{time.Date(2026, 3, 27, 6, 59, 59, 0, time.UTC), nil},
		// Put ran at Friday 08:00 itself; the next run is strictly later: Monday.
		{time.Date(2026, 3, 30, 5, 59, 0, 0, time.UTC), nil},
		// Monday 08:00 CEST (summer time began on Sunday) is 06:00 UTC.
		{time.Date(2026, 3, 30, 6, 0, 0, 0, time.UTC), []string{"wf@2026-03-30T06:00:00Z"}},
		{time.Date(2026, 3, 30, 6, 0, 30, 0, time.UTC), nil},
	} {
		s.Tick(ctx, step.at)
		if got := f.take(); !slices.Equal(got, step.want) {
			t.Errorf("tick at %s: got %v, want %v", step.at, got, step.want)
		}
	}

	// Paused over Tuesday and Wednesday, played on Wednesday noon: the
	// missed runs are not fired, Thursday's is.
	sc.State = cardflow.SchedulePaused
	s.Put(ctx, sc)
	s.Tick(ctx, time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC))
	now = time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	sc.State = cardflow.ScheduleActive
	s.Put(ctx, sc)
	s.Tick(ctx, time.Date(2026, 4, 1, 10, 0, 1, 0, time.UTC))
	if got := f.take(); len(got) != 0 {
		t.Errorf("after playing: got %v, want no runs missed while paused", got)
	}
	s.Tick(ctx, time.Date(2026, 4, 2, 6, 0, 0, 0, time.UTC))
	if got, want := f.take(), []string{"wf@2026-04-02T06:00:00Z"}; !slices.Equal(got, want) {
		t.Errorf("Thursday: got %v, want %v", got, want)
	}
}

// TestLoopFires runs the real loop on the wall clock with a one-time
// schedule a moment ahead.
func TestLoopFires(t *testing.T) {
	var f fires
	s, err := localscheduler.New(f.fire)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Close()
	at := time.Now().Add(1500 * time.Millisecond).UTC().Truncate(time.Second).Add(time.Second)
	sc := &cardflow.Schedule{OrganizationID: "org", WorkflowID: "once", WorkflowVersion: 1,
		Expression: "at(" + at.Format("2006-01-02T15:04:05") + ")", State: cardflow.ScheduleActive}
	if err := s.Put(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the run", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.got) > 0
	})
	if got, want := f.take(), []string{"once@" + at.Format(time.RFC3339)}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
