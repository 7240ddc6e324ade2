package app

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/jsonschema"
)

// SaveWorkflowInput is the body of saveWorkflow.
type SaveWorkflowInput struct {
	WorkflowID           string                `json:"workflow_id"`
	WorkflowName         string                `json:"workflow_name"`
	WorkflowIntegrations map[string]any        `json:"workflow_integrations"`
	WorkflowSteps        []cardflow.Step       `json:"workflow_steps"`
	WorkflowConnections  []cardflow.Connection `json:"workflow_connections"`
	WorkflowSchema       map[string]any        `json:"workflow_schema"`
	// DryRun checks the version as a save would and stores nothing.
	DryRun bool `json:"dry_run,omitempty"`
}

// SaveWorkflow validates a definition and stores it as a new DRAFT version,
// of a new workflow when WorkflowID is empty.
func (s *WorkflowEditor) SaveWorkflow(ctx context.Context, in SaveWorkflowInput) (*cardflow.Workflow, error) {
	p, err := principal(ctx, cardflow.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	now := s.millis()
	w := &cardflow.Workflow{
		OrganizationID:       p.OrganizationID,
		WorkspaceID:          p.WorkspaceID,
		WorkflowID:           strings.TrimSpace(in.WorkflowID),
		WorkflowName:         strings.TrimSpace(in.WorkflowName),
		WorkflowIntegrations: in.WorkflowIntegrations,
		WorkflowSteps:        in.WorkflowSteps,
		WorkflowConnections:  in.WorkflowConnections,
		WorkflowSchema:       in.WorkflowSchema,
		CreatedBy:            p.Actor,
		CreatedOn:            now,
		ModifiedOn:           now,
	}
	if w.WorkflowIntegrations == nil {
		w.WorkflowIntegrations = map[string]any{}
	}
	if w.WorkflowSchema == nil {
		w.WorkflowSchema = map[string]any{}
	}
	if w.WorkflowConnections == nil {
		w.WorkflowConnections = []cardflow.Connection{}
	}
	for i := range w.WorkflowSteps {
		if w.WorkflowSteps[i].Config == nil {
			w.WorkflowSteps[i].Config = map[string]any{}
		}
	}
	// The step kinds, and so the definition rules, come with the checker.
	if err := s.checker.Validate(ctx, w, s.store); err != nil {
		return nil, err
	}
	if err := checkSchema(w, s.now()); err != nil {
		return nil, err
	}
	if in.DryRun {
		if w.WorkflowID != "" {
			if _, err := s.store.GetWorkflow(ctx, p.OrganizationID, w.WorkflowID, 1); err != nil {
				return nil, err
			}
		}
		return w, nil
	}
	if err := s.store.SaveWorkflowVersion(ctx, w); err != nil {
		return nil, err
	}
	return w, nil
}

// PublishWorkflow makes a version ACTIVE and latest.
func (s *Workflows) PublishWorkflow(ctx context.Context, workflowID string, version int) (*cardflow.Workflow, error) {
	p, err := principal(ctx, cardflow.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	w, err := s.store.PublishWorkflow(ctx, p.OrganizationID, workflowID, version, p.Actor, s.millis())
	if err != nil {
		return nil, err
	}
	if err := s.schedule(ctx, w); err != nil {
		return nil, err
	}
	return w, nil
}

// GetWorkflow returns one version of a workflow.
func (s *Workflows) GetWorkflow(ctx context.Context, workflowID string, version int) (*cardflow.Workflow, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	return s.store.GetWorkflow(ctx, p.OrganizationID, workflowID, version)
}

// ListWorkflows lists the organization's workflow versions, newest first.
func (s *Workflows) ListWorkflows(ctx context.Context, opt cardflow.ListOptions[cardflow.WorkflowKey]) (cardflow.Page[*cardflow.Workflow, cardflow.WorkflowKey], error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return cardflow.Page[*cardflow.Workflow, cardflow.WorkflowKey]{}, err
	}
	if opt.After != nil && opt.After.OrganizationID != p.OrganizationID {
		return cardflow.Page[*cardflow.Workflow, cardflow.WorkflowKey]{}, errForeignPageKey
	}
	opt.Limit = cardflow.PageSize(opt.Limit)
	return s.store.ListWorkflows(ctx, p.OrganizationID, opt)
}

// GetSchema returns the data schema record of a workflow version.
func (s *Workflows) GetSchema(ctx context.Context, workflowID string, version int) (*cardflow.Schema, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	return s.store.GetSchema(ctx, p.OrganizationID, workflowID, version)
}

// errForeignPageKey answers a page key of another organization as the API
// answers any record of another organization: not found.
var errForeignPageKey = cardflow.Errorf(cardflow.ENOTFOUND, "the page key's organization_id is not your organization: no such page; send back the lastKey of your previous page")

// checkInput holds an execution's input to its workflow version's
// workflow_schema, when the version has one: the schema is the workflow's
// input contract, whatever starts it.
func checkInput(w *cardflow.Workflow, input map[string]any) error {
	if len(w.WorkflowSchema) == 0 {
		return nil
	}
	schema, err := jsonschema.Compile(w.WorkflowSchema)
	if err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "workflow_schema of version %d is not a valid JSON Schema: %v", w.WorkflowVersion, err)
	}
	var m *jsonschema.Mismatch
	if err := jsonschema.Check(schema, input); errors.As(err, &m) {
		return cardflow.Errorf(cardflow.EINVALID, "the input does not match the workflow's workflow_schema: %v", m)
	} else if err != nil {
		return err
	}
	return nil
}

// checkSchema refuses a workflow_schema that is not a JSON Schema, and one
// that a scheduled version's own input breaks: every run of the schedule
// would fail, so the version is refused when it is saved.
func checkSchema(w *cardflow.Workflow, now time.Time) error {
	if len(w.WorkflowSchema) == 0 {
		return nil
	}
	if _, err := jsonschema.Compile(w.WorkflowSchema); err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "workflow_schema is not a valid JSON Schema: %v", err)
	}
	sc, err := scheduleOf(w)
	if sc == nil || err != nil {
		return err
	}
	if err := checkInput(w, scheduledInput(sc, now)); err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "the schedule's input (scheduled_time, expression, timezone) does not match workflow_schema, so no scheduled run could start: %s", cardflow.ErrorMessage(err))
	}
	return nil
}
