package lambdamode

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Housekeeping is the function a scheduled EventBridge rule invokes: it
// runs the service's Housekeep, as local mode's ticker does.
type Housekeeping struct {
	runs *app.Runs
	log  *slog.Logger
}

// NewHousekeepingFunction builds the housekeeping function over runner,
// which wakes timed-out waits.
func (e Env) NewHousekeepingFunction(log *slog.Logger, runner cardflow.Runner) (*Housekeeping, error) {
	if log == nil {
		return nil, errors.New("lambdamode: housekeeping needs a logger")
	}
	svc, err := e.NewService(log, app.Deps{Runner: runner})
	if err != nil {
		return nil, err
	}
	if err := svc.Need(app.AreaRuns); err != nil {
		return nil, err
	}
	return &Housekeeping{runs: svc.Runs, log: log}, nil
}

// Handle runs housekeeping once and returns what it did. A failure of any
// part is an error, so the invocation shows as failed; the next run picks
// up what this one left.
func (h *Housekeeping) Handle(ctx context.Context, ev events.EventBridgeEvent) (app.HousekeepReport, error) {
	rep, err := h.runs.Housekeep(ctx)
	h.log.InfoContext(ctx, "housekeeping", slog.String("event", ev.ID),
		slog.Int("waits_timed_out", rep.WaitsTimedOut), slog.Int("processes_closed", rep.ProcessesClosed),
		slog.Int("early_resumes_dropped", rep.EarlyResumesDropped), slog.Int("processes_deleted", rep.ProcessesDeleted),
		slog.Int("idempotency_deleted", rep.IdempotencyDeleted))
	if err != nil {
		h.log.ErrorContext(ctx, "housekeeping failed", slog.Any("error", err))
	}
	return rep, err
}
