package ebscheduler

import (
	"context"
	"errors"
	"log/slog"
	"net"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// translate turns an error of the Scheduler API into a *cardflow.Error;
// nil stays nil. It is the one place that knows the service's errors.
// Messages reach API callers, so details (ARNs, the service's own words)
// go to the log only.
func (s *Scheduler) translate(op string, sc *cardflow.Schedule, err error) error {
	if err == nil {
		return nil
	}
	code, msg := classify(err)
	level := slog.LevelWarn
	if code == cardflow.EINTERNAL || code == cardflow.EUNAVAILABLE {
		level = slog.LevelError
	}
	s.log.Log(context.Background(), level, "eventbridge scheduler request failed",
		slog.String("op", op), slog.String("code", code), slog.String("workflow", sc.WorkflowID), slog.Any("error", err))
	if code == cardflow.EINVALID {
		msg += " of workflow " + sc.WorkflowID + ": check its expression and time zone"
	}
	return &cardflow.Error{Code: code, Message: msg}
}

// classify returns the code and the message for a person of an error of
// the Scheduler client. The SDK has retried throttling and the service's
// faults by the time it returns them.
func classify(err error) (code, message string) {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ThrottlingException":
			return cardflow.ETHROTTLED, "EventBridge Scheduler is throttling; try again shortly"
		case "ServiceQuotaExceededException":
			return cardflow.EUNAVAILABLE, "the account's EventBridge Scheduler quota is used up"
		case "ValidationException":
			return cardflow.EINVALID, "EventBridge Scheduler refused the schedule"
		case "ConflictException":
			return cardflow.ECONFLICT, "a concurrent change of the same schedule came first; try again"
		case "ResourceNotFoundException":
			// The schedule group is missing: a deployment fault.
			return cardflow.EINTERNAL, "internal error"
		case "InternalServerException":
			return cardflow.EUNAVAILABLE, "EventBridge Scheduler cannot be reached; try again later"
		}
		return cardflow.EINTERNAL, "internal error"
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return cardflow.EUNAVAILABLE, "EventBridge Scheduler did not answer in time"
	}
	var send *smithyhttp.RequestSendError
	var netErr net.Error
	if errors.As(err, &send) || errors.As(err, &netErr) {
		return cardflow.EUNAVAILABLE, "EventBridge Scheduler cannot be reached; try again later"
	}
	return cardflow.EINTERNAL, "internal error"
}
