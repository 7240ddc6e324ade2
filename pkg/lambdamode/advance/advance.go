// Package advance wires the engine into the Advance function the runner's
// state machine invokes. Only it links the engine with the step kinds and
// outbound calls to run them; Park is built without the engine
// (runner.NewParkFunction).
package advance

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/runner"
	"github.com/cardflow/cardflow/pkg/lambdamode/secretsclient"
	"github.com/cardflow/cardflow/pkg/outbound"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/sfnrunner"
	"github.com/cardflow/cardflow/pkg/teams"
)

// Budget is how long one Advance runs steps before it hands the execution
// back to the state machine, which calls it again. The function's timeout
// in template.yaml (300 s) leaves room for a step that starts at its end:
// an http or erp call waits at most steps.MaxCallTimeout.
const Budget = 2 * time.Minute

// NewHandlers builds the Advance and Park handlers: the engine over the
// store, with outbound calls, secrets and Teams delivery as the environment
// configures them (CARDFLOW_OUTBOUND_ALLOW, CARDFLOW_SECRETS, CARDFLOW_TEAMS_*),
// and the Step Functions client that ends Park tasks. optFns adjust that client.
func NewHandlers(env lambdamode.Env, log *slog.Logger, optFns ...func(*sfn.Options)) (*sfnrunner.Handlers, error) {
	store, err := env.OpenStore(log)
	if err != nil {
		return nil, err
	}
	exprs, err := expr.NewEnv()
	if err != nil {
		return nil, err
	}
	client, err := outbound.FromEnv()
	if err != nil {
		return nil, err
	}
	sec, err := secrets.FromEnv(context.Background(), secretsclient.New(env))
	if err != nil {
		return nil, err
	}
	tm, err := env.NewTeams(log, secrets.ForDeployment(sec), func(org string) teams.Secrets { return secrets.ForOrganization(sec, org) }, client)
	if err != nil {
		return nil, err
	}
	eng, err := engine.New(store, tm, exprs,
		engine.WithLogger(log), engine.WithHTTPClient(client), engine.WithSecrets(sec), engine.WithBudget(Budget), engine.WithObserver(env.Observer()))
	if err != nil {
		return nil, err
	}
	return sfnrunner.NewHandlers(eng, store, runner.StepFunctionsClient(env, optFns...), sfnrunner.WithHandlerLogger(log))
}
