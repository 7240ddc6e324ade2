package lambdamode

import (
	"context"
	"log/slog"

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

// NewEndpoint returns the function serving ep over svc. Naming the
// endpoint, rather than looking it up, keeps every other endpoint's
// handler out of the function's binary.
func NewEndpoint(svc *app.Service, log *slog.Logger, ep httpapi.Endpoint) (*Endpoint, error) {
	return newEndpoint(svc, log, []httpapi.Endpoint{ep})
}

// newEndpoint serves the endpoints given and the routes opts add.
func newEndpoint(svc *app.Service, log *slog.Logger, eps []httpapi.Endpoint, opts ...httpapi.Option) (*Endpoint, error) {
	srv, err := httpapi.NewEndpoints(svc, AuthorizerAuthenticator{}, eps, append([]httpapi.Option{httpapi.WithLogger(log)}, opts...)...)
	if err != nil {
		return nil, err
	}
	return &Endpoint{adapter: httpadapter.New(srv)}, nil
}

// Handle answers one API Gateway proxy event.
func (e *Endpoint) Handle(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	return e.adapter.ProxyWithContext(ctx, req)
}
