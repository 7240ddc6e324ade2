package httpapi

import (
	"net/http"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Endpoint is one operation of the API: its name, the routes that reach it
// ("METHOD /path"), the scope it needs and its handler. A server built with
// NewEndpoints serves only the endpoints named, and a program that names
// only some links only their handlers and use cases: a Lambda function of
// one endpoint stays small.
type Endpoint struct {
	Name   string
	Routes []string
	// scope is checked before the request is read, so a caller without it
	// gets 403 whatever it sent; the use case checks it again.
	scope  string
	handle func(*Server, http.ResponseWriter, *http.Request) error
}

// The endpoints of the API, but local mode's outbox.
var (
	GetWorkflowExecutionById    = Endpoint{"getWorkflowExecutionById", []string{"GET /v1/workflows/getWorkflowExecutionById"}, cardflow.ScopeRead, (*Server).getExecution}
	WaitForExecution            = Endpoint{"waitForExecution", []string{"GET /v1/workflows/waitForExecution"}, cardflow.ScopeRead, (*Server).waitForExecution}
	GetWorkflowExecutionHistory = Endpoint{"getWorkflowExecutionHistory", []string{"GET /v1/workflows/getWorkflowExecutionHistory"}, cardflow.ScopeRead, (*Server).getExecutionHistory}
	GetOrganizationExecutions   = Endpoint{"getOrganizationExecutions", []string{"GET /v1/workflows/getOrganizationExecutions"}, cardflow.ScopeRead, (*Server).getOrganizationExecutions}
	GetWorkflowById             = Endpoint{"getWorkflowById", []string{"GET /v1/workflows/getWorkflowById"}, cardflow.ScopeRead, (*Server).getWorkflow}
	GetOrganizationWorkflows    = Endpoint{"getOrganizationWorkflows", []string{"GET /v1/workflows/getOrganizationWorkflows"}, cardflow.ScopeRead, (*Server).getOrganizationWorkflows}
	GetWorkflowSchemaById       = Endpoint{"getWorkflowSchemaById", []string{"GET /v1/workflows/getWorkflowSchemaById"}, cardflow.ScopeRead, (*Server).getSchema}
	SaveWorkflow                = Endpoint{"saveWorkflow", []string{"POST /v1/workflows/saveWorkflow"}, cardflow.ScopeAdmin, (*Server).saveWorkflow}
	PublishWorkflow             = Endpoint{"publishWorkflow", []string{"POST /v1/workflows/publishWorkflow"}, cardflow.ScopeAdmin, (*Server).publishWorkflow}
	GetCardById                 = Endpoint{"getCardById", []string{"GET /v1/adaptive-cards/getCardById"}, cardflow.ScopeRead, (*Server).getCard}
	GetLatestActiveCard         = Endpoint{"getLatestActiveCard", []string{"GET /v1/adaptive-cards/getLatestActiveCard"}, cardflow.ScopeRead, (*Server).getLatestActiveCard}
	GetOrganizationCards        = Endpoint{"getOrganizationCards", []string{"GET /v1/adaptive-cards/getOrganizationCards"}, cardflow.ScopeRead, (*Server).getOrganizationCards}
	SaveCard                    = Endpoint{"saveCard", []string{"POST /v1/adaptive-cards/saveCard"}, cardflow.ScopeAdmin, (*Server).saveCard}
	PublishCard                 = Endpoint{"publishCard", []string{"POST /v1/adaptive-cards/publishCard"}, cardflow.ScopeAdmin, (*Server).publishCard}
	TriggerWorkflow             = Endpoint{"triggerWorkflow", []string{
		"POST /v1/workflows/triggerworkflow/{workflow_id}",
		"POST /v1/workflows/triggerworkflow/{workflow_id}/{workflow_version}",
	}, cardflow.ScopeExecute, (*Server).trigger}
	ToggleScheduledWorkflow = Endpoint{"toggleScheduledWorkflow", []string{"POST /v1/workflows/toggleScheduledWorkflow"}, cardflow.ScopeExecute, (*Server).toggle}
	CancelExecution         = Endpoint{"cancelExecution", []string{"POST /v1/workflows/cancelExecution"}, cardflow.ScopeExecute, (*Server).cancel}
	RedriveExecution        = Endpoint{"redriveExecution", []string{"POST /v1/workflows/redriveExecution"}, cardflow.ScopeExecute, (*Server).redrive}
	ResumeWorkflow          = Endpoint{"resumeWorkflow", []string{"POST /v1/workflows/{action}/{process_id}"}, cardflow.ScopeExecute, (*Server).resume}
)

// Endpoints lists every endpoint in matching order: resumeWorkflow last,
// as its {action} segment would match every other name.
func Endpoints() []Endpoint {
	return []Endpoint{
		GetWorkflowExecutionById, WaitForExecution, GetWorkflowExecutionHistory, GetOrganizationExecutions,
		GetWorkflowById, GetOrganizationWorkflows, GetWorkflowSchemaById, SaveWorkflow, PublishWorkflow,
		GetCardById, GetLatestActiveCard, GetOrganizationCards, SaveCard, PublishCard,
		PreviewCard,
		TriggerWorkflow, ToggleScheduledWorkflow, CancelExecution, RedriveExecution,
		GetWorkflowSchedule,
		GetPendingApprovals, GetApprovalById, AnswerApproval, ReassignApproval, OverrideApproval,
		SearchExecutions, StartBulkOperation, GetBulkOperation,
		RegisterConversation, ListConversations, RemoveConversation,
		ResumeWorkflow,
	}
}

// routes returns the routing table entries of e, bound to s.
func (e Endpoint) routes(s *Server) []route {
	out := make([]route, 0, len(e.Routes))
	for _, r := range e.Routes {
		method, path, _ := strings.Cut(r, " ")
		out = append(out, route{method, path, e.scope, func(w http.ResponseWriter, r *http.Request) error { return e.handle(s, w, r) }})
	}
	return out
}
