// Package outbox publishes the events the store keeps with each change of
// an execution (cardflow.EventStore): it reads the pending ones, hands them
// to a publisher (webhooks locally, EventBridge on AWS) and deletes those
// the publisher took. An event is deleted only after it is published, so a
// crash anywhere publishes it again: at least once, never lost.
package outbox

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Publisher publishes events. It returns the events it published; the
// others stay pending and come again in a later pass. A publisher whose
// receivers may be slow (webhooks) delivers in the background and returns
// an event in a pass after its delivery, so that no receiver holds up a
// pass, and with it every other organization's events.
type Publisher interface {
	Publish(ctx context.Context, events []*cardflow.Published) ([]*cardflow.Published, error)
}

// Store is the part of cardflow.EventStore the relay needs.
type Store interface {
	ListPendingEvents(ctx context.Context, after string, limit int) ([]*cardflow.Published, error)
	DeletePendingEvents(ctx context.Context, events []*cardflow.Published) error
}

// DefaultBatch is how many events one pass reads.
const DefaultBatch = 100

// DefaultGather is how long Run lets changes gather after a wake before
// its pass: each pass that publishes ends in a synced delete, and an
// execution makes several changes within a few milliseconds, so one pass
// for them costs one delete instead of one each.
const DefaultGather = 10 * time.Millisecond

// Relay moves events from the store's outbox to a publisher.
type Relay struct {
	store  Store
	pub    Publisher
	log    *slog.Logger
	batch  int
	gather time.Duration
	wake   chan struct{}
}

// Option configures a Relay.
type Option func(*Relay)

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(r *Relay) { r.log = l } }

// WithBatch sets how many events one pass reads (default DefaultBatch).
func WithBatch(n int) Option { return func(r *Relay) { r.batch = n } }

// New returns a relay from store to pub.
func New(store Store, pub Publisher, opts ...Option) (*Relay, error) {
	if store == nil || pub == nil {
		return nil, errors.New("outbox: a store and a publisher are required")
	}
	r := &Relay{store: store, pub: pub, log: slog.Default(), batch: DefaultBatch, gather: DefaultGather, wake: make(chan struct{}, 1)}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// Pass publishes one batch of the pending events whose ids sort after
// after, and returns how many it published and the id to read on from
// ("" once the batch reached the end of the outbox).
func (r *Relay) Pass(ctx context.Context, after string) (published int, next string, err error) {
	events, err := r.store.ListPendingEvents(ctx, after, r.batch)
	if err != nil || len(events) == 0 {
		return 0, "", err
	}
	if len(events) == r.batch {
		next = events[len(events)-1].ID
	}
	done, err := r.pub.Publish(ctx, events)
	if len(done) > 0 {
		if derr := r.store.DeletePendingEvents(ctx, done); derr != nil {
			// Published but still pending: they go out again, which
			// at least once allows.
			return len(done), next, derr
		}
	}
	return len(done), next, err
}

// Drain reads the whole outbox once, batch after batch, and publishes
// what it can: events that wait for a retry do not hold up those behind
// them.
func (r *Relay) Drain(ctx context.Context) (int, error) {
	total, after := 0, ""
	for {
		n, next, err := r.Pass(ctx, after)
		total += n
		if err != nil || next == "" {
			return total, err
		}
		after = next
	}
}

// Wake asks a running relay for a pass now rather than at its next tick:
// a change was stored.
func (r *Relay) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run drains the outbox until ctx ends: at once, whenever woken (after the
// gather time, so that the changes close behind the first share the pass),
// and every interval, which is when failed deliveries are retried.
func (r *Relay) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := r.Drain(ctx); err != nil && ctx.Err() == nil {
			r.log.WarnContext(ctx, "events not published yet", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.wake:
			if !sleep(ctx, r.gather) {
				return
			}
			// The pass that follows covers the changes that woke it
			// meanwhile.
			select {
			case <-r.wake:
			default:
			}
		}
	}
}

// sleep waits d, or less when ctx ends first: it reports whether ctx is
// still live.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
