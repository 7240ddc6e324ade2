package lambdamode

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/httpapi"
)

// Endpoint is the function of one API endpoint: API Gateway REST proxy
// events through the same net/http handlers local mode serves.
type Endpoint struct {
	adapter *httpadapter.HandlerAdapter
}

// NewEndpoint returns the endpoint serving routes ("GET /v1/...") over svc.
// Every route named must exist.
func NewEndpoint(svc *app.Service, log *slog.Logger, routes ...string) (*Endpoint, error) {
	return newEndpoint(svc, log, nil, routes)
}

// newEndpoint is NewEndpoint with more options of the HTTP API.
func newEndpoint(svc *app.Service, log *slog.Logger, opts []httpapi.Option, routes []string) (*Endpoint, error) {
	if len(routes) == 0 {
		return nil, fmt.Errorf("lambdamode: an endpoint needs at least one route")
	}
	opts = append([]httpapi.Option{httpapi.WithLogger(log), httpapi.WithRoutes(routes...)}, opts...)
	srv, err := httpapi.New(svc, AuthorizerAuthenticator{}, opts...)
	if err != nil {
		return nil, err
	}
	have := srv.Routes()
	for _, r := range routes {
		if !slices.Contains(have, r) {
			return nil, fmt.Errorf("lambdamode: the API has no route %q", r)
		}
	}
	return &Endpoint{adapter: httpadapter.New(srv)}, nil
}

// Handle answers one API Gateway proxy event.
func (e *Endpoint) Handle(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	return e.adapter.ProxyWithContext(ctx, req)
}
