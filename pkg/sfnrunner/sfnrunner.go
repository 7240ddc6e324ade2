// Package sfnrunner runs executions on AWS Step Functions: one Standard
// state machine, statemachine/runner.asl.json, drives every execution, and
// two Lambda handlers do the work.
//
// The machine loops Advance -> Route. Advance runs every synchronous step
// of the execution in one invocation (the engine's time budget keeps it
// inside the Lambda timeout), so the number of state transitions does not
// grow with the number of synchronous steps. Route goes on by the status
// Advance answers: RUNNING back to Advance, SLEEPING to a Wait state until
// wake_at, WAITING to Park, and a final status to Succeed (SUCCEEDED,
// CANCELLED) or Fail (FAILED, TIMED_OUT).
//
// When Advance fails for good (its retries used up), GiveUp invokes it
// again with the error ("give_up"): it records the execution FAILED with
// the reason, in the step it was in, so that the record never says
// RUNNING once the machine has ended, and a redrive continues it.
//
// Park is a lambda:invoke.waitForTaskToken task: it stores the task token
// on the process record's open wait, and the resume use case calls Wake,
// which sends the token back with SendTaskSuccess. The task times out a
// second after the wait's deadline (timeout_seconds, at most
// MaxWaitSeconds), so no task waits unbounded: a timed-out Park goes back
// to Advance, which sees the deadline passed and takes the step's timeout
// exit, or parks again when the wait has no deadline or a later one.
//
// The JSON shapes, as the definition passes them:
//
//	execution input  {"execution": {"organization_id": "...", "workflow_id": "...", "workflow_execution_id": "..."}}
//	Advance input    AdvanceInput:  {"execution": {...}}
//	Advance output   AdvanceOutput: {"status": "RUNNING|WAITING|SLEEPING|SUCCEEDED|FAILED|TIMED_OUT|CANCELLED",
//	                                 "wake_at": "2026-11-21T10:00:00Z" (SLEEPING, else ""),
//	                                 "timeout_seconds": 3600 (WAITING, else 0),
//	                                 "wait": 1 (WAITING, else 0), "process_id": "PO-4711" (WAITING, else "")}
//	Park input       ParkInput:     {"execution": {...}, "wait": 1, "process_id": "PO-4711",
//	                                 "timeout_seconds": 3600, "task_token": "<$$.Task.Token>"}
//	Park output      none: the task ends by SendTaskSuccess or SendTaskFailure
//	task success     {"claimed": true}
//	task failure     error "cardflow.WaitEnded" (a wait ended other than by a resume)
//
// Advance's latest answer is kept at $.Payload of the state data, so the
// one path $.Payload.timeout_seconds names the timeout both in Park's state
// input and in its Lambda request.
package sfnrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// API is the part of *sfn.Client the runner and the handlers use.
type API interface {
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, opts ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
	SendTaskSuccess(ctx context.Context, in *sfn.SendTaskSuccessInput, opts ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error)
	SendTaskFailure(ctx context.Context, in *sfn.SendTaskFailureInput, opts ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error)
	StopExecution(ctx context.Context, in *sfn.StopExecutionInput, opts ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error)
}

// Names the definition and the handlers share.
const (
	// WaitEnded is the error of a Park task whose wait ended other than by
	// a resume; the definition catches it and goes back to Advance.
	WaitEnded = "cardflow.WaitEnded"
	// claimedOutput is the output of a Park task whose wait was claimed.
	claimedOutput = `{"claimed":true}`
)

// ExecutionInput is the input of a state machine execution.
type ExecutionInput struct {
	Execution cardflow.ExecutionRef `json:"execution"`
}

// Runner is the cardflow.Runner of AWS: it starts, wakes and stops state
// machine executions.
type Runner struct {
	api          API
	stateMachine string
	log          *slog.Logger
}

var _ cardflow.Runner = (*Runner)(nil)

// Option configures a Runner.
type Option func(*Runner)

// WithLogger sets the logger of failed Step Functions requests.
func WithLogger(l *slog.Logger) Option { return func(r *Runner) { r.log = l } }

// New returns a runner that starts executions of the state machine
// stateMachineARN.
func New(api API, stateMachineARN string, opts ...Option) (*Runner, error) {
	if api == nil {
		return nil, errors.New("sfnrunner: the Step Functions client is nil")
	}
	if _, err := executionARNPrefix(stateMachineARN); err != nil {
		return nil, err
	}
	r := &Runner{api: api, stateMachine: stateMachineARN, log: slog.Default()}
	for _, o := range opts {
		o(r)
	}
	return r, nil
}

// executionARNPrefix turns arn:aws:states:REGION:ACCOUNT:stateMachine:NAME
// into the prefix of its executions' ARNs,
// arn:aws:states:REGION:ACCOUNT:execution:NAME:.
func executionARNPrefix(stateMachineARN string) (string, error) {
	parts := strings.Split(stateMachineARN, ":")
	if len(parts) != 7 || parts[0] != "arn" || parts[2] != "states" || parts[5] != "stateMachine" || parts[6] == "" {
		return "", fmt.Errorf("sfnrunner: %q is not a state machine ARN (arn:aws:states:REGION:ACCOUNT:stateMachine:NAME)", stateMachineARN)
	}
	parts[5] = "execution"
	return strings.Join(parts, ":") + ":", nil
}

// Start implements cardflow.Runner. The execution id names the state
// machine execution (with the run's number after a redrive, see runName),
// so a repeated start starts nothing twice: Step Functions answers a
// repeated name and input with the first execution, and
// ExecutionAlreadyExists once that execution has ended.
func (r *Runner) Start(ctx context.Context, ref cardflow.ExecutionRef) error {
	input, err := json.Marshal(ExecutionInput{Execution: ref})
	if err != nil {
		return err
	}
	_, err = r.api.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(r.stateMachine),
		Name:            aws.String(runName(ref)),
		Input:           aws.String(string(input)),
	})
	if apiErrorCode(err) == "ExecutionAlreadyExists" {
		return nil
	}
	return r.translate("StartExecution", err)
}

// Wake implements cardflow.Runner: it ends the Park task of the wait w,
// with success for a resume and with WaitEnded for a timeout. An unclaimed
// wait is woken with success too (a reassignment brought in an approver):
// Advance then runs the step's timers, which send the card, and parks
// again. A wait without a token has no Park task that stored it yet; that
// Park finds a claimed wait and ends its task itself, and an unclaimed
// one is ticked by the Advance before it.
//
// A task that has ended already (TaskTimedOut, TaskDoesNotExist) is not an
// error here: the claim is stored, and every end of a Park task leads to
// Advance, or to a new Park, which see it. Refusing the resume then would
// say it failed when it took effect; a resume that comes too late is
// refused before it is stored, from the wait's deadline on.
func (r *Runner) Wake(ctx context.Context, _ cardflow.ExecutionRef, w *cardflow.Wait) error {
	if w == nil || w.Token == "" {
		return nil
	}
	var err error
	op := "SendTaskSuccess"
	switch {
	case w.Resume != nil, !w.Claimed():
		_, err = r.api.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(w.Token), Output: aws.String(claimedOutput)})
	case w.TimedOut:
		op = "SendTaskFailure"
		_, err = r.api.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{
			TaskToken: aws.String(w.Token), Error: aws.String(WaitEnded),
			Cause: aws.String(fmt.Sprintf("the wait of step %s timed out", w.StepID)),
		})
	}
	if code := apiErrorCode(err); code == "TaskTimedOut" || code == "TaskDoesNotExist" {
		r.log.Info("the park task had ended; the claim is left to the next Advance", slog.String("step", w.StepID), slog.String("code", code))
		return nil
	}
	return r.translate(op, err)
}

// Stop implements cardflow.Runner: it stops the state machine execution of
// a cancelled execution. One that has already ended is left as it is.
func (r *Runner) Stop(ctx context.Context, ref cardflow.ExecutionRef) error {
	prefix, _ := executionARNPrefix(r.stateMachine)
	_, err := r.api.StopExecution(ctx, &sfn.StopExecutionInput{
		ExecutionArn: aws.String(prefix + runName(ref)),
		Error:        aws.String("cardflow.Cancelled"),
		Cause:        aws.String("the execution was cancelled"),
	})
	if apiErrorCode(err) == "ExecutionDoesNotExist" {
		return nil
	}
	return r.translate("StopExecution", err)
}

func (r *Runner) translate(op string, err error) error {
	if err == nil {
		return nil
	}
	tr := translate(err)
	if code := cardflow.ErrorCode(tr); code == cardflow.EINTERNAL || code == cardflow.EUNAVAILABLE {
		r.log.Error("step functions request failed", slog.String("op", op), slog.String("code", code), slog.Any("error", err))
	}
	return tr
}

// runName names the state machine execution of a run: the execution id
// for the first, "<id>-r<n>" for the one after the nth redrive. A redrive
// starts a new state machine execution rather than redriving the old one
// (docs/DECISIONS.md): Step Functions' RedriveExecution restarts only
// executions that failed within 14 days, and ours end in a Fail state
// after Advance has recorded the failure.
func runName(ref cardflow.ExecutionRef) string {
	if ref.Run == 0 {
		return ref.ExecutionID
	}
	return fmt.Sprintf("%s-r%d", ref.ExecutionID, ref.Run)
}
