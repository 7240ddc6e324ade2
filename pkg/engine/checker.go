package engine

import (
	"context"
	"errors"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/steps"
)

// Checker checks workflow versions without running them: what a process
// that saves workflows but runs no executions needs (app.Deps.Checker).
type Checker struct{ env *expr.Env }

// NewChecker returns a Checker over env.
func NewChecker(env *expr.Env) (*Checker, error) {
	if env == nil {
		return nil, errors.New("engine: expression environment is required")
	}
	return &Checker{env: env}, nil
}

// Check is Engine.Check.
func (c *Checker) Check(w *cardflow.Workflow) error { return check(c.env, w) }

// Validate is Engine.Validate.
func (c *Checker) Validate(ctx context.Context, w *cardflow.Workflow, refs cardflow.References) error {
	return validate(ctx, c.env, w, refs)
}

// validate is the one validation pipeline of a workflow version, run
// before saveWorkflow stores it: what check does, then the records the
// version names in its organization, looked up in refs.
func validate(ctx context.Context, env *expr.Env, w *cardflow.Workflow, refs cardflow.References) error {
	if err := check(env, w); err != nil {
		return err
	}
	if err := checkCards(ctx, w, refs); err != nil {
		return err
	}
	return checkConversations(ctx, w, refs)
}

// check validates a workflow version with the registered step kinds: its
// graph, each step's config (no unknown keys) and its Teams profiles
// (cardflow.ValidateDefinition), then its expressions and templates, then
// its SAP profile. It needs no store.
func check(env *expr.Env, w *cardflow.Workflow) error {
	if err := w.ValidateDefinition(steps.Kinds); err != nil {
		return err
	}
	if _, err := compile(env, w.WorkflowSteps, w.WorkflowConnections); err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "%v", err)
	}
	if err := checkIntegrations(w); err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "%v", err)
	}
	return nil
}

// checkCards makes sure every step that sends a card names a card (and
// version; version 1 when it sends the latest ACTIVE one) the organization
// has, so a typo fails at save time, not days later. A card that is not
// there is not found (404), as the card itself would be.
func checkCards(ctx context.Context, w *cardflow.Workflow, refs cardflow.References) error {
	for i, st := range w.WorkflowSteps {
		ref, err := card(st)
		if err != nil {
			return cardflow.Errorf(cardflow.EINVALID, "workflow_steps[%d] (id %q): %v", i, st.ID, err)
		}
		if ref == nil {
			continue
		}
		version := max(ref.Version, 1)
		if _, err := refs.GetCard(ctx, w.OrganizationID, ref.CardID, version); err != nil {
			if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
				return cardflow.Errorf(cardflow.ENOTFOUND, "workflow_steps[%d] (id %q): config.card_id %q (version %d) names no card of this organization", i, st.ID, ref.CardID, version)
			}
			return err
		}
	}
	return nil
}

// checkConversations makes sure every conversation the workflow's bot
// deliveries name is registered for the organization: the bot posts
// nowhere else (docs/DECISIONS.md).
func checkConversations(ctx context.Context, w *cardflow.Workflow, refs cardflow.References) error {
	for _, c := range w.BotConversations() {
		_, err := refs.GetConversation(ctx, w.OrganizationID, c.ConversationID)
		if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
			return cardflow.Errorf(cardflow.EINVALID, "%s: conversation %q is not registered for this organization; the bot posts only into the organization's conversations (install the bot there, or register it with POST /v1/teams/registerConversation)", c.Where, c.ConversationID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// card returns the card a step sends, nil for none; a step of an unknown
// kind sends none.
func card(st cardflow.Step) (*cardflow.CardRef, error) {
	kind, ok := steps.Kinds.Kind(st.Type)
	if !ok {
		return nil, nil
	}
	return kind.Card(st.Config)
}
