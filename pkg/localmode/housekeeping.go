package localmode

import (
	"context"
	"log/slog"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
)

// DefaultHousekeeping is how often local mode runs housekeeping: often
// enough that a wait whose timer was lost ends about a minute late.
const DefaultHousekeeping = time.Minute

// housekeeper runs the service's Housekeep on a ticker, as the scheduled
// housekeeping Lambda does on AWS.
type housekeeper struct {
	runs   *app.Runs
	every  time.Duration
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}
}

func newHousekeeper(runs *app.Runs, every time.Duration, log *slog.Logger) *housekeeper {
	if every <= 0 {
		every = DefaultHousekeeping
	}
	return &housekeeper{runs: runs, every: every, log: log}
}

// start runs housekeeping now and then at every tick, until stop.
func (h *housekeeper) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan struct{})
	go func() {
		defer close(h.done)
		t := time.NewTicker(h.every)
		defer t.Stop()
		for {
			h.run(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

func (h *housekeeper) run(ctx context.Context) {
	rep, err := h.runs.Housekeep(ctx)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		h.log.Error("housekeeping failed", slog.Any("error", err))
	}
	if rep != (app.HousekeepReport{}) {
		h.log.Info("housekeeping", slog.Int("waits_timed_out", rep.WaitsTimedOut), slog.Int("processes_closed", rep.ProcessesClosed),
			slog.Int("early_resumes_dropped", rep.EarlyResumesDropped),
			slog.Int("processes_deleted", rep.ProcessesDeleted), slog.Int("idempotency_deleted", rep.IdempotencyDeleted))
	}
}

// stop ends the loop and waits for a run in progress; stopping a
// housekeeper that never started does nothing.
func (h *housekeeper) stop() {
	if h.cancel != nil {
		h.cancel()
		<-h.done
	}
}
