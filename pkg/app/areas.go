package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// The use cases come in areas, one type each, grouped by what they depend
// on: an area's constructor takes what its use cases need, and fails when
// something is missing, so a program wired wrong stops at start rather
// than answering a request with 503. A program builds only the areas it
// serves (a Lambda function of one endpoint, one area).

var errNoBase = errors.New("app: base is nil")

// Workflows reads and publishes workflows, and reads their schemas and
// schedules.
type Workflows struct {
	*Base
	// scheduler is optional: a program that runs no schedules (the CLI)
	// publishes versions without one and refuses the others.
	scheduler cardflow.Scheduler
}

// NewWorkflows returns the Workflows area over b; scheduler may be nil
// (see Workflows).
func NewWorkflows(b *Base, scheduler cardflow.Scheduler) (*Workflows, error) {
	if b == nil {
		return nil, errNoBase
	}
	return &Workflows{b, scheduler}, nil
}

// WorkflowEditor saves workflow versions, checked by its Checker.
type WorkflowEditor struct {
	*Base
	checker Checker
}

// NewWorkflowEditor returns the WorkflowEditor area over b, checking
// versions with checker.
func NewWorkflowEditor(b *Base, checker Checker) (*WorkflowEditor, error) {
	if b == nil {
		return nil, errNoBase
	}
	if checker == nil {
		return nil, errors.New("app: the workflow editor needs a workflow checker")
	}
	return &WorkflowEditor{b, checker}, nil
}

// Schedules turns the schedules of workflows on and off, with the
// scheduler.
type Schedules struct {
	*Base
	scheduler cardflow.Scheduler
}

// NewSchedules returns the Schedules area over b and scheduler.
func NewSchedules(b *Base, scheduler cardflow.Scheduler) (*Schedules, error) {
	if b == nil {
		return nil, errNoBase
	}
	if scheduler == nil {
		return nil, errors.New("app: schedules need a scheduler")
	}
	return &Schedules{b, scheduler}, nil
}

// Cards reads and publishes card versions.
type Cards struct{ *Base }

// NewCards returns the Cards area over b.
func NewCards(b *Base) (*Cards, error) {
	if b == nil {
		return nil, errNoBase
	}
	return &Cards{b}, nil
}

// CardEditor saves card versions, checked by its CardChecker.
type CardEditor struct {
	*Base
	cardChecker CardChecker
}

// NewCardEditor returns the CardEditor area over b, checking cards with
// checker.
func NewCardEditor(b *Base, checker CardChecker) (*CardEditor, error) {
	if b == nil {
		return nil, errNoBase
	}
	if checker == nil {
		return nil, errors.New("app: the card editor needs a card checker")
	}
	return &CardEditor{b, checker}, nil
}

// CardPreviews expands card versions with sample data.
type CardPreviews struct {
	*Base
	cardExpander CardExpander
}

// NewCardPreviews returns the CardPreviews area over b, expanding cards
// with expander.
func NewCardPreviews(b *Base, expander CardExpander) (*CardPreviews, error) {
	if b == nil {
		return nil, errNoBase
	}
	if expander == nil {
		return nil, errors.New("app: card previews need a card expander")
	}
	return &CardPreviews{b, expander}, nil
}

// Executions reads, searches and waits for executions.
type Executions struct{ *Base }

// NewExecutions returns the Executions area over b.
func NewExecutions(b *Base) (*Executions, error) {
	if b == nil {
		return nil, errNoBase
	}
	return &Executions{b}, nil
}

// Runs starts, resumes, cancels and redrives executions on the runner,
// runs scheduled runs, bulk operations and housekeeping, and records the
// answers to cards.
type Runs struct {
	*Base
	runner cardflow.Runner
	// deliver sends a sequential approval's card to the next approver. It
	// is optional: without it the runner is nudged to send the card
	// (deliverNext), as on AWS, where the engine delivers.
	deliver cardflow.Deliverer
}

// NewRuns returns the Runs area over b and runner; deliver may be nil
// (see Runs).
func NewRuns(b *Base, runner cardflow.Runner, deliver cardflow.Deliverer) (*Runs, error) {
	if b == nil {
		return nil, errNoBase
	}
	if runner == nil {
		return nil, errors.New("app: runs need a runner")
	}
	if deliver != nil {
		deliver = cardflow.GuardConversations(b.store, deliver)
	}
	return &Runs{b, runner, deliver}, nil
}

// Answers answers, reassigns and overrides approvals; answers wake the
// execution through Runs.
type Answers struct{ *Runs }

// NewAnswers returns the Answers area over runs.
func NewAnswers(runs *Runs) (*Answers, error) {
	if runs == nil {
		return nil, errors.New("app: answers need runs")
	}
	return &Answers{runs}, nil
}

// Approvals reads approvals and issues an approver's personal links.
type Approvals struct {
	*Base
	// issuer is optional: a deployment that signs no response links
	// issues no personal links (IssueApprovalLinks answers 404).
	issuer LinkIssuer
}

// NewApprovals returns the Approvals area over b; issuer may be nil (see
// Approvals).
func NewApprovals(b *Base, issuer LinkIssuer) (*Approvals, error) {
	if b == nil {
		return nil, errNoBase
	}
	return &Approvals{b, issuer}, nil
}

// Links answers cards through response links.
type Links struct {
	*Answers
	links LinkVerifier
	// cardReader is optional: without it a link's page shows no card
	// text, so that only what serves the pages links the card templates.
	cardReader CardReader
}

// NewLinks returns the Links area over answers, verifying links with v;
// r may be nil (see Links).
func NewLinks(answers *Answers, v LinkVerifier, r CardReader) (*Links, error) {
	if answers == nil {
		return nil, errors.New("app: response links need answers")
	}
	if v == nil {
		return nil, errors.New("app: response links need a link verifier")
	}
	return &Links{answers, v, r}, nil
}

// Bot answers cards through the Teams bot.
type Bot struct {
	*Answers
	botVerifier ActivityVerifier
	botReplier  CardReplier
}

// NewBot returns the Bot area over answers, checking activities with v
// and replying with r.
func NewBot(answers *Answers, v ActivityVerifier, r CardReplier) (*Bot, error) {
	if answers == nil {
		return nil, errors.New("app: the Teams bot needs answers")
	}
	if v == nil || r == nil {
		return nil, errors.New("app: the Teams bot needs an activity verifier and a card replier")
	}
	return &Bot{answers, v, r}, nil
}

// Conversations registers, lists and removes Teams conversations.
type Conversations struct{ *Base }

// NewConversations returns the Conversations area over b.
func NewConversations(b *Base) (*Conversations, error) {
	if b == nil {
		return nil, errNoBase
	}
	return &Conversations{b}, nil
}

// Bulk starts and reads bulk operations; Runs works them.
type Bulk struct {
	*Base
	// bulkKick is optional: it wakes an in-process worker at once (local
	// mode); without it the workers take the operation up at their next
	// round.
	bulkKick func()
}

// NewBulk returns the Bulk area over b; kick may be nil (see Bulk).
func NewBulk(b *Base, kick func()) (*Bulk, error) {
	if b == nil {
		return nil, errNoBase
	}
	return &Bulk{b, kick}, nil
}

// Admin manages API keys, limits and webhooks, and authenticates keys.
type Admin struct{ *Base }

// NewAdmin returns the Admin area over b.
func NewAdmin(b *Base) (*Admin, error) {
	if b == nil {
		return nil, errNoBase
	}
	return &Admin{b}, nil
}

// Deps are what the areas of a Service need beyond the Base. A nil field
// leaves out the areas that need it (see New).
type Deps struct {
	// Runner builds Runs and Answers; Deliverer is optional with it.
	Runner    cardflow.Runner
	Deliverer cardflow.Deliverer
	// Scheduler builds Schedules; without it Workflows publishes only
	// versions without a schedule.
	Scheduler cardflow.Scheduler
	// Checker builds WorkflowEditor.
	Checker Checker
	// CardChecker builds CardEditor.
	CardChecker CardChecker
	// CardExpander builds CardPreviews.
	CardExpander CardExpander
	// LinkVerifier builds Links, with Runner; CardReader is optional with
	// it.
	LinkVerifier LinkVerifier
	CardReader   CardReader
	// BotVerifier and BotReplier build Bot, with Runner.
	BotVerifier ActivityVerifier
	BotReplier  CardReplier
	// LinkIssuer and BulkKick are optional, with Approvals and Bulk.
	LinkIssuer LinkIssuer
	BulkKick   func()
}

// Service is the areas a program serves. Their use cases are promoted, so
// svc.Trigger is svc.Runs.Trigger; calling one of an area left out panics,
// so a program checks the areas it serves at start with Need.
type Service struct {
	*Base
	*Workflows
	*WorkflowEditor
	*Schedules
	*Cards
	*CardEditor
	*CardPreviews
	*Executions
	*Runs
	*Answers
	*Approvals
	*Links
	*Bot
	*Conversations
	*Bulk
	*Admin
}

// New returns the Service over store: the areas that need only the Base,
// and each area whose dependencies deps holds. An optional dependency
// without the area it belongs to is a wiring error.
func New(store cardflow.Store, deps Deps, opts ...Option) (*Service, error) {
	b, err := NewBase(store, opts...)
	if err != nil {
		return nil, err
	}
	s := &Service{Base: b}
	s.Workflows, _ = NewWorkflows(b, deps.Scheduler)
	s.Cards, _ = NewCards(b)
	s.Executions, _ = NewExecutions(b)
	s.Conversations, _ = NewConversations(b)
	s.Admin, _ = NewAdmin(b)
	s.Approvals, _ = NewApprovals(b, deps.LinkIssuer)
	s.Bulk, _ = NewBulk(b, deps.BulkKick)
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	if deps.Checker != nil {
		s.WorkflowEditor, err = NewWorkflowEditor(b, deps.Checker)
		add(err)
	}
	if deps.Scheduler != nil {
		s.Schedules, err = NewSchedules(b, deps.Scheduler)
		add(err)
	}
	if deps.CardChecker != nil {
		s.CardEditor, err = NewCardEditor(b, deps.CardChecker)
		add(err)
	}
	if deps.CardExpander != nil {
		s.CardPreviews, err = NewCardPreviews(b, deps.CardExpander)
		add(err)
	}
	switch {
	case deps.Runner != nil:
		s.Runs, err = NewRuns(b, deps.Runner, deps.Deliverer)
		add(err)
		s.Answers, err = NewAnswers(s.Runs)
		add(err)
	case deps.Deliverer != nil || deps.LinkVerifier != nil || deps.BotVerifier != nil || deps.BotReplier != nil:
		add(errors.New("app: a deliverer, response links and the Teams bot need a runner"))
	}
	switch {
	case deps.LinkVerifier != nil && s.Answers != nil:
		s.Links, err = NewLinks(s.Answers, deps.LinkVerifier, deps.CardReader)
		add(err)
	case deps.CardReader != nil:
		add(errors.New("app: a card reader needs a link verifier"))
	}
	if (deps.BotVerifier != nil || deps.BotReplier != nil) && s.Answers != nil {
		s.Bot, err = NewBot(s.Answers, deps.BotVerifier, deps.BotReplier)
		add(err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// Area names an area of a Service, for Need.
type Area string

// The areas a Service may hold but for those every Service holds.
const (
	AreaWorkflowEditor Area = "WorkflowEditor"
	AreaSchedules      Area = "Schedules"
	AreaCardEditor     Area = "CardEditor"
	AreaCardPreviews   Area = "CardPreviews"
	AreaRuns           Area = "Runs"
	AreaLinks          Area = "Links"
	AreaBot            Area = "Bot"
)

// Need returns an error naming each of areas the service lacks, with the
// dependency that builds it. A zero Area needs nothing.
func (s *Service) Need(areas ...Area) error {
	var missing []string
	for _, a := range areas {
		var ok bool
		var dep string
		switch a {
		case "":
			ok = true
		case AreaWorkflowEditor:
			ok, dep = s.WorkflowEditor != nil, "a workflow checker"
		case AreaSchedules:
			ok, dep = s.Schedules != nil, "a scheduler"
		case AreaCardEditor:
			ok, dep = s.CardEditor != nil, "a card checker"
		case AreaCardPreviews:
			ok, dep = s.CardPreviews != nil, "a card expander"
		case AreaRuns:
			ok, dep = s.Runs != nil, "a runner"
		case AreaLinks:
			ok, dep = s.Links != nil, "a runner and a link verifier"
		case AreaBot:
			ok, dep = s.Bot != nil, "a runner and the Teams bot"
		default:
			return fmt.Errorf("app: no area %q", a)
		}
		if !ok {
			missing = append(missing, fmt.Sprintf("%s (it needs %s)", a, dep))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("app: the service lacks %s", strings.Join(missing, ", "))
	}
	return nil
}
