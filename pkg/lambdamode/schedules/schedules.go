// Package schedules wires EventBridge Scheduler into the Lambda functions
// that need it: those that publish and toggle scheduled workflows, and the
// schedule target. It is a package of its own so that no other function
// links the Scheduler client.
package schedules

import (
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/ebscheduler"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
)

// NewScheduler returns the EventBridge Scheduler adapter the environment
// configures. optFns adjust the SDK client (tests point it at a stand-in).
func NewScheduler(env lambdamode.Env, log *slog.Logger, optFns ...func(*scheduler.Options)) (*ebscheduler.Scheduler, error) {
	o := scheduler.Options{Region: env.Region, Credentials: env.Credentials()}
	if env.SchedulerEndpoint != "" {
		o.BaseEndpoint = aws.String(env.SchedulerEndpoint)
	}
	client := scheduler.New(o, optFns...)
	return ebscheduler.New(client, ebscheduler.Config{
		GroupName:     env.ScheduleGroup,
		TargetARN:     env.ScheduleTargetARN,
		RoleARN:       env.SchedulerRoleARN,
		DeadLetterARN: env.SchedulerDeadLetterARN,
	}, ebscheduler.WithLogger(log))
}

// Wire is the wiring of the endpoint functions that manage schedules, for
// lambdamode.ServeEndpoint: it gives their service the scheduler.
func Wire(env lambdamode.Env, log *slog.Logger, deps *app.Deps) error {
	sched, err := NewScheduler(env, log)
	if err != nil {
		return err
	}
	deps.Scheduler = sched
	return nil
}

// NewEndpointFunction builds an endpoint function that manages schedules
// (publishWorkflow, toggleScheduledWorkflow).
func NewEndpointFunction(env lambdamode.Env, log *slog.Logger, ep httpapi.Endpoint, optFns ...func(*scheduler.Options)) (*lambdamode.Endpoint, error) {
	sched, err := NewScheduler(env, log, optFns...)
	if err != nil {
		return nil, err
	}
	return env.NewEndpointFunction(log, ep, app.Deps{Scheduler: sched})
}

// NewTargetFunction builds the function that schedules invoke, which
// starts the scheduled runs on runner.
func NewTargetFunction(env lambdamode.Env, log *slog.Logger, runner cardflow.Runner) (*Target, error) {
	svc, err := env.NewService(log, app.Deps{Runner: runner})
	if err != nil {
		return nil, err
	}
	return NewTarget(svc.Runs, log)
}
