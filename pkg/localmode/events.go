package localmode

import (
	"context"
	"log/slog"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/outbox"
	"github.com/cardflow/cardflow/pkg/webhooks"
)

// DefaultEventsTick is how often local mode looks at the outbox besides
// right after each change: when failed deliveries are retried.
const DefaultEventsTick = time.Second

// events delivers the store's outbox to the organizations' webhooks: at
// start-up (what a killed process left), after every change and on a
// ticker for retries.
type events struct {
	relay  *outbox.Relay
	pub    *webhooks.Publisher
	every  time.Duration
	cancel context.CancelFunc
	done   chan struct{}
}

func newEvents(store cardflow.Store, log *slog.Logger) (*events, error) {
	// Each organization's deliveries have their own queue and workers, and
	// the relay does not wait for them: an event delivered wakes it, so
	// that the event leaves the outbox at once.
	var relay *outbox.Relay
	pub, err := webhooks.New(store, webhooks.WithLogger(log), webhooks.WithNotify(func() { relay.Wake() }))
	if err != nil {
		return nil, err
	}
	relay, err = outbox.New(store, pub, outbox.WithLogger(log), outbox.WithBatch(500))
	if err != nil {
		return nil, err
	}
	return &events{relay: relay, pub: pub, every: DefaultEventsTick}, nil
}

// notifier passes each change on to next and wakes the relay.
func (ev *events) notifier(next cardflow.ExecutionNotifier) cardflow.ExecutionNotifier {
	return wakeNotifier{next: next, relay: ev.relay}
}

type wakeNotifier struct {
	next  cardflow.ExecutionNotifier
	relay *outbox.Relay
}

func (n wakeNotifier) ExecutionChanged(ref cardflow.ExecutionRef) {
	n.next.ExecutionChanged(ref)
	n.relay.Wake()
}

func (ev *events) start() {
	ctx, cancel := context.WithCancel(context.Background())
	ev.cancel, ev.done = cancel, make(chan struct{})
	go func() {
		defer close(ev.done)
		ev.relay.Run(ctx, ev.every)
	}()
}

// stop ends the loop and the deliveries in flight, whose events stay in
// the outbox; stopping one that never started does nothing.
func (ev *events) stop() {
	if ev.cancel != nil {
		ev.cancel()
		<-ev.done
		ev.pub.Close()
	}
}
