package lambdamode

import (
	"log"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/httpapi"
)

// Wiring gives an endpoint function's service what it needs beyond the
// store (a runner, a scheduler, a checker) in deps. It runs once, as the
// function starts, so a miswired function fails there.
type Wiring func(env Env, log *slog.Logger, deps *app.Deps) error

// With is the wiring of dependencies that need nothing from the
// environment: set fills them in.
func With(set func(*app.Deps)) Wiring {
	return func(_ Env, _ *slog.Logger, deps *app.Deps) error {
		set(deps)
		return nil
	}
}

// ServeEndpoint is the main of ep's function, functions/<ep.Name>: it
// builds the function with wirings and serves Lambda invocations.
func ServeEndpoint(ep httpapi.Endpoint, wirings ...Wiring) {
	Serve(ep.Name, func(env Env, log *slog.Logger) (*Endpoint, error) {
		var deps app.Deps
		for _, w := range wirings {
			if err := w(env, log, &deps); err != nil {
				return nil, err
			}
		}
		return env.NewEndpointFunction(log, ep, deps)
	})
}

// Serve is the main of the endpoint function named: it reads the
// environment, builds the handler and serves Lambda invocations. It does
// not return; a function that cannot start exits.
func Serve(name string, build func(Env, *slog.Logger) (*Endpoint, error)) {
	env, err := LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	h, err := build(env, env.Logger(os.Stdout))
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	lambda.Start(h.Handle)
}

// NewService opens the store and returns the use cases over it, with the
// areas deps build (the runner, scheduler or checker a function needs).
func (e Env) NewService(log *slog.Logger, deps app.Deps) (*app.Service, error) {
	store, err := e.OpenStore(log)
	if err != nil {
		return nil, err
	}
	// The organizations' rates are counted in the limits table, shared by
	// every instance of every function.
	limits := app.WithLimits(e.Limits, dynamostore.NewRateLimiter(store, nil))
	return app.New(store, deps, app.WithLogger(log), limits, app.WithObserver(e.Observer()), app.WithTeamsTenants(e.TeamsTenants))
}

// NewEndpointFunction builds the handler of ep's function over the areas
// deps build, serving ep's routes as pkg/httpapi's table gives them; ep
// must be one of the table's endpoints. It fails when deps lack what ep
// needs.
func (e Env) NewEndpointFunction(log *slog.Logger, ep httpapi.Endpoint, deps app.Deps) (*Endpoint, error) {
	svc, err := e.NewService(log, deps)
	if err != nil {
		return nil, err
	}
	return NewEndpoint(svc, log, ep)
}

// NewAuthorizerFunction builds the handler of the authorizer function.
func (e Env) NewAuthorizerFunction(log *slog.Logger) (*Authorizer, error) {
	svc, err := e.NewService(log, app.Deps{})
	if err != nil {
		return nil, err
	}
	return NewAuthorizer(svc, log)
}
