package sfnrunner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func TestTranslate(t *testing.T) {
	api := func(code string) error {
		return fmt.Errorf("operation error SFN: %w", &smithy.GenericAPIError{Code: code, Message: "token sfnfake1.SECRET is gone"})
	}
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"task timed out", api("TaskTimedOut"), cardflow.ECONFLICT},
		{"task does not exist", api("TaskDoesNotExist"), cardflow.ECONFLICT},
		{"invalid token", api("InvalidToken"), cardflow.ECONFLICT},
		{"execution does not exist", api("ExecutionDoesNotExist"), cardflow.ENOTFOUND},
		{"state machine does not exist", api("StateMachineDoesNotExist"), cardflow.ENOTFOUND},
		{"execution limit", api("ExecutionLimitExceeded"), cardflow.ETHROTTLED},
		{"throttled", api("ThrottlingException"), cardflow.ETHROTTLED},
		{"service fault", api("ServiceUnavailable"), cardflow.EUNAVAILABLE},
		{"unknown API error", api("InvalidArn"), cardflow.EINTERNAL},
		{"deadline", context.DeadlineExceeded, cardflow.EUNAVAILABLE},
		{"network", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, cardflow.EUNAVAILABLE},
		{"other", errors.New("boom"), cardflow.EINTERNAL},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := translate(tt.err)
			if got := cardflow.ErrorCode(err); got != tt.want {
				t.Errorf("got code %q, want %q (%v)", got, tt.want, err)
			}
			if err != nil && strings.Contains(err.Error(), "SECRET") {
				t.Errorf("the message %q carries the task token", err)
			}
		})
	}
}

func TestExecutionARNPrefix(t *testing.T) {
	for _, tt := range []struct {
		in, want string
	}{
		{"arn:aws:states:eu-central-1:123456789012:stateMachine:cardflow-runner", "arn:aws:states:eu-central-1:123456789012:execution:cardflow-runner:"},
		{"arn:aws:states:eu-central-1:123456789012:activity:x", ""},
		{"cardflow-runner", ""},
		{"arn:aws:states:eu-central-1:123456789012:stateMachine:", ""},
	} {
		got, err := executionARNPrefix(tt.in)
		if got != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("executionARNPrefix(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
}
