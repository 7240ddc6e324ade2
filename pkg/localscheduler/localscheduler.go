// Package localscheduler is the in-process cardflow.Scheduler of local mode.
// It evaluates EventBridge Scheduler expressions with pkg/awscron, so a
// schedule fires locally when it would fire on AWS.
package localscheduler

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/cardflow/cardflow/pkg/awscron"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// FireFunc starts the execution a schedule fires at at.
type FireFunc func(ctx context.Context, sc *cardflow.Schedule, at time.Time) error

// Scheduler fires ACTIVE schedules on time. Runs missed while a schedule
// was PAUSED, or while the process was down, are not fired afterwards.
type Scheduler struct {
	fire FireFunc
	now  func() time.Time
	log  *slog.Logger

	mu      sync.Mutex
	entries map[key]*entry
	changed chan struct{}

	cancel context.CancelFunc
	done   chan struct{}
}

var _ cardflow.Scheduler = (*Scheduler)(nil)

type key struct {
	org, workflow string
	version       int
}

type entry struct {
	sc    cardflow.Schedule
	sched *awscron.Schedule
	// next is the next fire time; zero while paused or when it fires no more.
	next time.Time
}

// Option configures a Scheduler.
type Option func(*Scheduler)

// WithClock replaces the wall clock.
func WithClock(now func() time.Time) Option { return func(s *Scheduler) { s.now = now } }

// WithLogger sets the logger for failed fires.
func WithLogger(l *slog.Logger) Option { return func(s *Scheduler) { s.log = l } }

// New returns a scheduler that calls fire. Start runs it.
func New(fire FireFunc, opts ...Option) (*Scheduler, error) {
	if fire == nil {
		return nil, errors.New("localscheduler: fire function is nil")
	}
	s := &Scheduler{fire: fire, now: time.Now, log: slog.Default(), entries: map[key]*entry{}, changed: make(chan struct{}, 1)}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Load arms every schedule the store holds, at start-up.
func (s *Scheduler) Load(ctx context.Context, store cardflow.EngineStore) error {
	all, err := store.ListSchedules(ctx)
	if err != nil {
		return err
	}
	for _, sc := range all {
		if err := s.Put(ctx, sc); err != nil {
			s.log.Error("schedule not armed", "workflow", sc.WorkflowID, "version", sc.WorkflowVersion, "error", err)
		}
	}
	return nil
}

// Put implements cardflow.Scheduler. An ACTIVE schedule's next run is the
// first after now: playing a paused schedule fires none of the runs missed.
func (s *Scheduler) Put(_ context.Context, sc *cardflow.Schedule) error {
	sched, err := awscron.Parse(sc.Expression, sc.Timezone, awscron.WithStart(time.UnixMilli(sc.CreatedOn)))
	if err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "schedule of workflow %s: %v", sc.WorkflowID, err)
	}
	e := &entry{sc: *sc, sched: sched}
	if sc.State == cardflow.ScheduleActive {
		e.next, _ = sched.Next(s.now())
	}
	s.mu.Lock()
	s.entries[key{sc.OrganizationID, sc.WorkflowID, sc.WorkflowVersion}] = e
	s.mu.Unlock()
	s.signal()
	return nil
}

// Delete implements cardflow.Scheduler.
func (s *Scheduler) Delete(_ context.Context, sc *cardflow.Schedule) error {
	s.mu.Lock()
	delete(s.entries, key{sc.OrganizationID, sc.WorkflowID, sc.WorkflowVersion})
	s.mu.Unlock()
	s.signal()
	return nil
}

// Lookup returns a schedule as the scheduler holds it, with its next fire
// time (zero when paused or finished).
func (s *Scheduler) Lookup(org, workflowID string, version int) (cardflow.Schedule, time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key{org, workflowID, version}]
	if !ok {
		return cardflow.Schedule{}, time.Time{}, false
	}
	return e.sc, e.next, true
}

func (s *Scheduler) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Tick fires every schedule due at now and arms its next run. The loop
// calls it; tests call it with the times they want.
func (s *Scheduler) Tick(ctx context.Context, now time.Time) {
	type due struct {
		sc cardflow.Schedule
		at time.Time
	}
	var fires []due
	s.mu.Lock()
	for _, e := range s.entries {
		if e.next.IsZero() || e.next.After(now) {
			continue
		}
		fires = append(fires, due{e.sc, e.next})
		// Arm from the later of the fire time and now, so a process that
		// was suspended does not fire a burst of missed runs.
		e.next, _ = e.sched.Next(later(e.next, now))
	}
	s.mu.Unlock()
	for _, f := range fires {
		if err := s.fire(ctx, &f.sc, f.at); err != nil {
			s.log.Error("scheduled run not started", "workflow", f.sc.WorkflowID, "version", f.sc.WorkflowVersion, "at", f.at, "error", err)
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// earliest returns the next fire time of all schedules, zero if none.
func (s *Scheduler) earliest() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t time.Time
	for _, e := range s.entries {
		if !e.next.IsZero() && (t.IsZero() || e.next.Before(t)) {
			t = e.next
		}
	}
	return t
}

// Start runs the loop that fires schedules until Close.
func (s *Scheduler) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		for {
			var timer <-chan time.Time
			if t := s.earliest(); !t.IsZero() {
				timer = time.After(t.Sub(s.now()))
			}
			select {
			case <-ctx.Done():
				return
			case <-s.changed:
			case <-timer:
				s.Tick(ctx, s.now())
			}
		}
	}()
}

// Close stops the loop.
func (s *Scheduler) Close() error {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	return nil
}
