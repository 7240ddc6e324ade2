package lambdamode

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/httpapi"
)

// Function is an API endpoint's Lambda function: its directory under
// functions/ (also the name of its sample event under events/) and the
// routes it serves. Its logical id in template.yaml is Name with the first
// letter upper-cased and "Function" appended.
type Function struct {
	Name   string
	Routes []string
}

// Endpoints lists one function per endpoint of the API; together they
// serve every route of pkg/httpapi but local mode's outbox.
var Endpoints = []Function{
	{"getWorkflowExecutionById", []string{"GET /v1/workflows/getWorkflowExecutionById"}},
	{"waitForExecution", []string{"GET /v1/workflows/waitForExecution"}},
	{"getWorkflowExecutionHistory", []string{"GET /v1/workflows/getWorkflowExecutionHistory"}},
	{"getOrganizationExecutions", []string{"GET /v1/workflows/getOrganizationExecutions"}},
	{"searchExecutions", []string{"GET /v1/workflows/searchExecutions"}},
	{"startBulkOperation", []string{"POST /v1/workflows/startBulkOperation"}},
	{"getBulkOperation", []string{"GET /v1/workflows/getBulkOperation"}},
	{"getWorkflowById", []string{"GET /v1/workflows/getWorkflowById"}},
	{"getOrganizationWorkflows", []string{"GET /v1/workflows/getOrganizationWorkflows"}},
	{"getWorkflowSchemaById", []string{"GET /v1/workflows/getWorkflowSchemaById"}},
	{"saveWorkflow", []string{"POST /v1/workflows/saveWorkflow"}},
	{"publishWorkflow", []string{"POST /v1/workflows/publishWorkflow"}},
	{"getCardById", []string{"GET /v1/adaptive-cards/getCardById"}},
	{"getLatestActiveCard", []string{"GET /v1/adaptive-cards/getLatestActiveCard"}},
	{"getOrganizationCards", []string{"GET /v1/adaptive-cards/getOrganizationCards"}},
	{"saveCard", []string{"POST /v1/adaptive-cards/saveCard"}},
	{"publishCard", []string{"POST /v1/adaptive-cards/publishCard"}},
	{"previewCard", []string{"POST /v1/adaptive-cards/previewCard"}},
	// One endpoint with an optional version segment.
	{"triggerWorkflow", []string{
		"POST /v1/workflows/triggerworkflow/{workflow_id}",
		"POST /v1/workflows/triggerworkflow/{workflow_id}/{workflow_version}",
	}},
	{"toggleScheduledWorkflow", []string{"POST /v1/workflows/toggleScheduledWorkflow"}},
	{"getWorkflowSchedule", []string{"GET /v1/workflows/getWorkflowSchedule"}},
	{"cancelExecution", []string{"POST /v1/workflows/cancelExecution"}},
	{"redriveExecution", []string{"POST /v1/workflows/redriveExecution"}},
	{"getPendingApprovals", []string{"GET /v1/approvals/getPendingApprovals"}},
	{"getApprovalById", []string{"GET /v1/approvals/getApprovalById"}},
	{"answerApproval", []string{"POST /v1/approvals/answerApproval"}},
	{"reassignApproval", []string{"POST /v1/approvals/reassignApproval"}},
	{"overrideApproval", []string{"POST /v1/approvals/overrideApproval"}},
	{"registerConversation", []string{"POST /v1/teams/registerConversation"}},
	{"listConversations", []string{"GET /v1/teams/listConversations"}},
	{"removeConversation", []string{"POST /v1/teams/removeConversation"}},
	{"resumeWorkflow", []string{"POST /v1/workflows/{action}/{process_id}"}},
}

// EndpointFunction returns the endpoint function named.
func EndpointFunction(name string) (Function, error) {
	for _, f := range Endpoints {
		if f.Name == name {
			return f, nil
		}
	}
	return Function{}, fmt.Errorf("lambdamode: no endpoint function %q", name)
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

// NewEndpointFunction builds the handler of ep's function; ep must be
// the endpoint of one of Endpoints, with the same routes.
func (e Env) NewEndpointFunction(log *slog.Logger, ep httpapi.Endpoint, opts ...app.Option) (*Endpoint, error) {
	f, err := EndpointFunction(ep.Name)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(f.Routes, ep.Routes) {
		return nil, fmt.Errorf("lambdamode: function %s serves %v, the endpoint has %v", f.Name, f.Routes, ep.Routes)
	}
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
