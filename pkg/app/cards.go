package app

import (
	"context"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// SaveCardInput is the body of saveCard.
type SaveCardInput struct {
	CardID          string         `json:"card_id"`
	CardName        string         `json:"card_name"`
	CardPayload     map[string]any `json:"card_payload"`
	WorkflowID      string         `json:"workflow_id"`
	WorkflowVersion int            `json:"workflow_version"`
	// DryRun checks the card as a save would and stores nothing.
	DryRun bool `json:"dry_run,omitempty"`
}

// SaveCard validates an adaptive card and stores it as a new DRAFT version,
// of a new card when CardID is empty.
func (s *CardEditor) SaveCard(ctx context.Context, in SaveCardInput) (*cardflow.Card, error) {
	p, err := principal(ctx, cardflow.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	name := cardflow.TrimSpecSpace(in.CardName)
	switch {
	case name == "":
		return nil, cardflow.Errorf(cardflow.EINVALID, "card_name is required")
	case len(name) > cardflow.MaxNameLength:
		return nil, cardflow.Errorf(cardflow.EINVALID, "card_name is longer than %d characters", cardflow.MaxNameLength)
	case in.CardPayload == nil:
		return nil, cardflow.Errorf(cardflow.EINVALID, "card_payload is required: an Adaptive Card JSON object")
	}
	// An unchecked card would fail only when a card step first sends it.
	if err := s.cardChecker.CheckCard(in.CardPayload); err != nil {
		return nil, err
	}
	if in.WorkflowID != "" || in.WorkflowVersion != 0 {
		if in.WorkflowID == "" || in.WorkflowVersion < 1 {
			return nil, cardflow.Errorf(cardflow.EINVALID, "workflow_id and workflow_version go together: give both (version 1 or more) or neither")
		}
		if _, err := s.store.GetWorkflow(ctx, p.OrganizationID, in.WorkflowID, in.WorkflowVersion); err != nil {
			if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
				return nil, cardflow.Errorf(cardflow.ENOTFOUND, "workflow_id %q version %d names no workflow of this organization", in.WorkflowID, in.WorkflowVersion)
			}
			return nil, err
		}
	}
	now := s.millis()
	c := &cardflow.Card{
		CardID:          strings.TrimSpace(in.CardID),
		CardName:        name,
		CardPayload:     in.CardPayload,
		WorkflowID:      in.WorkflowID,
		WorkflowVersion: in.WorkflowVersion,
		OrganizationID:  p.OrganizationID,
		WorkspaceID:     p.WorkspaceID,
		CreatedBy:       p.Actor,
		ModifiedBy:      p.Actor,
		CreatedOn:       now,
		ModifiedOn:      now,
	}
	if in.DryRun {
		if c.CardID != "" {
			if _, err := s.store.GetCard(ctx, p.OrganizationID, c.CardID, 1); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	if err := s.store.SaveCardVersion(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// PublishCard makes a card version ACTIVE and latest.
func (s *Cards) PublishCard(ctx context.Context, cardID string, version int) (*cardflow.Card, error) {
	p, err := principal(ctx, cardflow.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	return s.store.PublishCard(ctx, p.OrganizationID, cardID, version, p.Actor, s.millis())
}

// GetCard returns one version of a card.
func (s *Cards) GetCard(ctx context.Context, cardID string, version int) (*cardflow.Card, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	return s.store.GetCard(ctx, p.OrganizationID, cardID, version)
}

// GetLatestActiveCard returns the latest version of a card, the one
// published last, when there is one.
func (s *Cards) GetLatestActiveCard(ctx context.Context, cardID string) (*cardflow.Card, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	return s.store.GetLatestActiveCard(ctx, p.OrganizationID, cardID)
}

// ListCards lists the organization's card versions, newest first.
func (s *Cards) ListCards(ctx context.Context, opt cardflow.ListOptions[cardflow.CardKey]) (cardflow.Page[*cardflow.Card, cardflow.CardKey], error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return cardflow.Page[*cardflow.Card, cardflow.CardKey]{}, err
	}
	if opt.After != nil && opt.After.OrganizationID != p.OrganizationID {
		return cardflow.Page[*cardflow.Card, cardflow.CardKey]{}, errForeignPageKey
	}
	opt.Limit = cardflow.PageSize(opt.Limit)
	return s.store.ListCards(ctx, p.OrganizationID, opt)
}
