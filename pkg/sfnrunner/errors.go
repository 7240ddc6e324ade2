package sfnrunner

import (
	"context"
	"errors"
	"net"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// translate turns an error of the Step Functions client into a
// *cardflow.Error. It is the one place that knows Step Functions' errors.
// Messages reach API callers: they never carry a task token.
func translate(err error) error {
	if err == nil {
		return nil
	}
	switch apiErrorCode(err) {
	case "TaskTimedOut", "TaskDoesNotExist", "InvalidToken":
		// The Park task has ended already: the wait timed out, or the
		// execution moved on or was stopped.
		return cardflow.Errorf(cardflow.ECONFLICT, "the wait is no longer open: it timed out or its execution moved on")
	case "ExecutionDoesNotExist", "StateMachineDoesNotExist":
		return cardflow.Errorf(cardflow.ENOTFOUND, "the execution does not run in Step Functions")
	case "ExecutionLimitExceeded", "ThrottlingException", "TooManyRequestsException":
		return cardflow.Errorf(cardflow.ETHROTTLED, "the workflow runner is busy; try again shortly")
	case "ServiceUnavailable", "InternalServerError", "ServiceException":
		return cardflow.Errorf(cardflow.EUNAVAILABLE, "the workflow runner cannot be reached; try again later")
	case "":
	default:
		return cardflow.Errorf(cardflow.EINTERNAL, "internal error")
	}
	var send *smithyhttp.RequestSendError
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.As(err, &send) || errors.As(err, &netErr) {
		return cardflow.Errorf(cardflow.EUNAVAILABLE, "the workflow runner cannot be reached; try again later")
	}
	return cardflow.Errorf(cardflow.EINTERNAL, "internal error")
}

// apiErrorCode returns the error code Step Functions answered, or "".
func apiErrorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}
