// Package runner wires the Step Functions runner into the Lambda functions
// that start, wake or stop executions: triggerWorkflow, resumeWorkflow,
// cancelExecution, redriveExecution, the schedule target, housekeeping and
// Park. It links the Step Functions client but not the engine.
package runner

import (
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/sfnrunner"
)

// StepFunctionsClient returns a Step Functions client; it connects on first
// use. optFns adjust it (tests point it at a stand-in).
func StepFunctionsClient(env lambdamode.Env, optFns ...func(*sfn.Options)) *sfn.Client {
	o := sfn.Options{Region: env.Region, Credentials: env.Credentials()}
	if env.StepFunctionsEndpoint != "" {
		o.BaseEndpoint = aws.String(env.StepFunctionsEndpoint)
	}
	return sfn.New(o, optFns...)
}

// New returns the runner on the configured state machine.
func New(env lambdamode.Env, log *slog.Logger, optFns ...func(*sfn.Options)) (*sfnrunner.Runner, error) {
	return sfnrunner.New(StepFunctionsClient(env, optFns...), env.StateMachineARN, sfnrunner.WithLogger(log))
}

// Wire is the wiring of the endpoint functions that run executions, for
// lambdamode.ServeEndpoint: it gives their service the runner.
func Wire(env lambdamode.Env, log *slog.Logger, deps *app.Deps) error {
	r, err := New(env, log)
	if err != nil {
		return err
	}
	deps.Runner = r
	return nil
}

// NewEndpointFunction builds an endpoint function that runs executions
// (triggerWorkflow, resumeWorkflow, cancelExecution, redriveExecution).
func NewEndpointFunction(env lambdamode.Env, log *slog.Logger, ep httpapi.Endpoint, optFns ...func(*sfn.Options)) (*lambdamode.Endpoint, error) {
	r, err := New(env, log, optFns...)
	if err != nil {
		return nil, err
	}
	return env.NewEndpointFunction(log, ep, app.Deps{Runner: r})
}

// NewParkFunction builds the Park function's handler: it stores task
// tokens on process records and ends Park tasks, and runs no steps.
func NewParkFunction(env lambdamode.Env, log *slog.Logger, optFns ...func(*sfn.Options)) (*sfnrunner.Parker, error) {
	store, err := env.OpenStore(log)
	if err != nil {
		return nil, err
	}
	return sfnrunner.NewParker(store, StepFunctionsClient(env, optFns...), sfnrunner.WithHandlerLogger(log))
}
