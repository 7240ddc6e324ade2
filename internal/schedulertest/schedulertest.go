// Package schedulertest is the contract suite of cardflow.Scheduler: what
// Put and Delete promise, observed through the adapter's own view of its
// schedules.
package schedulertest

import (
	"context"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// State is a schedule as the scheduler holds it.
type State struct {
	Exists  bool
	Enabled bool
	// Expression and Timezone as the scheduler will evaluate them.
	Expression, Timezone string
}

// Harness is the scheduler under test and a way to look into it.
type Harness struct {
	Scheduler cardflow.Scheduler
	Inspect   func(t *testing.T, sc *cardflow.Schedule) State
}

// Run runs the suite.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	ctx := context.Background()
	schedule := func(org string) *cardflow.Schedule {
		now := time.Now().UnixMilli()
		return &cardflow.Schedule{
			OrganizationID: org, WorkspaceID: "ws-1", WorkflowID: cardflow.NewID(time.Now()), WorkflowVersion: 2,
			Expression: "cron(0 8 ? * MON-FRI *)", Timezone: "Europe/Berlin", State: cardflow.ScheduleActive,
			CreatedOn: now, ModifiedOn: now,
		}
	}
	check := func(t *testing.T, h Harness, what string, sc *cardflow.Schedule, want State) {
		t.Helper()
		if got := h.Inspect(t, sc); got != want {
			t.Errorf("%s: got %+v, want %+v", what, got, want)
		}
	}
	t.Run("Lifecycle", func(t *testing.T) {
		h := newHarness(t)
		sc := schedule("org-" + cardflow.NewID(time.Now()))
		check(t, h, "before Put", sc, State{})
		if err := h.Scheduler.Put(ctx, sc); err != nil {
			t.Fatalf("Put: %v", err)
		}
		active := State{Exists: true, Enabled: true, Expression: sc.Expression, Timezone: sc.Timezone}
		check(t, h, "after Put", sc, active)
		if err := h.Scheduler.Put(ctx, sc); err != nil {
			t.Fatalf("Put again: %v", err)
		}
		check(t, h, "after a second Put", sc, active)

		sc.State = cardflow.SchedulePaused
		if err := h.Scheduler.Put(ctx, sc); err != nil {
			t.Fatalf("Put paused: %v", err)
		}
		paused := active
		paused.Enabled = false
		check(t, h, "after pausing", sc, paused)

		sc.State, sc.Expression = cardflow.ScheduleActive, "rate(15 minutes)"
		if err := h.Scheduler.Put(ctx, sc); err != nil {
			t.Fatalf("Put played with a new expression: %v", err)
		}
		active.Expression = "rate(15 minutes)"
		check(t, h, "after playing", sc, active)

		if err := h.Scheduler.Delete(ctx, sc); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		check(t, h, "after Delete", sc, State{})
		if err := h.Scheduler.Delete(ctx, sc); err != nil {
			t.Errorf("Delete of a missing schedule: %v", err)
		}
	})
	t.Run("SeparateWorkflows", func(t *testing.T) {
		h := newHarness(t)
		org := "org-" + cardflow.NewID(time.Now())
		a, b := schedule(org), schedule(org)
		for _, sc := range []*cardflow.Schedule{a, b} {
			if err := h.Scheduler.Put(ctx, sc); err != nil {
				t.Fatalf("Put: %v", err)
			}
		}
		if err := h.Scheduler.Delete(ctx, a); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		check(t, h, "the other workflow's schedule", b, State{Exists: true, Enabled: true, Expression: b.Expression, Timezone: b.Timezone})
	})
	t.Run("LaterVersion", func(t *testing.T) {
		// Publishing a later scheduled version puts its schedule, then
		// deletes the earlier version's: the later one must stay.
		h := newHarness(t)
		v1 := schedule("org-" + cardflow.NewID(time.Now()))
		v2 := *v1
		v2.WorkflowVersion, v2.Expression = 3, "rate(1 hour)"
		for _, sc := range []*cardflow.Schedule{v1, &v2} {
			if err := h.Scheduler.Put(ctx, sc); err != nil {
				t.Fatalf("Put version %d: %v", sc.WorkflowVersion, err)
			}
		}
		if err := h.Scheduler.Delete(ctx, v1); err != nil {
			t.Fatalf("Delete version 1: %v", err)
		}
		check(t, h, "the later version's schedule", &v2, State{Exists: true, Enabled: true, Expression: v2.Expression, Timezone: v2.Timezone})
	})
	t.Run("InvalidExpression", func(t *testing.T) {
		h := newHarness(t)
		sc := schedule("org-" + cardflow.NewID(time.Now()))
		sc.Expression = "cron(0 8 * * MON *)"
		if err := h.Scheduler.Put(ctx, sc); cardflow.ErrorCode(err) != cardflow.EINVALID {
			t.Errorf("Put of %s: got %v, want VALIDATION_ERROR", sc.Expression, err)
		}
		check(t, h, "after a refused Put", sc, State{})
	})
}
