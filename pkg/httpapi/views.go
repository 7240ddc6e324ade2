package httpapi

import "github.com/cardflow/cardflow/pkg/cardflow"

// workflowListItem is an item of getOrganizationWorkflows.
type workflowListItem struct {
	WorkflowID            string        `json:"workflow_id"`
	ModifiedOn            int64         `json:"modified_on"`
	OrganizationID        string        `json:"organization_id"`
	WorkflowStatus        string        `json:"workflow_status"`
	Latest                cardflow.Flag `json:"latest"`
	WorkflowName          string        `json:"workflow_name"`
	CreatedBy             string        `json:"created_by"`
	WorkflowStatusVersion string        `json:"workflow_status_version"`
	ModifiedBy            *string       `json:"modified_by"`
	WorkspaceID           string        `json:"workspace_id"`
	CreatedOn             int64         `json:"created_on"`
}

// cardListItem is an item of getOrganizationCards.
type cardListItem struct {
	CardName       string        `json:"card_name"`
	StatusVersion  string        `json:"status_version"`
	OrganizationID string        `json:"organization_id"`
	Latest         cardflow.Flag `json:"latest"`
	CreatedBy      string        `json:"created_by"`
	Status         string        `json:"status"`
	CardVersion    int           `json:"card_version"`
	CardID         string        `json:"card_id"`
	WorkspaceID    string        `json:"workspace_id"`
	CreatedOn      int64         `json:"created_on"`
}

// executionSummary is an item of the execution lists.
type executionSummary struct {
	WorkflowID           string            `json:"workflow_id"`
	WorkflowCurrentState string            `json:"workflow_current_state"`
	ModifiedOn           int64             `json:"modified_on"`
	OrganizationID       string            `json:"organization_id"`
	WorkflowExecutionID  string            `json:"workflow_execution_id"`
	ModifiedBy           *string           `json:"modified_by"`
	WorkflowVersion      int               `json:"workflow_version"`
	WorkflowEventLog     cardflow.EventLog `json:"workflow_event_log"`
	WorkflowTriggerType  string            `json:"workflow_trigger_type"`
	TriggeredBy          string            `json:"triggered_by"`
	WorkspaceID          string            `json:"workspace_id"`
	CreatedOn            int64             `json:"created_on"`
	WorkflowDetails      summaryDetails    `json:"workflow_details"`
	Status               string            `json:"status"`
}

type summaryDetails struct {
	WorkflowName string `json:"workflow_name"`
}

// historyEvents is how many events the per-workflow list keeps of each log;
// the organization list carries full logs.
const historyEvents = 5

// summarize projects executions to list items, keeping the last keepEvents
// events of each log, or all when keepEvents is 0.
func summarize(execs []*cardflow.Execution, keepEvents int) []executionSummary {
	out := make([]executionSummary, len(execs))
	for i, e := range execs {
		log := e.WorkflowEventLog
		if keepEvents > 0 {
			log = log.Trimmed(keepEvents)
		}
		if log.Events == nil {
			log.Events = []cardflow.Event{}
		}
		out[i] = executionSummary{
			WorkflowID: e.WorkflowID, WorkflowCurrentState: e.WorkflowCurrentState, ModifiedOn: e.ModifiedOn,
			OrganizationID: e.OrganizationID, WorkflowExecutionID: e.WorkflowExecutionID, ModifiedBy: e.ModifiedBy,
			WorkflowVersion: e.WorkflowVersion, WorkflowEventLog: log, WorkflowTriggerType: e.WorkflowTriggerType,
			TriggeredBy: e.TriggeredBy, WorkspaceID: e.WorkspaceID, CreatedOn: e.CreatedOn,
			WorkflowDetails: summaryDetails{WorkflowName: e.WorkflowDetails.WorkflowName}, Status: e.Status,
		}
	}
	return out
}
