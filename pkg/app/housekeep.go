package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Housekeeping bounds.
const (
	// HousekeepBatch is how many records of each kind one Housekeep call
	// handles; the next call takes the rest.
	HousekeepBatch = 200
	// WaitGrace is how long past its deadline a wait is left to the
	// runner's own timer before housekeeping times it out.
	WaitGrace = time.Minute
)

// HousekeepReport counts what Housekeep did.
type HousekeepReport struct {
	// WaitsTimedOut counts overdue waits marked timed out, their runners
	// woken.
	WaitsTimedOut int `json:"waits_timed_out"`
	// ProcessesClosed counts process records of finished executions that
	// were still open, now closed.
	ProcessesClosed int `json:"processes_closed"`
	// EarlyResumesDropped counts resumes kept longer than the early-resume
	// window.
	EarlyResumesDropped int `json:"early_resumes_dropped"`
	// ProcessesDeleted and IdempotencyDeleted count expired records
	// deleted.
	ProcessesDeleted   int `json:"processes_deleted"`
	IdempotencyDeleted int `json:"idempotency_deleted"`
}

// Housekeep does what no request does: it times out waits whose runner
// missed the deadline (so such an execution still ends), drops early
// resumes older than the early-resume window, and deletes expired process
// and idempotency records. Each part goes on when another fails; the
// error joins the failures. A record that cannot be read is logged, by its
// ids, and skipped: it is no failure of housekeeping, and holds up none of
// the others.
func (s *Runs) Housekeep(ctx context.Context) (HousekeepReport, error) {
	var rep HousekeepReport
	now := s.now()
	var errs []error
	if err := s.expireWaits(ctx, now, &rep); err != nil {
		errs = append(errs, fmt.Errorf("time out overdue waits: %w", err))
	}
	if err := s.dropEarlyResumes(ctx, now, &rep); err != nil {
		errs = append(errs, fmt.Errorf("drop stale early resumes: %w", err))
	}
	n, err := s.store.DeleteExpiredProcesses(ctx, now.UnixMilli(), HousekeepBatch)
	rep.ProcessesDeleted = n
	if err != nil {
		errs = append(errs, fmt.Errorf("delete expired process records: %w", err))
	}
	n, err = s.store.DeleteExpiredIdempotency(ctx, now.UnixMilli(), HousekeepBatch)
	rep.IdempotencyDeleted = n
	if err != nil {
		errs = append(errs, fmt.Errorf("delete expired idempotency records: %w", err))
	}
	return rep, errors.Join(errs...)
}

// expireWaits claims overdue waits by their deadline and wakes the runner,
// which then leaves the step by its timeout exit. A wait whose execution
// has finished gets its process record closed instead.
func (s *Runs) expireWaits(ctx context.Context, now time.Time, rep *HousekeepReport) error {
	procs, err := s.store.ListOverdueWaits(ctx, now.Add(-WaitGrace).UnixMilli(), HousekeepBatch)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range procs {
		ex, err := s.store.GetExecution(ctx, p.OrganizationID, p.WorkflowID, p.ExecutionID)
		if errors.Is(err, cardflow.ErrUnreadable) {
			// Its runner ends it (cardflow.FailUnreadable); the others go on.
			s.log.WarnContext(ctx, "housekeeping skips a wait whose execution cannot be read", "organization", p.OrganizationID,
				"workflow", p.WorkflowID, "execution", p.ExecutionID, "process_id", p.ProcessID)
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ex.Open() {
			s.cancelApproval(ctx, ex, p.Wait.Seq)
			if err := cardflow.CloseProcess(ctx, s.store, ex, now); err != nil {
				errs = append(errs, err)
			} else {
				rep.ProcessesClosed++
			}
			continue
		}
		if ex.Status != cardflow.ExecWaiting || ex.State.Phase != cardflow.PhaseWaiting || ex.State.Wait != p.Wait.Seq {
			continue // the execution is not in this wait (yet): its runner decides
		}
		p.Wait.TimedOut = true
		err = s.store.PutProcess(ctx, p)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue // a resume came first, or the runner timed it out itself
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := s.runner.Wake(ctx, ex.Ref(), p.Wait); err != nil {
			errs = append(errs, err)
			continue
		}
		rep.WaitsTimedOut++
	}
	return errors.Join(errs...)
}

// dropEarlyResumes removes resumes kept for a wait that did not open
// within the early-resume window. Once dropped, they are never delivered.
func (s *Runs) dropEarlyResumes(ctx context.Context, now time.Time, rep *HousekeepReport) error {
	procs, err := s.store.ListStaleEarlyResumes(ctx, now.Add(-s.earlyResume).UnixMilli()-1, HousekeepBatch)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range procs {
		p.Early = nil
		err := s.store.PutProcess(ctx, p)
		switch {
		case cardflow.ErrorCode(err) == cardflow.ECONFLICT:
		case err != nil:
			errs = append(errs, err)
		default:
			rep.EarlyResumesDropped++
		}
	}
	return errors.Join(errs...)
}
