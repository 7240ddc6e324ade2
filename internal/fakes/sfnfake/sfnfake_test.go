package sfnfake_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"

	"github.com/cardflow/cardflow/internal/fakes/sfnfake"
	"github.com/cardflow/cardflow/internal/testenv"
)

const fnARN = "arn:aws:lambda:us-east-1:123456789012:function:f"

func start(t *testing.T, def string, fn sfnfake.Func) (*sfnfake.Server, *sfn.Client) {
	t.Helper()
	s, err := sfnfake.New(sfnfake.Config{
		Definition:    []byte(def),
		Substitutions: map[string]string{"Fn": fnARN},
		Functions:     map[string]sfnfake.Func{fnARN: fn},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := sfn.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")},
		func(o *sfn.Options) { o.BaseEndpoint = aws.String(s.URL) })
	return s, c
}

func code(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	if err != nil {
		return "not an API error: " + err.Error()
	}
	return ""
}

// await polls the execution's status until it is not RUNNING.
func await(t *testing.T, c *sfn.Client, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	var out *sfn.DescribeExecutionOutput
	testenv.WaitFor(t, "the execution to end", func() bool {
		var err error
		if out, err = c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)}); err != nil {
			t.Fatal(err)
		}
		return out.Status != "RUNNING"
	})
	return out
}

// The token task: the function hands the token out and the test ends it.
const tokenDef = `{"StartAt": "Ask", "States": {
  "Ask": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
    "Parameters": {"FunctionName": "${Fn}", "Payload": {"token.$": "$$.Task.Token", "in.$": "$.in"}},
    "TimeoutSecondsPath": "$.timeout", "ResultPath": "$.answer",
    "Catch": [{"ErrorEquals": ["States.Timeout"], "ResultPath": "$.error", "Next": "Late"}], "Next": "Done"},
  "Late": {"Type": "Fail", "Error": "Late", "Cause": "no answer"},
  "Done": {"Type": "Succeed"}}}`

func TestOperationsAndErrors(t *testing.T) {
	tokens := make(chan string, 10)
	s, c := start(t, tokenDef, func(_ context.Context, payload []byte) ([]byte, error) {
		var in struct{ Token string }
		json.Unmarshal(payload, &in)
		tokens <- in.Token
		return []byte("null"), nil
	})
	ctx := context.Background()
	startExec := func(name, input string) (*sfn.StartExecutionOutput, error) {
		return c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(s.StateMachineARN), Name: aws.String(name), Input: aws.String(input)})
	}
	first, err := startExec("e1", `{"in": 1, "timeout": 60}`)
	if err != nil {
		t.Fatal(err)
	}
	token := <-tokens

	again, err := startExec("e1", `{"in": 1, "timeout": 60}`)
	if err != nil || *again.ExecutionArn != *first.ExecutionArn {
		t.Errorf("same name and input again: got %v, %v, want the first execution", again, err)
	}
	_, err = startExec("e1", `{"in": 2, "timeout": 60}`)
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"same name, other input", err, "ExecutionAlreadyExists"},
		{"bad name", second(startExec("no spaces allowed", `{}`)), "InvalidName"},
		{"bad input", second(startExec("e2", `{`)), "InvalidExecutionInput"},
		{"unknown machine", second(c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(s.StateMachineARN + "x"), Name: aws.String("e3")})), "StateMachineDoesNotExist"},
		{"malformed token", second(c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String("nope"), Output: aws.String("{}")})), "InvalidToken"},
		{"unknown token", second(c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token[:len(token)-4] + "AAAA"), Output: aws.String("{}")})), "TaskDoesNotExist"},
		{"output not JSON", second(c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String("{")})), "InvalidOutput"},
		{"stop unknown", second(c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(*first.ExecutionArn + "x")})), "ExecutionDoesNotExist"},
		{"success", second(c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{"ok": true}`)})), ""},
		{"success again", second(c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{}`)})), "TaskTimedOut"},
		{"failure after success", second(c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: aws.String(token), Error: aws.String("x")})), "TaskTimedOut"},
	} {
		if got := code(tt.err); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	out := await(t, c, *first.ExecutionArn)
	if got, want := string(out.Status)+" "+aws.ToString(out.Output), `SUCCEEDED {"answer":{"ok":true},"in":1,"timeout":60}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := second(startExec("e1", `{"in": 1, "timeout": 60}`)), "ExecutionAlreadyExists"; code(got) != want {
		t.Errorf("same name and input after the end: got %v, want %s", got, want)
	}
	counts, _ := s.Counts("e1")
	if got, want := counts.Transitions, 2; got != want {
		t.Errorf("got %d transitions, want %d", got, want)
	}
}

func second[T any](_ T, err error) error { return err }

func TestTimeoutCaughtAndStop(t *testing.T) {
	tokens := make(chan string, 10)
	s, c := start(t, tokenDef, func(_ context.Context, payload []byte) ([]byte, error) {
		var in struct{ Token string }
		json.Unmarshal(payload, &in)
		tokens <- in.Token
		return nil, nil
	})
	ctx := context.Background()
	late, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(s.StateMachineARN), Name: aws.String("late"), Input: aws.String(`{"in": 0, "timeout": 1}`)})
	if err != nil {
		t.Fatal(err)
	}
	token := <-tokens
	out := await(t, c, *late.ExecutionArn)
	if got, want := string(out.Status)+" "+aws.ToString(out.Error), "FAILED Late"; got != want {
		t.Errorf("timed out task: got %s, want %s", got, want)
	}
	if got, want := code(second(c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String("{}")}))), "TaskTimedOut"; got != want {
		t.Errorf("success after the timeout: got %q, want %q", got, want)
	}

	stopped, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(s.StateMachineARN), Name: aws.String("stopped"), Input: aws.String(`{"in": 0, "timeout": 60}`)})
	if err != nil {
		t.Fatal(err)
	}
	<-tokens
	if _, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: stopped.ExecutionArn, Error: aws.String("Cancelled")}); err != nil {
		t.Fatal(err)
	}
	if got := await(t, c, *stopped.ExecutionArn); got.Status != "ABORTED" || aws.ToString(got.Error) != "Cancelled" {
		t.Errorf("stopped: got %s %s, want ABORTED Cancelled", got.Status, aws.ToString(got.Error))
	}
}

// flaky is an error a function returns; its type names the error.
type flaky struct{ msg string }

func (e *flaky) Error() string { return e.msg }

func TestRetryCatchChoiceWait(t *testing.T) {
	const def = `{"StartAt": "Call", "States": {
	  "Call": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
	    "Parameters": {"FunctionName": "${Fn}", "Payload": {"n.$": "$.n"}},
	    "ResultSelector": {"kind.$": "$.Payload.kind"}, "ResultPath": "$.result",
	    "Retry": [{"ErrorEquals": ["Fatal"], "MaxAttempts": 0},
	              {"ErrorEquals": ["States.TaskFailed"], "IntervalSeconds": 1, "MaxAttempts": 1, "BackoffRate": 1}],
	    "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Caught"}],
	    "Next": "Route"},
	  "Route": {"Type": "Choice", "Choices": [{"Variable": "$.result.kind", "StringEquals": "nap", "Next": "Nap"}], "Default": "Done"},
	  "Nap": {"Type": "Wait", "TimestampPath": "$.until", "Next": "Done"},
	  "Caught": {"Type": "Pass"},
	  "Done": {"Type": "Succeed"}}}`
	if _, err := sfnfake.New(sfnfake.Config{Definition: []byte(def), Substitutions: map[string]string{"Fn": fnARN}}); err == nil || !strings.Contains(err.Error(), "Pass") {
		t.Errorf("a Pass state: got %v, want it refused", err)
	}
	supported := strings.Replace(def, `"Caught": {"Type": "Pass"}`, `"Caught": {"Type": "Succeed"}`, 1)
	var calls atomic.Int32
	s, c := start(t, supported, func(_ context.Context, payload []byte) ([]byte, error) {
		var in struct{ N int }
		json.Unmarshal(payload, &in)
		switch k := calls.Add(1); {
		case in.N == 1 && k == 1:
			return nil, &flaky{"once"}
		case in.N == 2:
			return nil, &flaky{"always"}
		}
		return []byte(`{"kind": "nap"}`), nil
	})
	ctx := context.Background()
	until := time.Now().Add(1500 * time.Millisecond).UTC().Truncate(time.Second).Add(time.Second)
	for _, tt := range []struct {
		name, input string
		want        string
		transitions int
		invocations int
		notBefore   time.Time
	}{
		// Call fails once, is retried, then Route, Nap and Done.
		{"retried", `{"n": 1, "until": "` + until.Format(time.RFC3339) + `"}`, "SUCCEEDED", 5, 2, until},
		// Call fails, is retried once, fails again and is caught.
		{"caught", `{"n": 2}`, "SUCCEEDED", 3, 2, time.Time{}},
	} {
		calls.Store(0)
		out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(s.StateMachineARN), Name: aws.String(tt.name), Input: aws.String(tt.input)})
		if err != nil {
			t.Fatal(err)
		}
		got := await(t, c, *out.ExecutionArn)
		if string(got.Status) != tt.want {
			t.Errorf("%s: got %s (%s), want %s", tt.name, got.Status, aws.ToString(got.Cause), tt.want)
		}
		if time.Now().Before(tt.notBefore) {
			t.Errorf("%s: ended before the Wait's timestamp", tt.name)
		}
		counts, _ := s.Counts(tt.name)
		if counts.Transitions != tt.transitions || counts.Invocations[fnARN] != tt.invocations {
			t.Errorf("%s: got %d transitions and %d invocations, want %d and %d", tt.name, counts.Transitions, counts.Invocations[fnARN], tt.transitions, tt.invocations)
		}
	}
}

func TestRefusesWhatItDoesNotRun(t *testing.T) {
	for _, tt := range []struct{ name, def string }{
		{"InputPath", `{"StartAt": "A", "States": {"A": {"Type": "Succeed", "InputPath": "$.x"}}}`},
		{"other resource", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage", "End": true}}}`},
		{"missing next", `{"StartAt": "A", "States": {"A": {"Type": "Wait", "Seconds": 1, "Next": "B"}}}`},
		{"no start", `{"StartAt": "B", "States": {"A": {"Type": "Succeed"}}}`},
		{"unsubstituted", `{"StartAt": "A", "States": {"A": {"Type": "Fail", "Error": "${Missing}"}}}`},
	} {
		if _, err := sfnfake.New(sfnfake.Config{Definition: []byte(tt.def)}); err == nil {
			t.Errorf("%s: got no error", tt.name)
		}
	}
}
