package lambdamode

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Keys of the authorizer context, which API Gateway hands to every
// endpoint with the request. Values must be strings, numbers or booleans,
// so the scopes travel comma-separated.
const (
	ContextOrganization = "organization_id"
	ContextWorkspace    = "workspace_id"
	ContextScopes       = "scopes"
	ContextActor        = "actor"
	// ContextPerson is the person the key acts for, "" for none.
	ContextPerson = "person"
)

// APIKeyHeader carries the API key; it is the authorizer's identity source.
const APIKeyHeader = "x-api-key"

// errUnauthorized is the error API Gateway turns into 401 (and the
// template's UNAUTHORIZED gateway response into the service's error shape).
var errUnauthorized = errors.New("Unauthorized")

// Authorizer is the Lambda REQUEST authorizer: it checks the x-api-key
// header against the API keys table the way local mode does
// (app.Service.Authenticate) and passes the principal on as context.
type Authorizer struct {
	svc *app.Service
	log *slog.Logger
}

// NewAuthorizer returns the authorizer over svc.
func NewAuthorizer(svc *app.Service, log *slog.Logger) (*Authorizer, error) {
	if svc == nil || log == nil {
		return nil, errors.New("lambdamode: authorizer needs a service and a logger")
	}
	return &Authorizer{svc: svc, log: log}, nil
}

// Handle answers one authorization request. An unknown or revoked key is
// "Unauthorized" (401); a store failure is an error API Gateway answers
// with 500, which the template maps to 503.
func (a *Authorizer) Handle(ctx context.Context, req events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
	var key string
	for name, v := range req.Headers {
		if strings.EqualFold(name, APIKeyHeader) {
			key = v
			break
		}
	}
	p, err := a.svc.Authenticate(ctx, key)
	switch code := cardflow.ErrorCode(err); {
	case err == nil:
	case code == cardflow.EUNAUTHORIZED:
		return events.APIGatewayCustomAuthorizerResponse{}, errUnauthorized
	default:
		a.log.ErrorContext(ctx, "authorize", slog.String("code", code), slog.Any("error", err))
		return events.APIGatewayCustomAuthorizerResponse{}, errors.New("the API key store cannot be reached")
	}
	return events.APIGatewayCustomAuthorizerResponse{
		PrincipalID: p.Actor,
		PolicyDocument: events.APIGatewayCustomAuthorizerPolicy{
			Version: "2012-10-17",
			Statement: []events.IAMPolicyStatement{{
				Action: []string{"execute-api:Invoke"},
				Effect: "Allow",
				// The answer is cached per key for every route, so it
				// allows the whole API; the use cases check scopes.
				Resource: []string{apiWildcard(req.MethodArn)},
			}},
		},
		Context: map[string]any{
			ContextOrganization: p.OrganizationID,
			ContextWorkspace:    p.WorkspaceID,
			ContextScopes:       strings.Join(p.Scopes, ","),
			ContextActor:        p.Actor,
			ContextPerson:       p.Person,
		},
	}, nil
}

// apiWildcard turns the ARN of one method
// (arn:aws:execute-api:region:account:api/stage/GET/v1/...) into the ARN of
// every method of the same API and stage.
func apiWildcard(methodARN string) string {
	arn, path, ok := strings.Cut(methodARN, "/")
	if !ok {
		return methodARN
	}
	stage, _, _ := strings.Cut(path, "/")
	return arn + "/" + stage + "/*"
}

// AuthorizerAuthenticator is the httpapi.Authenticator of the endpoints on
// AWS: the authorizer has checked the key, so it reads the principal from
// the authorizer context of the proxied request.
type AuthorizerAuthenticator struct{}

// Authenticate implements httpapi.Authenticator.
func (AuthorizerAuthenticator) Authenticate(r *http.Request) (*cardflow.Principal, error) {
	gw, ok := core.GetAPIGatewayContextFromContext(r.Context())
	if !ok {
		return nil, cardflow.Errorf(cardflow.EUNAUTHORIZED, "an API key is required in the x-api-key header")
	}
	get := func(k string) string { s, _ := gw.Authorizer[k].(string); return s }
	p := &cardflow.Principal{OrganizationID: get(ContextOrganization), WorkspaceID: get(ContextWorkspace), Actor: get(ContextActor), Person: get(ContextPerson)}
	if p.OrganizationID == "" || p.WorkspaceID == "" {
		return nil, cardflow.Errorf(cardflow.EUNAUTHORIZED, "an API key is required in the x-api-key header")
	}
	if s := get(ContextScopes); s != "" {
		p.Scopes = strings.Split(s, ",")
	}
	return p, nil
}
