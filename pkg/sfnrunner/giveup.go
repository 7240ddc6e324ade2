package sfnrunner

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// GiveUpInput is what the definition's GiveUp state passes on of the
// error that Advance failed with for good: Step Functions' error name and
// cause (for a Lambda function error, the JSON of its errorMessage and
// errorType).
type GiveUpInput struct {
	Error string `json:"error"`
	Cause string `json:"cause"`
}

// giveUp records as FAILED an execution whose Advance failed for good, so
// that it is not left RUNNING while its state machine ends; a redrive
// continues it. It answers the execution's status for Route: FAILED, or
// how it ended meanwhile (a cancel).
func (h *Handlers) giveUp(ctx context.Context, ref cardflow.ExecutionRef, in GiveUpInput) (AdvanceOutput, error) {
	ex, err := cardflow.GiveUp(ctx, h.store, ref, giveUpReason(in), h.now())
	if err != nil {
		h.log.Error("advance failed for good, and marking the execution FAILED failed", slog.String("execution", ref.ExecutionID), slog.Any("error", err))
		return AdvanceOutput{}, err
	}
	h.log.Warn("advance failed for good: the execution has ended", slog.String("execution", ref.ExecutionID),
		slog.String("status", ex.Status), slog.String("error", in.Error), slog.String("cause", in.Cause))
	return AdvanceOutput{Status: ex.Status}, nil
}

// giveUpReason says why in words for the execution's readers: the error's
// message when it is one of cardflow's, which are written for them, and
// otherwise its name only, since other messages may carry internals.
func giveUpReason(in GiveUpInput) string {
	reason := "the runner gave up after its retries: " + in.Error
	var cause struct {
		ErrorMessage string `json:"errorMessage"`
	}
	if json.Unmarshal([]byte(in.Cause), &cause) == nil {
		// *cardflow.Error reads "cardflow: CODE: message".
		if rest, ok := strings.CutPrefix(cause.ErrorMessage, "cardflow: "); ok {
			if _, msg, ok := strings.Cut(rest, ": "); ok {
				reason += ": " + msg
			}
		}
	}
	return reason
}
