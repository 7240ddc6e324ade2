// Package lambdamode wires the service for AWS Lambda, the counterpart of
// pkg/localmode: it reads a function's settings from its environment and
// builds the DynamoDB store, the use cases and the handlers of API Gateway
// events once, at init, without touching the network.
//
// Read endpoints link only this package, the store and the HTTP API; what
// runs executions (engine, CEL, Step Functions, EventBridge Scheduler) lives
// in packages of its own, so that their binaries stay small and start fast.
package lambdamode

import (
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/teams"
)

// Environment variables a function reads.
const (
	// EnvTablePrefix starts every table name (template: cardflow-<stage>-).
	EnvTablePrefix = "CARDFLOW_TABLE_PREFIX"
	// EnvDynamoDBEndpoint points the store at DynamoDB Local, for sam local.
	EnvDynamoDBEndpoint = "DYNAMODB_ENDPOINT"
	// EnvLogLevel is DEBUG, INFO, WARN or ERROR (default INFO).
	EnvLogLevel = "LOG_LEVEL"
	// EnvRegion is set by Lambda itself.
	EnvRegion = "AWS_REGION"

	// What EventBridge Scheduler schedules point at (pkg/ebscheduler's
	// Config), for the functions that publish and toggle schedules.
	EnvScheduleGroup          = "CARDFLOW_SCHEDULE_GROUP"
	EnvScheduleTargetARN      = "CARDFLOW_SCHEDULE_TARGET_ARN"
	EnvSchedulerRoleARN       = "CARDFLOW_SCHEDULER_ROLE_ARN"
	EnvSchedulerDeadLetterARN = "CARDFLOW_SCHEDULER_DEAD_LETTER_ARN"

	// EnvStateMachineARN names the runner's state machine, for the
	// functions that start, wake and stop executions.
	EnvStateMachineARN = "CARDFLOW_STATE_MACHINE_ARN"

	// Endpoints of Step Functions and EventBridge Scheduler other than
	// AWS's, for local runs against emulators. The names are the AWS SDKs'
	// service-specific endpoint variables, which the SDK reads only through
	// the config loader the functions do without (see Credentials).
	EnvStepFunctionsEndpoint = "AWS_ENDPOINT_URL_SFN"
	EnvSchedulerEndpoint     = "AWS_ENDPOINT_URL_SCHEDULER"

	// EnvEventBus names the EventBridge bus events go to (default
	// "default"); EnvEventsEndpoint replaces AWS's EventBridge endpoint.
	EnvEventBus       = "CARDFLOW_EVENT_BUS"
	EnvEventsEndpoint = "AWS_ENDPOINT_URL_EVENTS"
)

// Env is the configuration of one function, read from its environment.
type Env struct {
	TablePrefix      string
	DynamoDBEndpoint string
	Region           string
	LogLevel         slog.Level
	// Credentials of the function's role, which Lambda puts in the
	// environment. They are never logged.
	AccessKeyID, SecretAccessKey, SessionToken string

	ScheduleGroup, ScheduleTargetARN, SchedulerRoleARN, SchedulerDeadLetterARN string
	StateMachineARN                                                            string

	// StepFunctionsEndpoint and SchedulerEndpoint, when set, replace AWS's
	// endpoints of those services (emulators in local runs).
	StepFunctionsEndpoint, SchedulerEndpoint string
	// EventBus and EventsEndpoint: where the publisher puts events.
	EventBus, EventsEndpoint string

	// Teams is the Microsoft Teams setup (CARDFLOW_TEAMS_*, CARDFLOW_PUBLIC_URL)
	// of the functions that deliver cards or receive answers.
	Teams teams.Config
	// TeamsTenants maps Entra tenants to the organization whose Teams
	// conversations they hold (CARDFLOW_TEAMS_TENANTS).
	TeamsTenants map[string]string
	// TeamsOptions adjust the Teams integration (tests give a client that
	// trusts their stand-in for Microsoft).
	TeamsOptions []teams.Option

	// Limits are the organizations' default limits (CARDFLOW_ORG_RATE,
	// CARDFLOW_ORG_BURST, CARDFLOW_ORG_MAX_OPEN); zero fields set none.
	Limits cardflow.Limits
}

// LoadEnv reads the configuration through getenv (os.Getenv in main).
func LoadEnv(getenv func(string) string) (Env, error) {
	e := Env{
		TablePrefix:      getenv(EnvTablePrefix),
		DynamoDBEndpoint: getenv(EnvDynamoDBEndpoint),
		Region:           getenv(EnvRegion),
		AccessKeyID:      getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey:  getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:     getenv("AWS_SESSION_TOKEN"),

		ScheduleGroup:          getenv(EnvScheduleGroup),
		ScheduleTargetARN:      getenv(EnvScheduleTargetARN),
		SchedulerRoleARN:       getenv(EnvSchedulerRoleARN),
		SchedulerDeadLetterARN: getenv(EnvSchedulerDeadLetterARN),
		StateMachineARN:        getenv(EnvStateMachineARN),
		StepFunctionsEndpoint:  getenv(EnvStepFunctionsEndpoint),
		SchedulerEndpoint:      getenv(EnvSchedulerEndpoint),
		EventBus:               getenv(EnvEventBus),
		EventsEndpoint:         getenv(EnvEventsEndpoint),
	}
	var err error
	if e.Limits, err = cardflow.ParseLimits(getenv(cardflow.EnvOrgRate), getenv(cardflow.EnvOrgBurst), getenv(cardflow.EnvOrgMaxOpen)); err != nil {
		return Env{}, err
	}
	if e.Teams, err = loadTeams(getenv, e.DynamoDBEndpoint != ""); err != nil {
		return Env{}, err
	}
	if e.TeamsTenants, err = teams.ParseTenants(getenv(teams.EnvTenants)); err != nil {
		return Env{}, fmt.Errorf("%s: %w", teams.EnvTenants, err)
	}
	if e.TablePrefix == "" {
		e.TablePrefix = dynamostore.DefaultPrefix
	}
	if lvl := getenv(EnvLogLevel); lvl != "" {
		if err := e.LogLevel.UnmarshalText([]byte(strings.ToUpper(lvl))); err != nil {
			return Env{}, fmt.Errorf("%s=%q: want DEBUG, INFO, WARN or ERROR", EnvLogLevel, lvl)
		}
	}
	for _, ep := range []struct{ name, value string }{
		{EnvDynamoDBEndpoint, e.DynamoDBEndpoint},
		{EnvStepFunctionsEndpoint, e.StepFunctionsEndpoint},
		{EnvSchedulerEndpoint, e.SchedulerEndpoint},
		{EnvEventsEndpoint, e.EventsEndpoint},
	} {
		if ep.value == "" {
			continue
		}
		u, err := url.Parse(ep.value)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Env{}, fmt.Errorf("%s=%q: want a URL such as http://localhost:8000", ep.name, ep.value)
		}
	}
	if e.DynamoDBEndpoint != "" {
		if e.Region == "" {
			e.Region = "us-east-1"
		}
	}
	if e.Region == "" {
		return Env{}, fmt.Errorf("%s is not set: Lambda sets it; elsewhere set it or %s", EnvRegion, EnvDynamoDBEndpoint)
	}
	return e, nil
}

// Logger returns a JSON logger at the configured level, the format the
// functions' LoggingConfig tells CloudWatch to expect.
func (e Env) Logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: e.LogLevel}))
}
