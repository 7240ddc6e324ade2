package app

import (
	"context"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// SaveWorkflowInput is the body of saveWorkflow.
type SaveWorkflowInput struct {
	WorkflowID           string                `json:"workflow_id"`
	WorkflowName         string                `json:"workflow_name"`
	WorkflowIntegrations map[string]any        `json:"workflow_integrations"`
	WorkflowSteps        []cardflow.Step       `json:"workflow_steps"`
	WorkflowConnections  []cardflow.Connection `json:"workflow_connections"`
	WorkflowSchema       map[string]any        `json:"workflow_schema"`
}

// SaveWorkflow validates a definition and stores it as a new DRAFT version,
// of a new workflow when WorkflowID is empty.
func (s *Service) SaveWorkflow(ctx context.Context, in SaveWorkflowInput) (*cardflow.Workflow, error) {
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
	if s.checker == nil {
		return nil, cardflow.Errorf(cardflow.EINTERNAL, "saving workflows is not available here: the service has no workflow checker")
	}
	if err := s.checker.Check(w); err != nil {
		return nil, err
	}
	if err := s.checkCardReferences(ctx, p.OrganizationID, w); err != nil {
		return nil, err
	}
	if err := s.checkConversations(ctx, p.OrganizationID, w); err != nil {
		return nil, err
	}
	if err := s.store.SaveWorkflowVersion(ctx, w); err != nil {
		return nil, err
	}
	return w, nil
}

// checkCardReferences makes sure every card and approval step names a card (and version)
// the organization has, so a typo fails at save time, not days later. A card
// that is not there is not found (404), as the card itself would be.
func (s *Service) checkCardReferences(ctx context.Context, org string, w *cardflow.Workflow) error {
	for i, st := range w.WorkflowSteps {
		if st.Type != cardflow.StepCard && st.Type != cardflow.StepApproval {
			continue
		}
		id, _ := st.Config["card_id"].(string)
		version := 1
		if v, ok := st.Config["card_version"].(float64); ok {
			version = int(v)
		}
		if _, err := s.store.GetCard(ctx, org, id, version); err != nil {
			if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
				return cardflow.Errorf(cardflow.ENOTFOUND, "workflow_steps[%d] (id %q): config.card_id %q (version %d) names no card of this organization", i, st.ID, id, version)
			}
			return err
		}
	}
	return nil
}

// PublishWorkflow makes a version ACTIVE and latest.
func (s *Service) PublishWorkflow(ctx context.Context, workflowID string, version int) (*cardflow.Workflow, error) {
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
func (s *Service) GetWorkflow(ctx context.Context, workflowID string, version int) (*cardflow.Workflow, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	return s.store.GetWorkflow(ctx, p.OrganizationID, workflowID, version)
}

// ListWorkflows lists the organization's workflow versions, newest first.
func (s *Service) ListWorkflows(ctx context.Context, opt cardflow.ListOptions[cardflow.WorkflowKey]) (cardflow.Page[*cardflow.Workflow, cardflow.WorkflowKey], error) {
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
func (s *Service) GetSchema(ctx context.Context, workflowID string, version int) (*cardflow.Schema, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	return s.store.GetSchema(ctx, p.OrganizationID, workflowID, version)
}

// errForeignPageKey answers a page key of another organization as the API
// answers any record of another organization: not found.
var errForeignPageKey = cardflow.Errorf(cardflow.ENOTFOUND, "the page key's organization_id is not your organization: no such page; send back the lastKey of your previous page")

// checkConversations makes sure every conversation the workflow's bot
// deliveries name is registered for the organization: the bot posts
// nowhere else (docs/DECISIONS.md).
func (s *Service) checkConversations(ctx context.Context, org string, w *cardflow.Workflow) error {
	for _, c := range w.BotConversations() {
		_, err := s.store.GetConversation(ctx, org, c.ConversationID)
		if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
			return cardflow.Errorf(cardflow.EINVALID, "%s: conversation %q is not registered for this organization; the bot posts only into the organization's conversations (install the bot there, or register it with POST /v1/teams/registerConversation)", c.Where, c.ConversationID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
