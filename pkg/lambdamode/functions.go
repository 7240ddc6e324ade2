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
// store (a runner, a scheduler, a checker). It runs once, as the function
// starts, so a miswired function fails there.
type Wiring func(Env, *slog.Logger) (app.Option, error)

// With is the wiring of an option that needs nothing from the environment.
func With(opt app.Option) Wiring {
	return func(Env, *slog.Logger) (app.Option, error) { return opt, nil }
}

// ServeEndpoint is the main of ep's function, functions/<ep.Name>: it
// builds the function with wirings and serves Lambda invocations.
func ServeEndpoint(ep httpapi.Endpoint, wirings ...Wiring) {
	Serve(ep.Name, func(env Env, log *slog.Logger) (*Endpoint, error) {
		opts := make([]app.Option, 0, len(wirings))
		for _, w := range wirings {
			opt, err := w(env, log)
			if err != nil {
				return nil, err
			}
			opts = append(opts, opt)
		}
		return env.NewEndpointFunction(log, ep, opts...)
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

// NewService opens the store and returns the use cases over it with opts
// (the runner, scheduler or checker a function needs).
func (e Env) NewService(log *slog.Logger, opts ...app.Option) (*app.Service, error) {
	store, err := e.OpenStore(log)
	if err != nil {
		return nil, err
	}
	// The organizations' rates are counted in the limits table, shared by
	// every instance of every function.
	limits := app.WithLimits(e.Limits, dynamostore.NewRateLimiter(store, nil))
	return app.New(store, append([]app.Option{app.WithLogger(log), limits, app.WithObserver(e.Observer()), app.WithTeamsTenants(e.TeamsTenants)}, opts...)...)
}

// NewEndpointFunction builds the handler of ep's function, which serves
// ep's routes as pkg/httpapi's table gives them; ep must be one of the
// table's endpoints.
func (e Env) NewEndpointFunction(log *slog.Logger, ep httpapi.Endpoint, opts ...app.Option) (*Endpoint, error) {
	svc, err := e.NewService(log, opts...)
	if err != nil {
		return nil, err
	}
	return NewEndpoint(svc, log, ep)
}

// NewAuthorizerFunction builds the handler of the authorizer function.
func (e Env) NewAuthorizerFunction(log *slog.Logger) (*Authorizer, error) {
	svc, err := e.NewService(log)
	if err != nil {
		return nil, err
	}
	return NewAuthorizer(svc, log)
}
