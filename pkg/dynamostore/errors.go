package dynamostore

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// translate turns the error of a Store method into a *cardflow.Error, in
// place; errors the store made itself, and records that cannot be read,
// pass unchanged. It is the one place that knows DynamoDB's errors.
// Messages reach API callers, so the details of faults go to the log only.
func (s *Store) translate(op string, err *error) {
	if *err == nil {
		return
	}
	var ce *cardflow.Error
	if errors.As(*err, &ce) || errors.Is(*err, cardflow.ErrUnreadable) {
		return
	}
	code, msg := classify(*err)
	switch code {
	case cardflow.EINTERNAL, cardflow.EUNAVAILABLE:
		s.log.Error("dynamodb request failed", slog.String("op", op), slog.String("code", code), slog.Any("error", *err))
	case cardflow.ETHROTTLED, cardflow.EINVALID, cardflow.ETOOLARGE:
		s.log.Warn("dynamodb refused a request", slog.String("op", op), slog.String("code", code), slog.Any("error", *err))
	}
	*err = &cardflow.Error{Code: code, Message: msg}
}

// classify returns the code and the message for a person of an error of the
// DynamoDB client. The SDK has retried throttling and faults of the service
// by the time it returns them.
func classify(err error) (code, message string) {
	var canceled *types.TransactionCanceledException
	if errors.As(err, &canceled) {
		return classifyCancellation(canceled.CancellationReasons)
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ConditionalCheckFailedException", "TransactionConflictException", "TransactionInProgressException":
			return cardflow.ECONFLICT, conflictMessage
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded":
			return cardflow.ETHROTTLED, throttledMessage
		case "ValidationException":
			return classifyValidation(api.ErrorMessage())
		case "InternalServerError", "ServiceUnavailable":
			return cardflow.EUNAVAILABLE, unavailableMessage
		}
		return cardflow.EINTERNAL, internalMessage
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return cardflow.EUNAVAILABLE, "the store did not answer in time"
	}
	var send *smithyhttp.RequestSendError
	var netErr net.Error
	if errors.As(err, &send) || errors.As(err, &netErr) {
		return cardflow.EUNAVAILABLE, unavailableMessage
	}
	return cardflow.EINTERNAL, internalMessage
}

const (
	conflictMessage    = "a concurrent change of the same record came first; try again"
	throttledMessage   = "the store is busy; try again shortly"
	unavailableMessage = "the store cannot be reached; try again later"
	internalMessage    = "internal error"
)

// classifyCancellation reads why a transaction was cancelled: a reason per
// item, "None" for the items that were fine.
func classifyCancellation(reasons []types.CancellationReason) (code, message string) {
	code, message = cardflow.EINTERNAL, internalMessage
	for _, r := range reasons {
		switch aws.ToString(r.Code) {
		case "ConditionalCheckFailed", "TransactionConflict":
			return cardflow.ECONFLICT, conflictMessage
		case "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded":
			code, message = cardflow.ETHROTTLED, throttledMessage
		case "ValidationError":
			if code == cardflow.EINTERNAL {
				code, message = classifyValidation(aws.ToString(r.Message))
			}
		}
	}
	return code, message
}

// classifyValidation tells a ValidationException that a caller's value
// caused (DynamoDB starts those with "One or more parameter values", as for
// an id over the key size limit) from one of a request the store built
// wrongly, which is a fault of ours.
func classifyValidation(msg string) (code, message string) {
	switch {
	case strings.Contains(msg, "Item size") || strings.Contains(msg, "item size"):
		return cardflow.ETOOLARGE, "the record is larger than the store can hold"
	case strings.HasPrefix(msg, "One or more parameter values"):
		return cardflow.EINVALID, "a value of the request is not one the store can hold (ids must not be empty and stay under 1 KB)"
	}
	return cardflow.EINTERNAL, internalMessage
}

// conditionFailed reports whether err is a failed condition of a write, of
// its own or within a transaction.
func conditionFailed(err error) bool {
	i, _ := failedCondition(err)
	return i >= 0
}

// failedCondition returns which write failed its condition: 0 for a write
// of its own, the position in the transaction for a transaction's, -1 when
// err is no failed condition. The item is the one stored, when the write
// asked for it (ALL_OLD) and there was one.
func failedCondition(err error) (int, map[string]types.AttributeValue) {
	var cond *types.ConditionalCheckFailedException
	if errors.As(err, &cond) {
		return 0, cond.Item
	}
	var canceled *types.TransactionCanceledException
	if errors.As(err, &canceled) {
		for i, r := range canceled.CancellationReasons {
			if aws.ToString(r.Code) == "ConditionalCheckFailed" {
				return i, r.Item
			}
		}
	}
	return -1, nil
}

// lostRace reports whether err says a concurrent write of the same items
// came first, so the write may start over.
func lostRace(err error) bool {
	var ce *cardflow.Error
	if err == nil || errors.As(err, &ce) {
		return false
	}
	code, _ := classify(err)
	return code == cardflow.ECONFLICT
}
