// Package steps holds the step kinds of workflows. Each kind is one type in
// one file: its config decoded into a struct, validated, checked (its
// expressions and templates compiled) and run. Kinds registers them; the
// definition rules (cardflow.ValidateDefinition) and the engine reach every
// kind through it, so adding a kind is its file and a line in Kinds.
package steps

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// Config is the decoded config of a step kind, a struct with the JSON field
// names the README documents.
type Config interface {
	// Validate checks the fixed shape of the config. It does not compile
	// expressions.
	Validate() error
	// Check compiles the config's expressions and templates and checks what
	// only makes sense compiled, giving the step ready to run.
	Check(env *expr.Env) (Step, error)
}

// IntegrationsUser is a Config that calls through some of the workflow's
// integrations (an erp step, the SAP profile). A workflow is saved only
// with the integrations its steps need; a run finds a missing one out when
// the step runs, as versions saved before the rule did.
type IntegrationsUser interface {
	// Integrations names the workflow_integrations keys the step needs.
	Integrations() []string
	// MissingIntegration says why the step needs the integration name the
	// workflow lacks.
	MissingIntegration(name string) error
}

// CardSender is a Config that sends a card version (card, approval
// steps); saving the workflow checks the organization has it.
type CardSender interface {
	CardRef() cardflow.CardRef
}

// Step is a step compiled to run.
type Step interface {
	// Run runs the step once; the engine records the outcome and moves on.
	Run(ctx context.Context, r *Run) Outcome
}

// Waiter is a step that waits for a resume. Its Run starts the step: the
// input condensed logs show, or a failure. The engine then records the
// wait, opens it on the process record and leaves the step when a resume
// or the deadline claims it.
type Waiter interface {
	Step
	// Timeout bounds the wait; 0 waits until a resume comes.
	Timeout() time.Duration
	// Open runs as the wait opens, before the process record holds it (a
	// card step posts its card). An EINVALID error fails the step, since
	// trying again will not help; any other error is tried again.
	Open(ctx context.Context, r *Run) error
	// TimedOut says why the step failed when its deadline passed.
	TimedOut() string
}

// Decider is a Waiter that decides itself how a claimed wait leaves (an
// approval step reads its approval record). Without it a resume's body is
// the output and a timeout leaves by the timeout exit.
type Decider interface {
	Waiter
	// Decide returns the outcome of the step whose wait w was claimed.
	// The engine sets its Input. An error is tried again.
	Decide(ctx context.Context, r *Run, w *cardflow.Wait) (Outcome, error)
}

// Outcome is how one run of a step ended. A step that failed (Reason)
// leaves by its non-success Exit. Otherwise a Waiter waits for a resume, a
// step with Sleep or Finish sleeps or ends the execution, and any other
// leaves by its default connection, or Next.
type Outcome struct {
	Input  any
	Output any
	// Reason says why the step failed.
	Reason string
	// Exit is the exit a failure takes: cardflow.ExitError when empty, or
	// cardflow.ExitTimeout. Without a Reason it is the exit a step that
	// decided leaves by (an approval's rejected).
	Exit string
	// Next is the step a condition chose instead of its default connection.
	Next string
	// Sleep is when a sleeping step (delay) wakes; it leaves then.
	Sleep *time.Time
	// Finish ends the execution with this status and Output (end); with a
	// Reason, the execution fails in the step instead.
	Finish string
	// Events go to the execution's log as the engine records the outcome;
	// it fills in their time and step.
	Events []cardflow.Event
	// Prepared is what a waiting step's Run made for its Open (a card
	// step's expanded card); the engine hands it to Open when the wait
	// opens in the same Advance.
	Prepared any
}

// Branch is a connection with a when expression, compiled.
type Branch struct {
	To   string
	When *expr.Program
}

// Secrets resolves secret references by name.
type Secrets interface {
	Secret(ctx context.Context, name string) (string, error)
}

// Cards reads the card versions card steps send.
type Cards interface {
	GetCard(ctx context.Context, org, cardID string, version int) (*cardflow.Card, error)
	GetLatestActiveCard(ctx context.Context, org, cardID string) (*cardflow.Card, error)
}

// Run is what one run of a step sees of its execution, and what the engine
// lends it.
type Run struct {
	// Execution is the execution the step runs in; steps only read it.
	Execution *cardflow.Execution
	StepID    string
	// Vars are what the step's expressions see.
	Vars expr.Vars
	// Next is the step the default connection leads to; Branches are the
	// connections with a when expression, in definition order.
	Next     string
	Branches []Branch

	Now       func() time.Time
	Client    *http.Client
	Secrets   Secrets
	Cards     Cards
	Approvals cardflow.ApprovalStore
	// Delegations hand a new approval's approvers to their delegates; nil
	// hands none.
	Delegations cardflow.DelegationStore
	Deliverer   cardflow.Deliverer
	Log         *slog.Logger
	// Observe hears of approvals decided; nil hears nothing.
	Observe cardflow.Observer
	// Prepared is the Prepared of the step's Outcome, for its Open in the
	// same Advance; nil when Open prepares again (the wait opens after a
	// crash).
	Prepared any
}

// Kind is one step kind: its type name, its traits, its config's schema,
// and how a step's config is decoded, validated and checked. It implements
// cardflow.StepKind.
type Kind struct {
	name   string
	traits cardflow.StepTraits
	config *checker
	// err is why the schema did not compile; NewRegistry reports it.
	err    error
	decode func(config map[string]any) (Config, error)
}

// Define returns the kind named name whose config decodes into C and is
// described by schema.
func Define[C any, P interface {
	*C
	Config
}](name string, traits cardflow.StepTraits, schema Schema) Kind {
	c := &checker{schema: schema}
	return Kind{name: name, traits: traits, config: c, err: c.compile(name), decode: func(config map[string]any) (Config, error) {
		c := P(new(C))
		if err := decode(config, c); err != nil {
			return nil, err
		}
		return c, nil
	}}
}

// validated decodes and validates a step's config.
func (k Kind) validated(config map[string]any) (Config, error) {
	c, err := k.decode(config)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Name is the kind's type name, as workflow_steps[].type holds it.
func (k Kind) Name() string { return k.name }

// Traits are the facts of the kind the definition rules use.
func (k Kind) Traits() cardflow.StepTraits { return k.traits }

// Schema is the JSON Schema of the kind's config.
func (k Kind) Schema() Schema { return k.config.schema }

// ValidateConfig checks a step's config as saving a workflow does: no key
// its schema does not know, a config that decodes and validates, and the
// workflow's integrations hold what the step calls through.
func (k Kind) ValidateConfig(config, integrations map[string]any) error {
	violations := k.config.violations(config)
	if err := k.config.unknownKeys(k.name, violations, true); err != nil {
		return err
	}
	c, err := k.validated(config)
	if err != nil {
		return err
	}
	if err := k.config.unknownKeys(k.name, violations, false); err != nil {
		return err
	}
	if u, ok := c.(IntegrationsUser); ok {
		for _, name := range u.Integrations() {
			if _, has := integrations[name]; !has {
				return u.MissingIntegration(name)
			}
		}
	}
	return nil
}

// Compile decodes, validates and checks a step's config: the step ready to
// run. It does not refuse unknown keys: versions saved before they were
// refused still run.
func (k Kind) Compile(env *expr.Env, config map[string]any) (Step, error) {
	c, err := k.validated(config)
	if err != nil {
		return nil, err
	}
	return c.Check(env)
}

// Card decodes a step's config and returns the card it sends, nil for
// none. A stored version is read as it was saved, unknown keys and all,
// and not validated again.
func (k Kind) Card(config map[string]any) (*cardflow.CardRef, error) {
	c, err := k.decode(config)
	if err != nil {
		return nil, err
	}
	s, ok := c.(CardSender)
	if !ok {
		return nil, nil
	}
	ref := s.CardRef()
	return &ref, nil
}

// Registry holds step kinds by name. It implements cardflow.StepKinds.
type Registry struct {
	kinds []Kind
}

// NewRegistry returns a registry of kinds, in the order messages list them.
func NewRegistry(kinds ...Kind) (*Registry, error) {
	r := &Registry{}
	for _, k := range kinds {
		if k.name == "" || k.decode == nil {
			return nil, errors.New("steps: a kind needs a name and a config type (see Define)")
		}
		if k.err != nil {
			return nil, k.err
		}
		if _, dup := r.Kind(k.name); dup {
			return nil, fmt.Errorf("steps: kind %q is registered twice", k.name)
		}
		r.kinds = append(r.kinds, k)
	}
	return r, nil
}

// Kind returns the kind named name.
func (r *Registry) Kind(name string) (Kind, bool) {
	for _, k := range r.kinds {
		if k.name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// Lookup is Kind for the definition rules.
func (r *Registry) Lookup(name string) (cardflow.StepKind, bool) {
	k, ok := r.Kind(name)
	return k, ok
}

// Names lists the kinds' names in registration order.
func (r *Registry) Names() []string {
	names := make([]string, len(r.kinds))
	for i, k := range r.kinds {
		names[i] = k.name
	}
	return names
}
