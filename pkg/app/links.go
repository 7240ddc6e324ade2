package app

import (
	"context"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// LinkVerifier checks response links (pkg/teams does).
type LinkVerifier interface {
	// VerifyResponseLink reads the answer of a response link's token,
	// which this service must have signed and which must not have expired.
	VerifyResponseLink(ctx context.Context, token string) (*cardflow.CardAnswer, error)
	// ConfirmResponseLink returns the token the link's confirmation form
	// posts with the link's token.
	ConfirmResponseLink(ctx context.Context, token string) (string, error)
	// VerifyConfirmation checks that confirmation is the token
	// ConfirmResponseLink gives for token.
	VerifyConfirmation(ctx context.Context, token, confirmation string) error
}

// CardReader reads the text of a card version expanded with a step's data
// (pkg/cards does), for the page a response link opens.
type CardReader interface {
	CardText(ctx context.Context, payload map[string]any, data any) ([]string, error)
}

// LinkPage is what the page of a response link shows: the question and a
// confirmation form while the card can be answered, what was decided once
// it cannot.
type LinkPage struct {
	// StepName names the card step; empty when the workflow moved on.
	StepName string
	// Question is the card's text as it was sent, one line each; empty
	// when it cannot be read.
	Question []string
	// Choice is what the link answers: the button's title (empty for links
	// sent before titles were signed into them) and its data.
	Choice     string
	ChoiceData map[string]any
	// Confirmation is set while the link can answer: the token the
	// confirmation form posts.
	Confirmation string
	// Recorded is set when this request recorded the link's answer.
	Recorded bool
	// Decided is the answer that claimed the card's wait, this link's or
	// another; TimedOut is set when its deadline claimed it instead.
	Decided  *cardflow.Resume
	TimedOut bool
	// Closed says why the card cannot be answered when neither says.
	Closed string
	// Approval is set on the page of an approver's personal link: the
	// approval as it stands, which the page shows once it is decided.
	Approval *cardflow.Approval
	// Note says what came of a personal link's answer.
	Note string
}

// OpenLink shows what a response link would answer, and changes nothing:
// mail and chat link scanners open links before people do, so opening one
// (GET, HEAD, any number of times) records no answer and no event. Only
// AnswerLink, with the confirmation token the page carries, answers.
func (s *Links) OpenLink(ctx context.Context, token string) (*LinkPage, error) {
	a, page, err := s.verifyLink(ctx, token)
	if err != nil {
		return nil, err
	}
	if len(a.Identities) > 0 {
		return s.openApprovalLink(ctx, a, token, page)
	}
	proc, err := s.store.GetProcess(ctx, a.OrganizationID, a.ProcessID)
	if err != nil {
		return nil, err
	}
	if proc.ExecutionID != a.ExecutionID {
		page.Closed = "This card belongs to an earlier execution of process id " + a.ProcessID + ", which has finished; nothing more can be recorded."
		return page, nil
	}
	w := proc.Wait
	switch {
	case w != nil && w.Seq == a.Wait:
		ex, err := s.store.GetExecution(ctx, proc.OrganizationID, proc.WorkflowID, proc.ExecutionID)
		if err != nil {
			return nil, err
		}
		page.StepName = ex.StepName(w.StepID)
		switch {
		case w.Resume != nil:
			page.Decided = w.Resume
		case w.TimedOut || (w.Deadline > 0 && s.millis() >= w.Deadline):
			page.TimedOut = true
		case proc.Closed:
			page.Closed = "The execution of this card has ended; nothing more can be recorded."
		default:
			page.Question = s.cardText(ctx, ex, w.StepID)
			page.Confirmation, err = s.links.ConfirmResponseLink(ctx, token)
			if err != nil {
				return nil, err
			}
		}
	case proc.Waits < a.Wait && !proc.Closed && proc.Early != nil:
		page.Decided = proc.Early
	case proc.Waits < a.Wait && !proc.Closed:
		// The card went out a moment before its wait opened; AnswerLink
		// keeps an answer for it, or says to try again.
		if page.Confirmation, err = s.links.ConfirmResponseLink(ctx, token); err != nil {
			return nil, err
		}
	default:
		page.Closed = "This request was settled and the workflow has moved on; nothing more can be recorded."
	}
	return page, nil
}

// AnswerLink answers a card with the choice of a response link, given the
// confirmation token of the link's page. The card's wait is claimed in one
// conditional write, so only the first answer counts: a replayed or double
// POST, or a late click after the card was decided, records nothing and
// shows what was decided.
func (s *Links) AnswerLink(ctx context.Context, token, confirmation string) (*LinkPage, error) {
	a, page, err := s.verifyLink(ctx, token)
	if err != nil {
		return nil, err
	}
	if err := s.links.VerifyConfirmation(ctx, token, confirmation); err != nil {
		return nil, err
	}
	if len(a.Identities) > 0 {
		return s.answerApprovalLink(ctx, a, page)
	}
	isApproval, err := s.isApproval(ctx, a)
	if err != nil {
		return nil, err
	}
	if isApproval {
		// A response link that names no person (a card step's) cannot
		// answer an approval, which records the refusal.
		decision, _ := a.Payload["decision"].(string)
		_, err := s.answerApproval(ctx, a.OrganizationID, ApprovalAnswer{
			ApprovalID: cardflow.ApprovalIDOf(a.ExecutionID, a.Wait), IDs: a.Identities, Actor: a.Actor, Channel: cardflow.ChannelTeams, Decision: decision,
		})
		switch code := cardflow.ErrorCode(err); {
		case err == nil:
			return nil, cardflow.Errorf(cardflow.EINTERNAL, "an approval took an answer from a response link")
		case code == cardflow.EFORBIDDEN || code == cardflow.ECONFLICT || code == cardflow.EINVALID:
			page.Closed = "Your answer was not recorded: " + cardflow.ErrorMessage(err) + "."
			return page, nil
		}
		return nil, err
	}
	out, err := s.answer(ctx, a)
	switch {
	case cardflow.ErrorCode(err) == cardflow.ECONFLICT:
		// The card's request ended without this answer (cancelled, moved
		// on, not open yet): the person sees why.
		page.Closed = "Your answer was not recorded: " + cardflow.ErrorMessage(err) + "."
		return page, nil
	case err != nil:
		return nil, err
	}
	page.StepName, page.Recorded = out.StepName, out.Resumed
	page.Decided, page.TimedOut = out.Wait.Resume, out.Wait.TimedOut
	return page, nil
}

// verifyLink checks a response link and starts its page with its choice.
func (s *Links) verifyLink(ctx context.Context, token string) (*cardflow.CardAnswer, *LinkPage, error) {
	a, err := s.links.VerifyResponseLink(ctx, token)
	if err != nil {
		return nil, nil, err
	}
	data := make(map[string]any, len(a.Payload))
	for k, v := range a.Payload {
		if k != "responder" {
			data[k] = v
		}
	}
	return a, &LinkPage{Choice: a.Label, ChoiceData: data}, nil
}

// cardText reads the card a card step sent from what its log recorded: the
// card version and the data it was expanded with. Anything missing leaves
// the page without the question rather than without the form.
func (s *Links) cardText(ctx context.Context, ex *cardflow.Execution, stepID string) []string {
	if s.cardReader == nil {
		return nil
	}
	in, _ := ex.CondensedLogs[stepID].Input.(map[string]any)
	id, _ := in["card_id"].(string)
	version, ok := number(in["card_version"])
	if id == "" || !ok {
		return nil
	}
	card, err := s.store.GetCard(ctx, ex.OrganizationID, id, version)
	if err != nil {
		s.log.WarnContext(ctx, "reading the card of a response link", "error", err)
		return nil
	}
	text, err := s.cardReader.CardText(ctx, card.CardPayload, in["data"])
	if err != nil {
		s.log.WarnContext(ctx, "reading the card of a response link", "error", err)
		return nil
	}
	return text
}

// number reads a whole number that went through JSON or not.
func number(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}
