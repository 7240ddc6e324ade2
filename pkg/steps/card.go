package steps

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/expr"
)

// Card sends an adaptive card version, expanded with the step's data, to
// its approver and waits for the answer, which is its output. A card that
// cannot be sent leaves by the error exit; no answer before the timeout
// leaves by the timeout exit.
var Card = Define[cardConfig](cardflow.StepCard, cardflow.StepTraits{
	Exits: []string{cardflow.ExitError, cardflow.ExitTimeout}, Delivers: true, Local: true,
}, cardSchema)

type cardConfig struct {
	CardID *string `json:"card_id"`
	// CardVersion is the version to send; without it, the latest ACTIVE
	// one.
	CardVersion *int                     `json:"card_version" want:"a positive whole number"`
	Data        optional[map[string]any] `json:"data"`
	Timeout     string                   `json:"timeout"`
	// Delivery is laid over workflow_integrations.teams; ValidateDefinition
	// checks the profile that makes.
	Delivery map[string]any `json:"delivery" want:"an object such as {\"type\": \"bot\", \"conversation_id\": \"...\"}"`

	timeout time.Duration
}

func (c *cardConfig) Validate() error {
	if err := required(cardflow.StepCard, "card_id", c.CardID); err != nil {
		return err
	}
	if c.CardVersion != nil && *c.CardVersion < 1 {
		return fmt.Errorf("config.card_version must be a positive whole number")
	}
	var err error
	c.timeout, err = duration("timeout", c.Timeout)
	return err
}

func (c *cardConfig) Check(env *expr.Env) (Step, error) {
	s := &cardStep{waitStep: waitStep{timeout: c.timeout, text: c.Timeout}, cardID: *c.CardID, version: c.CardVersion, delivery: c.Delivery}
	if c.Data.set {
		var err error
		if s.data, err = env.CompileValue(c.Data.value); err != nil {
			return nil, fmt.Errorf("config.data: %w", err)
		}
	}
	return s, nil
}

type cardStep struct {
	waitStep
	cardID   string
	version  *int
	data     *expr.Value // nil: the card gets {}
	delivery map[string]any
	// compiled is the template of the card version the step sent last:
	// a version never changes, and compiling it was a third of the
	// step's work.
	compiled atomic.Pointer[compiledCard]
}

// compiledCard is the compiled template of one card version.
type compiledCard struct {
	org, id   string
	version   int
	createdOn int64
	template  *cards.Template
}

// template returns the compiled template of card.
func (s *cardStep) template(card *cardflow.Card) (*cards.Template, error) {
	c := s.compiled.Load()
	if c != nil && c.org == card.OrganizationID && c.id == card.CardID && c.version == card.CardVersion && c.createdOn == card.CreatedOn {
		return c.template, nil
	}
	t, err := cards.Compile(card.CardPayload)
	if err != nil {
		return nil, cardflow.Errorf(cardflow.EINVALID, "the card template does not expand: %v", err)
	}
	s.compiled.Store(&compiledCard{org: card.OrganizationID, id: card.CardID, version: card.CardVersion, createdOn: card.CreatedOn, template: t})
	return t, nil
}

// Run resolves and expands the card, so a card that cannot be sent fails
// the step before the wait is recorded; the input shows what will be sent.
// The expanded card goes to Open, which sends it.
func (s *cardStep) Run(ctx context.Context, r *Run) Outcome {
	b, err := s.prepare(ctx, r)
	if err != nil {
		return Outcome{Reason: err.Error()}
	}
	return Outcome{Input: map[string]any{"card_id": b.card.CardID, "card_version": b.card.CardVersion, "data": b.data}, Prepared: b}
}

// Open sends the card as the wait opens: the one Run expanded, or, when
// the wait opens in a later Advance (after a crash), the card expanded
// again.
func (s *cardStep) Open(ctx context.Context, r *Run) error {
	b, ok := r.Prepared.(*preparedCard)
	var err error
	if !ok {
		b, err = s.prepare(ctx, r)
	}
	if err == nil {
		err = r.Deliverer.Deliver(ctx, b.delivery(r, s.delivery))
	}
	if err != nil {
		return fmt.Errorf("deliver the card of step %s: %w", r.StepID, err)
	}
	return nil
}

// preparedCard is a card step's card version, its data and the card
// expanded with them.
type preparedCard struct {
	card    *cardflow.Card
	data    any
	payload map[string]any
}

// prepare resolves the step's card and expands it with the step's data.
func (s *cardStep) prepare(ctx context.Context, r *Run) (*preparedCard, error) {
	ex := r.Execution
	var card *cardflow.Card
	var err error
	if s.version != nil {
		card, err = r.Cards.GetCard(ctx, ex.OrganizationID, s.cardID, *s.version)
	} else {
		card, err = r.Cards.GetLatestActiveCard(ctx, ex.OrganizationID, s.cardID)
	}
	if err != nil {
		return nil, fmt.Errorf("card %s: %s", s.cardID, cardflow.ErrorMessage(err))
	}
	var data any = map[string]any{}
	if s.data != nil {
		if data, err = s.data.Eval(ctx, r.Vars); err != nil {
			return nil, fmt.Errorf("config.data: %v", err)
		}
	}
	// The card's ${...} bindings read the step's data: the delivery
	// carries the card as the approver will see it.
	t, err := s.template(card)
	var payload map[string]any
	if err == nil {
		payload, err = t.ExpandCard(ctx, data)
	}
	if err != nil {
		return nil, fmt.Errorf("card %s version %d: %s", card.CardID, card.CardVersion, cardflow.ErrorMessage(err))
	}
	return &preparedCard{card: card, data: data, payload: payload}, nil
}

// delivery is the delivery of the prepared card for the wait the
// execution is in.
func (b *preparedCard) delivery(r *Run, profile map[string]any) *cardflow.Delivery {
	ex, now := r.Execution, r.Now()
	return &cardflow.Delivery{
		DeliveryID:     cardflow.NewID(now),
		OrganizationID: ex.OrganizationID, WorkflowID: ex.WorkflowID, ExecutionID: ex.WorkflowExecutionID,
		StepID: r.StepID, ProcessID: ex.State.ProcessID,
		CardID: b.card.CardID, CardVersion: b.card.CardVersion, CardPayload: b.payload, Data: b.data,
		CreatedOn: now.UnixMilli(), Wait: ex.State.Wait,
		Teams: cardflow.TeamsProfile(ex.State.Integrations, profile),
	}
}

var cardSchema = object("Sends an Adaptive Card version and waits for the answer.", []string{"card_id"}, cardProperties())

// cardProperties are the config keys of a step that sends a card.
func cardProperties() map[string]Schema {
	return map[string]Schema{
		"card_id":      typed("string", "The card to send."),
		"card_version": Schema{"type": "integer", "minimum": 1, "description": "The card version to send; without it, the latest ACTIVE one."},
		"data":         typed("object", "What the card's template sees as its data; its strings may hold {{ }} templates."),
		"timeout":      typed("string", "An ISO 8601 duration; without an answer by then the step leaves by the timeout exit."),
		"delivery":     typed("object", "Laid over workflow_integrations.teams key by key: how this step's card reaches Teams."),
	}
}

// CardRef is the card version the step sends.
func (c *cardConfig) CardRef() cardflow.CardRef {
	var ref cardflow.CardRef
	if c.CardID != nil {
		ref.CardID = *c.CardID
	}
	if c.CardVersion != nil {
		ref.Version = *c.CardVersion
	}
	return ref
}
