// Package advance wires the engine into the Advance function the runner's
// state machine invokes. Only it links the engine's step kinds and
// outbound calls; Park is built without the engine (runner.NewParkFunction).
package advance

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/runner"
	"github.com/cardflow/cardflow/pkg/outbound"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/sfnrunner"
)

// Budget is how long one Advance runs steps before it hands the execution
// back to the state machine, which calls it again. The function's timeout
// in template.yaml (300 s) leaves room for a step that starts at its end.
const Budget = 2 * time.Minute

// NewHandlers builds the Advance function's handlers: the engine over the
// store, with outbound calls and secrets as the environment configures
// them (CARDFLOW_OUTBOUND_ALLOW, CARDFLOW_SECRETS), and the Step Functions
// client that ends Park tasks. optFns adjust that client.
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
	src, err := secrets.FromEnv(context.Background(), SecretsManagerClient(env))
	if err != nil {
		return nil, err
	}
	eng, err := engine.New(store, LogDeliverer{Log: log}, exprs,
		engine.WithLogger(log), engine.WithHTTPClient(client), engine.WithSecrets(src), engine.WithBudget(Budget))
	if err != nil {
		return nil, err
	}
	return sfnrunner.NewHandlers(eng, store, runner.StepFunctionsClient(env, optFns...), sfnrunner.WithHandlerLogger(log))
}

// SecretsManagerClient returns the secrets.ClientFunc of the Advance
// function: a Secrets Manager client with the function's region and role,
// from the environment Lambda provides, as the other SDK clients are.
func SecretsManagerClient(env lambdamode.Env) secrets.ClientFunc {
	return func(_ context.Context, optFns ...func(*secretsmanager.Options)) (*secretsmanager.Client, error) {
		return secretsmanager.New(secretsmanager.Options{Region: env.Region, Credentials: env.Credentials()}, optFns...), nil
	}
}

// LogDeliverer delivers the cards of card steps to the function's log, one
// JSON record each ("card delivered", with the delivery), where a
// CloudWatch Logs subscription can pick them up. It is the deliverer until
// a Teams integration is configured.
type LogDeliverer struct{ Log *slog.Logger }

// Deliver implements cardflow.Deliverer.
func (d LogDeliverer) Deliver(ctx context.Context, dl *cardflow.Delivery) error {
	d.Log.InfoContext(ctx, "card delivered", slog.Any("delivery", dl))
	return nil
}
