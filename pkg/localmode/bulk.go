package localmode

import (
	"context"
	"log/slog"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
)

// bulkRound is how long one round of the bulk worker works before it
// looks for other operations, and bulkTick how often it looks when not
// woken: often enough to take over, soon after its lease ends, an
// operation a stopped process left.
const (
	bulkRound = 30 * time.Second
	bulkTick  = 10 * time.Second
)

// bulkWorker runs bulk operations in the background of the serving
// process: at once when one starts (kick), and on a ticker for those an
// earlier process left.
type bulkWorker struct {
	runs   *app.Runs
	log    *slog.Logger
	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

func newBulkWorker(log *slog.Logger) *bulkWorker {
	return &bulkWorker{log: log, wake: make(chan struct{}, 1)}
}

// kick wakes the worker; it never blocks.
func (w *bulkWorker) kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *bulkWorker) start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan struct{})
	go func() {
		defer close(w.done)
		t := time.NewTicker(bulkTick)
		defer t.Stop()
		for {
			if err := w.runs.RunBulkOperations(ctx, time.Now().Add(bulkRound)); err != nil && ctx.Err() == nil {
				w.log.Error("bulk operations", slog.Any("error", err))
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-w.wake:
			}
		}
	}()
}

// stop ends the loop and waits for the round in progress, which stops at
// its next write: the operation goes on where it was at the next start.
func (w *bulkWorker) stop() {
	if w.cancel != nil {
		w.cancel()
		<-w.done
	}
}
