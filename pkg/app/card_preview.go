package app

import (
	"context"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// CardExpander expands a card template with data as a card step does
// (pkg/cards does). Only CardPreviews takes one, like CardChecker, so
// that only what previews cards links the templating.
type CardExpander interface {
	ExpandCard(ctx context.Context, payload map[string]any, data any) (map[string]any, error)
}

// PreviewCardInput is the body of previewCard: a card version and the
// data to expand it with, as a card step's config.data would give it.
type PreviewCardInput struct {
	CardID      string `json:"card_id"`
	CardVersion int    `json:"card_version"`
	Data        any    `json:"data"`
}

// PreviewCard expands a card version with sample data through the same
// templating card steps use, so a person sees the card an approver would
// get. It stores and sends nothing.
func (s *CardPreviews) PreviewCard(ctx context.Context, in PreviewCardInput) (map[string]any, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	if in.CardID == "" || in.CardVersion < 1 {
		return nil, cardflow.Errorf(cardflow.EINVALID, "card_id (string) and card_version (positive number) are required")
	}
	c, err := s.store.GetCard(ctx, p.OrganizationID, in.CardID, in.CardVersion)
	if err != nil {
		return nil, err
	}
	data := in.Data
	if data == nil {
		data = map[string]any{}
	}
	return s.cardExpander.ExpandCard(ctx, c.CardPayload, data)
}
