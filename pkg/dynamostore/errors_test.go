package dynamostore

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// sdkError wraps err the way the DynamoDB client returns it.
func sdkError(op string, err error) error {
	return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: op, Err: err}
}

func cancelled(codes ...string) error {
	reasons := make([]types.CancellationReason, len(codes))
	for i, c := range codes {
		reasons[i] = types.CancellationReason{Code: aws.String(c)}
		if c == "ValidationError" {
			reasons[i].Message = aws.String("One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of 2048 bytes")
		}
	}
	return &types.TransactionCanceledException{Message: aws.String("Transaction cancelled"), CancellationReasons: reasons}
}

func TestTranslate(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code string
		// logged is what the log must hold; "" when nothing is logged.
		logged string
		race   bool
	}{
		{"conditional check failed", &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}, cardflow.ECONFLICT, "", true},
		{"transaction cancelled by a condition", cancelled("None", "ConditionalCheckFailed"), cardflow.ECONFLICT, "", true},
		{"transaction cancelled by a conflict", cancelled("TransactionConflict", "None"), cardflow.ECONFLICT, "", true},
		{"transaction conflict", &types.TransactionConflictException{Message: aws.String("Transaction is ongoing for the item")}, cardflow.ECONFLICT, "", true},
		{"transaction cancelled by throttling", cancelled("None", "ThrottlingError"), cardflow.ETHROTTLED, "Transaction cancelled", false},
		{"transaction cancelled by a caller's value", cancelled("ValidationError", "None"), cardflow.EINVALID, "Transaction cancelled", false},
		{"transaction cancelled otherwise", cancelled("None", "ItemCollectionSizeLimitExceeded"), cardflow.EINTERNAL, "Transaction cancelled", false},
		{"provisioned throughput exceeded", &retry.MaxAttemptsError{Attempt: 10, Err: &types.ProvisionedThroughputExceededException{Message: aws.String("rate exceeded")}}, cardflow.ETHROTTLED, "rate exceeded", false},
		{"throttling exception", &retry.MaxAttemptsError{Attempt: 10, Err: &types.ThrottlingException{Message: aws.String("slow down")}}, cardflow.ETHROTTLED, "slow down", false},
		{"request limit exceeded", &types.RequestLimitExceeded{Message: aws.String("account limit")}, cardflow.ETHROTTLED, "account limit", false},
		{"throttling without a type", &smithy.GenericAPIError{Code: "ThrottlingException", Message: "throttled"}, cardflow.ETHROTTLED, "throttled", false},
		{"key over the size limit", &smithy.GenericAPIError{Code: "ValidationException", Message: "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes"}, cardflow.EINVALID, "range keys", false},
		{"item over 400 KB", &smithy.GenericAPIError{Code: "ValidationException", Message: "Item size has exceeded the maximum allowed size"}, cardflow.ETOOLARGE, "Item size", false},
		{"expression of ours", &smithy.GenericAPIError{Code: "ValidationException", Message: "Invalid UpdateExpression: Syntax error; token: \"=\""}, cardflow.EINTERNAL, "Invalid UpdateExpression", false},
		{"missing table", &types.ResourceNotFoundException{Message: aws.String("Cannot do operations on a non-existent table")}, cardflow.EINTERNAL, "non-existent table", false},
		{"service fault", &types.InternalServerError{Message: aws.String("internal server error")}, cardflow.EUNAVAILABLE, "internal server error", false},
		{"connection refused", &smithyhttp.RequestSendError{Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}, cardflow.EUNAVAILABLE, "connection refused", false},
		{"deadline", context.DeadlineExceeded, cardflow.EUNAVAILABLE, "deadline exceeded", false},
		{"anything else", errors.New("unexpected end of JSON input"), cardflow.EINTERNAL, "unexpected end of JSON input", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			s := &Store{log: slog.New(slog.NewTextHandler(&log, nil))}
			err := sdkError("PutItem", tc.err)
			s.translate("SaveWorkflowVersion", &err)

			var ce *cardflow.Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %T %v, want a *cardflow.Error", err, err)
			}
			if ce.Code != tc.code {
				t.Errorf("got code %s, want %s", ce.Code, tc.code)
			}
			// Messages reach API callers: nothing of DynamoDB's own text.
			if detail := tc.err.Error(); strings.Contains(ce.Message, detail) || strings.Contains(ce.Message, "DynamoDB") {
				t.Errorf("got message %q, want none of the details %q", ce.Message, detail)
			}
			if tc.logged == "" {
				if log.Len() > 0 {
					t.Errorf("got log %q, want nothing logged", log.String())
				}
			} else if got := log.String(); !strings.Contains(got, tc.logged) || !strings.Contains(got, "op=SaveWorkflowVersion") {
				t.Errorf("got log %q, want the operation and %q", got, tc.logged)
			}
			if got := lostRace(sdkError("PutItem", tc.err)); got != tc.race {
				t.Errorf("lostRace: got %v, want %v", got, tc.race)
			}
		})
	}
}

func TestTranslateKeepsStoreErrors(t *testing.T) {
	var log bytes.Buffer
	s := &Store{log: slog.New(slog.NewTextHandler(&log, nil))}
	for _, want := range []error{nil, cardflow.Errorf(cardflow.ENOTFOUND, "workflow w1 version 2 not found")} {
		err := want
		s.translate("GetWorkflow", &err)
		if err != want {
			t.Errorf("got %v, want %v unchanged", err, want)
		}
		if lostRace(err) {
			t.Errorf("lostRace(%v): got true, want false", err)
		}
	}
	if log.Len() > 0 {
		t.Errorf("got log %q, want nothing logged", log.String())
	}
}

func TestFailedCondition(t *testing.T) {
	stored := map[string]types.AttributeValue{attrOrg: avS("org-1")}
	withItem := cancelled("None", "ConditionalCheckFailed", "ConditionalCheckFailed")
	withItem.(*types.TransactionCanceledException).CancellationReasons[1].Item = stored
	for _, tc := range []struct {
		name     string
		err      error
		want     int
		wantItem bool
	}{
		{"condition of a write", sdkError("PutItem", &types.ConditionalCheckFailedException{}), 0, false},
		{"condition of a write, with the stored item", sdkError("PutItem", &types.ConditionalCheckFailedException{Item: stored}), 0, true},
		{"condition in a transaction", sdkError("TransactWriteItems", cancelled("None", "ConditionalCheckFailed")), 1, false},
		{"first of two conditions, with the stored item", sdkError("TransactWriteItems", withItem), 1, true},
		{"conflict in a transaction", sdkError("TransactWriteItems", cancelled("TransactionConflict", "None")), -1, false},
		{"throttling", sdkError("PutItem", &types.ProvisionedThroughputExceededException{}), -1, false},
		{"nil", nil, -1, false},
	} {
		got, item := failedCondition(tc.err)
		if got != tc.want || (item != nil) != tc.wantItem {
			t.Errorf("%s: got %d with item %v, want %d with item %v", tc.name, got, item != nil, tc.want, tc.wantItem)
		}
		if got, want := conditionFailed(tc.err), tc.want >= 0; got != want {
			t.Errorf("%s: conditionFailed got %v, want %v", tc.name, got, want)
		}
	}
}
