package lambdamode

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// bulkMargin is how long before its invocation's deadline the bulk worker
// stops taking up pages: a page of 30 executions takes about a second.
const bulkMargin = 10 * time.Second

// BulkWorker is the function a schedule invokes every minute to work bulk
// operations (docs/DECISIONS.md, "Bulk operations").
type BulkWorker struct {
	runs *app.Runs
	log  *slog.Logger
}

// NewBulkWorkerFunction builds the bulk worker over runner, which cancel
// and redrive use.
func (e Env) NewBulkWorkerFunction(log *slog.Logger, runner cardflow.Runner) (*BulkWorker, error) {
	if log == nil {
		return nil, errors.New("lambdamode: the bulk worker needs a logger")
	}
	svc, err := e.NewService(log, app.Deps{Runner: runner})
	if err != nil {
		return nil, err
	}
	if err := svc.Need(app.AreaRuns); err != nil {
		return nil, err
	}
	return &BulkWorker{runs: svc.Runs, log: log}, nil
}

// Handle works the running operations until shortly before the
// invocation's deadline; an operation it leaves goes on at the next
// invocation, where it stopped.
func (w *BulkWorker) Handle(ctx context.Context, ev events.EventBridgeEvent) error {
	until := time.Now().Add(50 * time.Second)
	if d, ok := ctx.Deadline(); ok {
		until = d.Add(-bulkMargin)
	}
	err := w.runs.RunBulkOperations(ctx, until)
	if err != nil {
		w.log.ErrorContext(ctx, "bulk operations", slog.String("event", ev.ID), slog.Any("error", err))
	}
	return err
}
