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
//
// The table below is the one place an endpoint's routes are written:
// local mode, the Lambda functions (pkg/lambdamode), template.yaml's
// checks and the sample events read them from here. CONTRIBUTING.md lists
// the other files a new endpoint touches.
type Endpoint struct {
	// Name is the operationId in openapi.yaml, the function's directory
	// under functions/ and its sample event's name under events/.
	Name   string
	Routes []string
	// scope is checked before the request is read, so a caller without it
	// gets 403 whatever it sent; the use case checks it again. Endpoints
	// without a scope authenticate requests themselves.
	scope  string
	handle func(*Server, http.ResponseWriter, *http.Request) error
}

// The endpoints of the API. Those Endpoints lists need an API key; the
// Teams endpoints and local mode's are added by options.
var (
	GetWorkflowExecutionById    = Endpoint{"getWorkflowExecutionById", []string{"GET /v1/workflows/getWorkflowExecutionById"}, cardflow.ScopeRead, (*Server).getExecution}
	WaitForExecution            = Endpoint{"waitForExecution", []string{"GET /v1/workflows/waitForExecution"}, cardflow.ScopeRead, (*Server).waitForExecution}
	GetWorkflowExecutionHistory = Endpoint{"getWorkflowExecutionHistory", []string{"GET /v1/workflows/getWorkflowExecutionHistory"}, cardflow.ScopeRead, (*Server).getExecutionHistory}
	GetOrganizationExecutions   = Endpoint{"getOrganizationExecutions", []string{"GET /v1/workflows/getOrganizationExecutions"}, cardflow.ScopeRead, (*Server).getOrganizationExecutions}
	SearchExecutions            = Endpoint{"searchExecutions", []string{"GET /v1/workflows/searchExecutions"}, cardflow.ScopeRead, (*Server).searchExecutions}
	StartBulkOperation          = Endpoint{"startBulkOperation", []string{"POST /v1/workflows/startBulkOperation"}, cardflow.ScopeExecute, (*Server).startBulkOperation}
	GetBulkOperation            = Endpoint{"getBulkOperation", []string{"GET /v1/workflows/getBulkOperation"}, cardflow.ScopeRead, (*Server).getBulkOperation}
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
	// PreviewCard expands a card version with sample data, as a card step
	// would; the console's card preview uses it.
	PreviewCard = Endpoint{"previewCard", []string{"POST /v1/adaptive-cards/previewCard"}, cardflow.ScopeRead, (*Server).previewCard}
	// TriggerWorkflow has an optional version segment: two routes.
	TriggerWorkflow = Endpoint{"triggerWorkflow", []string{
		"POST /v1/workflows/triggerworkflow/{workflow_id}",
		"POST /v1/workflows/triggerworkflow/{workflow_id}/{workflow_version}",
	}, cardflow.ScopeExecute, (*Server).trigger}
	ToggleScheduledWorkflow = Endpoint{"toggleScheduledWorkflow", []string{"POST /v1/workflows/toggleScheduledWorkflow"}, cardflow.ScopeExecute, (*Server).toggle}
	GetWorkflowSchedule     = Endpoint{"getWorkflowSchedule", []string{"GET /v1/workflows/getWorkflowSchedule"}, cardflow.ScopeRead, (*Server).getWorkflowSchedule}
	CancelExecution         = Endpoint{"cancelExecution", []string{"POST /v1/workflows/cancelExecution"}, cardflow.ScopeExecute, (*Server).cancel}
	RedriveExecution        = Endpoint{"redriveExecution", []string{"POST /v1/workflows/redriveExecution"}, cardflow.ScopeExecute, (*Server).redrive}
	GetPendingApprovals     = Endpoint{"getPendingApprovals", []string{"GET /v1/approvals/getPendingApprovals"}, cardflow.ScopeRead, (*Server).getPendingApprovals}
	GetApprovalById         = Endpoint{"getApprovalById", []string{"GET /v1/approvals/getApprovalById"}, cardflow.ScopeRead, (*Server).getApproval}
	AnswerApproval          = Endpoint{"answerApproval", []string{"POST /v1/approvals/answerApproval"}, cardflow.ScopeExecute, (*Server).answerApproval}
	ReassignApproval        = Endpoint{"reassignApproval", []string{"POST /v1/approvals/reassignApproval"}, cardflow.ScopeExecute, (*Server).reassignApproval}
	OverrideApproval        = Endpoint{"overrideApproval", []string{"POST /v1/approvals/overrideApproval"}, cardflow.ScopeAdmin, (*Server).overrideApproval}
	GetApprovalStats        = Endpoint{"getApprovalStats", []string{"GET /v1/approvals/getApprovalStats"}, cardflow.ScopeRead, (*Server).getApprovalStats}
	SetDelegation           = Endpoint{"setDelegation", []string{"POST /v1/approvals/setDelegation"}, cardflow.ScopeExecute, (*Server).setDelegation}
	GetDelegations          = Endpoint{"getDelegations", []string{"GET /v1/approvals/getDelegations"}, cardflow.ScopeRead, (*Server).getDelegations}
	RemoveDelegation        = Endpoint{"removeDelegation", []string{"POST /v1/approvals/removeDelegation"}, cardflow.ScopeExecute, (*Server).removeDelegation}
	RegisterConversation    = Endpoint{"registerConversation", []string{"POST /v1/teams/registerConversation"}, cardflow.ScopeAdmin, (*Server).registerConversation}
	ListConversations       = Endpoint{"listConversations", []string{"GET /v1/teams/listConversations"}, cardflow.ScopeAdmin, (*Server).listConversations}
	RemoveConversation      = Endpoint{"removeConversation", []string{"POST /v1/teams/removeConversation"}, cardflow.ScopeAdmin, (*Server).removeConversation}
	ResumeWorkflow          = Endpoint{"resumeWorkflow", []string{"POST /v1/workflows/{action}/{process_id}"}, cardflow.ScopeExecute, (*Server).resume}

	// The endpoints Microsoft Teams answers cards through (WithTeams,
	// WithResponseLinks): they check a Bot Framework JWT or a link's
	// signature themselves, so they have no scope.
	TeamsMessages = Endpoint{"teamsMessages", []string{"POST /v1/teams/messages"}, "", (*Server).teamsMessage}
	TeamsRespond  = Endpoint{"teamsRespond", []string{"GET /v1/teams/respond", "HEAD /v1/teams/respond", "POST /v1/teams/respond"}, "", (*Server).teamsRespond}

	// Local mode's endpoints (WithOutbox, WithApprovalLinks), which no
	// Lambda function serves.
	GetOutbox          = Endpoint{"getOutbox", []string{"GET /v1/adaptive-cards/outbox"}, cardflow.ScopeRead, (*Server).getOutbox}
	IssueApprovalLinks = Endpoint{"issueApprovalLinks", []string{"POST /v1/approvals/issueApprovalLinks"}, cardflow.ScopeAdmin, (*Server).issueApprovalLinks}
)

// Endpoints lists every endpoint that takes an API key, in matching order:
// resumeWorkflow last, as its {action} segment would match every other
// name. Each has a Lambda function of its name.
func Endpoints() []Endpoint {
	return []Endpoint{
		GetWorkflowExecutionById, WaitForExecution, GetWorkflowExecutionHistory, GetOrganizationExecutions,
		GetWorkflowById, GetOrganizationWorkflows, GetWorkflowSchemaById, SaveWorkflow, PublishWorkflow,
		GetCardById, GetLatestActiveCard, GetOrganizationCards, SaveCard, PublishCard,
		PreviewCard,
		TriggerWorkflow, ToggleScheduledWorkflow, CancelExecution, RedriveExecution,
		GetWorkflowSchedule,
		GetPendingApprovals, GetApprovalById, AnswerApproval, ReassignApproval, OverrideApproval, GetApprovalStats,
		SetDelegation, GetDelegations, RemoveDelegation,
		SearchExecutions, StartBulkOperation, GetBulkOperation,
		RegisterConversation, ListConversations, RemoveConversation,
		ResumeWorkflow,
	}
}

// TeamsEndpoints lists the endpoints Teams answers cards through; each has
// a Lambda function of its name, created when the deployment configures it.
func TeamsEndpoints() []Endpoint { return []Endpoint{TeamsMessages, TeamsRespond} }

// Scope is the scope a caller's key needs; empty for an endpoint that
// authenticates its requests itself.
func (e Endpoint) Scope() string { return e.scope }

// routes returns the routing table entries of e, bound to s.
func (e Endpoint) routes(s *Server) []route {
	out := make([]route, 0, len(e.Routes))
	for _, r := range e.Routes {
		method, path, _ := strings.Cut(r, " ")
		out = append(out, route{method, path, e.scope, func(w http.ResponseWriter, r *http.Request) error { return e.handle(s, w, r) }})
	}
	return out
}
