package cardflow

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Step types the use cases name: the trigger, where an execution starts and
// a schedule is read, and the card step, whose card saveWorkflow looks up.
// pkg/steps registers every kind, these included.
const (
	StepTrigger = "trigger"
	StepCard    = "card"
)

// Non-success exits a connection may name in On.
const (
	ExitError   = "error"
	ExitTimeout = "timeout"
)

// StepRole is the part steps of a kind play in the shape of a workflow
// graph.
type StepRole int

const (
	// RoleTask steps leave by their one default connection, or by one of
	// their non-success exits.
	RoleTask StepRole = iota
	// RoleTrigger is the entry point: exactly one per workflow, and nothing
	// leads into it.
	RoleTrigger
	// RoleCondition steps leave by the first connection whose when holds,
	// else by their default connection.
	RoleCondition
	// RoleEnd steps finish the execution; nothing leaves them.
	RoleEnd
)

// StepTraits are the facts of a step kind the definition rules use.
type StepTraits struct {
	Role StepRole
	// Exits are the non-success exits (ExitError, ExitTimeout) a connection
	// leaving such a step may name in On.
	Exits []string
	// Delivers says the step posts a card to Teams, so its config may hold
	// a delivery (see TeamsProfile).
	Delivers bool
	// PersonalCopies says each approver the step names gets a copy of its
	// card with personal links, so a webhook delivery needs a webhook of
	// each approver's own (see ApproverWebhook).
	PersonalCopies bool
	// Local says the step's Run changes nothing outside its execution (no
	// calls, deliveries or writes), so running it again after a crash goes
	// unseen: the engine may store what it did together with the steps
	// after it. A Waiter's Open is not part of Run.
	Local bool
}

// StepKind is what the definition rules know of one step kind. The kinds
// live in pkg/steps, which hands them to ValidateDefinition.
type StepKind interface {
	Traits() StepTraits
	// ValidateConfig decodes a step's config and checks its fixed shape,
	// and that the workflow's integrations hold what the step needs. It
	// does not compile expressions.
	ValidateConfig(config, integrations map[string]any) error
}

// StepKinds looks step kinds up by type name.
type StepKinds interface {
	Lookup(typ string) (StepKind, bool)
	// Names lists the type names, in the order messages list them.
	Names() []string
}

// CardRef names the card version a step sends; Version 0 is the latest
// ACTIVE one.
type CardRef struct {
	CardID  string
	Version int
}

// References looks up the records of its organization a workflow version
// names, so saving it can check they are there. The Store has them.
type References interface {
	GetCard(ctx context.Context, org, cardID string, version int) (*Card, error)
	GetConversation(ctx context.Context, org, conversationID string) (*TeamsConversation, error)
}

// Definition limits, so one version stays far below a record's size limit.
const (
	MaxSteps       = 200
	MaxConnections = 400
	MaxNameLength  = 200
)

var stepIDPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// ValidateDefinition checks the name, steps and connections of a workflow
// version against the step kinds, and names the step or connection at
// fault. It does not look at expressions; those are checked by the engine's
// compiler.
func (w *Workflow) ValidateDefinition(kinds StepKinds) error {
	name := TrimSpecSpace(w.WorkflowName)
	if name == "" {
		return Errorf(EINVALID, "workflow_name is required")
	}
	if len(name) > MaxNameLength {
		return Errorf(EINVALID, "workflow_name is longer than %d characters", MaxNameLength)
	}
	if len(w.WorkflowSteps) == 0 {
		return Errorf(EINVALID, "workflow_steps must hold at least a trigger and an end step")
	}
	if len(w.WorkflowSteps) > MaxSteps {
		return Errorf(EINVALID, "workflow_steps holds %d steps; the limit is %d", len(w.WorkflowSteps), MaxSteps)
	}
	if len(w.WorkflowConnections) > MaxConnections {
		return Errorf(EINVALID, "workflow_connections holds %d connections; the limit is %d", len(w.WorkflowConnections), MaxConnections)
	}

	steps := make(map[string]*Step, len(w.WorkflowSteps))
	// traits holds the traits of each step's kind, by step id.
	traits := make(map[string]StepTraits, len(w.WorkflowSteps))
	var trigger *Step
	for i := range w.WorkflowSteps {
		s := &w.WorkflowSteps[i]
		where := fmt.Sprintf("workflow_steps[%d]", i)
		if !stepIDPattern.MatchString(s.ID) {
			return Errorf(EINVALID, "%s: id %q must start with a letter and hold at most 64 letters, digits, '_' or '-'", where, s.ID)
		}
		where = fmt.Sprintf("workflow_steps[%d] (id %q)", i, s.ID)
		if steps[s.ID] != nil {
			return Errorf(EINVALID, "%s: step id is used twice", where)
		}
		steps[s.ID] = s
		if strings.TrimSpace(s.Name) == "" {
			return Errorf(EINVALID, "%s: name is required", where)
		}
		if len(s.Name) > MaxNameLength {
			return Errorf(EINVALID, "%s: name is longer than %d characters", where, MaxNameLength)
		}
		kind, ok := kinds.Lookup(s.Type)
		if !ok {
			return Errorf(EINVALID, "%s: unknown type %q; use %s", where, s.Type, oneOf(kinds.Names()))
		}
		traits[s.ID] = kind.Traits()
		if traits[s.ID].Role == RoleTrigger {
			if trigger != nil {
				return Errorf(EINVALID, "%s: a workflow has exactly one trigger step, and %q is one already", where, trigger.ID)
			}
			trigger = s
		}
		if err := kind.ValidateConfig(s.Config, w.WorkflowIntegrations); err != nil {
			return Errorf(EINVALID, "%s: %s", where, err.Error())
		}
	}
	if trigger == nil {
		return Errorf(EINVALID, "workflow_steps has no trigger step; a workflow has exactly one")
	}
	if err := w.validateTeams(traits); err != nil {
		return err
	}
	out := make(map[string][]Connection, len(steps))
	for i, c := range w.WorkflowConnections {
		where := fmt.Sprintf("workflow_connections[%d] (%s -> %s)", i, c.From, c.To)
		from, to := steps[c.From], steps[c.To]
		switch {
		case from == nil:
			return Errorf(EINVALID, "%s: from names no step", where)
		case to == nil:
			return Errorf(EINVALID, "%s: to names no step", where)
		case traits[c.To].Role == RoleTrigger:
			return Errorf(EINVALID, "%s: nothing may lead into the trigger step", where)
		case traits[c.From].Role == RoleEnd:
			return Errorf(EINVALID, "%s: an end step has no outgoing connections", where)
		case c.When != "" && c.On != "":
			return Errorf(EINVALID, "%s: a connection has either when or on, not both", where)
		case c.When != "" && traits[c.From].Role != RoleCondition:
			return Errorf(EINVALID, "%s: only condition steps have when expressions", where)
		}
		if c.On != "" && !slices.Contains(traits[c.From].Exits, c.On) {
			return Errorf(EINVALID, "%s: a %s step has no %q exit", where, from.Type, c.On)
		}
		for _, prev := range out[c.From] {
			if prev.On == c.On && prev.When == c.When {
				return Errorf(EINVALID, "%s: duplicates an earlier connection of step %q", where, c.From)
			}
		}
		out[c.From] = append(out[c.From], c)
	}

	for i := range w.WorkflowSteps {
		s := &w.WorkflowSteps[i]
		role := traits[s.ID].Role
		if role == RoleEnd {
			continue
		}
		defaults := 0
		for _, c := range out[s.ID] {
			if c.When == "" && c.On == "" {
				defaults++
			}
		}
		if defaults != 1 {
			kind := "one connection without when or on (where it goes next)"
			if role == RoleCondition {
				kind = "one default connection without when (taken when no expression matches)"
			}
			return Errorf(EINVALID, "workflow_steps[%d] (id %q): needs exactly %s, has %d", i, s.ID, kind, defaults)
		}
	}

	// Every step must be reachable from the trigger, and some end too.
	seen := map[string]bool{trigger.ID: true}
	queue := []string{trigger.ID}
	endReached := false
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if traits[id].Role == RoleEnd {
			endReached = true
		}
		for _, c := range out[id] {
			if !seen[c.To] {
				seen[c.To] = true
				queue = append(queue, c.To)
			}
		}
	}
	for i, s := range w.WorkflowSteps {
		if !seen[s.ID] {
			return Errorf(EINVALID, "workflow_steps[%d] (id %q): not reachable from the trigger step %q", i, s.ID, trigger.ID)
		}
	}
	if !endReached {
		return Errorf(EINVALID, "no end step is reachable from the trigger step %q", trigger.ID)
	}
	return nil
}

// oneOf lists names for a message: "a, b or c".
func oneOf(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
