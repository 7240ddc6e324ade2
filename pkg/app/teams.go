package app

import (
	"context"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// ActivityVerifier checks what the Teams bot receives (pkg/teams does).
type ActivityVerifier interface {
	// VerifyActivity checks by its Authorization header that a request
	// came through the Bot Connector and reads the activity in its body. A
	// card answer in it must carry a reference this service signed.
	VerifyActivity(ctx context.Context, authorization string, body []byte) (*cardflow.BotActivity, error)
}

// CardReplier shows approvers in Teams what came of their answers
// (pkg/teams does).
type CardReplier interface {
	// DecisionReply returns the whole reply to an activity that expects
	// the decision card back.
	DecisionReply(o cardflow.CardOutcome) map[string]any
	// ReplaceCard replaces the bot's card activityID in conv with the
	// decision card.
	ReplaceCard(ctx context.Context, conv cardflow.BotConversation, activityID string, o cardflow.CardOutcome) error
}

// BotActivityOutput is what answers an activity the Teams bot received.
type BotActivityOutput struct {
	// Answered is set when the activity answered a card.
	Answered bool
	// Resumed is set when the answer claimed the card's wait.
	Resumed bool
	// Reply is the whole reply to an activity that expects the decision
	// card back; nil for others.
	Reply map[string]any
}

// AnswerBotActivity takes an activity the Teams bot received: it checks
// that it came through the Bot Connector, answers the card it answers as
// the person who sent it, and shows them the decision, in the reply or in
// place of the card. An answer that comes too late for its request gets a
// card saying why instead of an error. Activities that answer no card
// (installing the bot, writing to it) are logged with their conversation,
// which a workflow's teams profile names, and otherwise ignored.
func (s *Bot) AnswerBotActivity(ctx context.Context, authorization string, body []byte) (*BotActivityOutput, error) {
	a, err := s.botVerifier.VerifyActivity(ctx, authorization, body)
	if err != nil {
		return nil, err
	}
	conv, err := s.botConversation(ctx, a)
	if err != nil {
		return nil, err
	}
	if a.Answer == nil {
		org := ""
		if conv != nil {
			org = conv.OrganizationID
		}
		s.log.InfoContext(ctx, "Teams conversation", "type", a.Type, "service_url", a.Conversation.ServiceURL,
			"conversation_id", a.Conversation.ConversationID, "tenant_id", a.Conversation.TenantID, "organization", org)
		return &BotActivityOutput{}, nil
	}
	// A click answers only the executions of the conversation's
	// organization, so that nobody's identity answers for another.
	if conv == nil || conv.OrganizationID != a.Answer.OrganizationID {
		return nil, cardflow.Errorf(cardflow.ENOTFOUND, "this card's request is not one of this conversation's organization: nothing was recorded")
	}
	isApproval, err := s.isApproval(ctx, a.Answer)
	if err != nil {
		return nil, err
	}
	if isApproval {
		out, o, err := s.answerCardApproval(ctx, a.Answer, cardflow.ApprovalIDOf(a.Answer.ExecutionID, a.Answer.Wait))
		if err != nil {
			return nil, err
		}
		return s.botReply(ctx, a, out, o), nil
	}
	out, err := s.answer(ctx, a.Answer)
	var o cardflow.CardOutcome
	switch {
	case cardflow.ErrorCode(err) == cardflow.ECONFLICT:
		// The card's request ended without this answer (cancelled, moved
		// on): the approver sees why.
		o = cardflow.CardOutcome{Note: "Your answer was not recorded: " + cardflow.ErrorMessage(err) + "."}
		out = &AnswerOutput{}
	case err != nil:
		return nil, err
	default:
		o = cardflow.CardOutcome{Title: out.StepName, Decision: out.Wait.Resume, TimedOut: out.Wait.TimedOut}
	}
	return s.botReply(ctx, a, out, o), nil
}

// botReply shows the person who answered what came of it: in the reply
// to Action.Execute, else in place of the card they answered.
func (s *Bot) botReply(ctx context.Context, a *cardflow.BotActivity, out *AnswerOutput, o cardflow.CardOutcome) *BotActivityOutput {
	if a.ReplyWithCard {
		return &BotActivityOutput{Answered: true, Resumed: out.Resumed, Reply: s.botReplier.DecisionReply(o)}
	}
	if a.ReplyToID != "" {
		if err := s.botReplier.ReplaceCard(ctx, a.Conversation, a.ReplyToID, o); err != nil {
			// The answer counts; only the card stays as it was.
			s.log.WarnContext(ctx, "replacing an answered card failed", "error", err)
		}
	}
	return &BotActivityOutput{Answered: true, Resumed: out.Resumed}
}

// isApproval reports whether a card answer answers an approval step,
// which takes answers only from its approvers.
func (s *Answers) isApproval(ctx context.Context, a *cardflow.CardAnswer) (bool, error) {
	_, err := s.store.GetApproval(ctx, a.OrganizationID, cardflow.ApprovalIDOf(a.ExecutionID, a.Wait))
	if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
		return false, nil
	}
	return err == nil, err
}

// answer answers a card as the person a verified answer names, for the
// organization the card's signed reference names.
func (s *Answers) answer(ctx context.Context, a *cardflow.CardAnswer) (*AnswerOutput, error) {
	ctx = cardflow.NewContextWithPrincipal(ctx, &cardflow.Principal{OrganizationID: a.OrganizationID, Scopes: []string{cardflow.ScopeExecute}, Actor: a.Actor})
	return s.AnswerCard(ctx, AnswerInput{ProcessID: a.ProcessID, ExecutionID: a.ExecutionID, Wait: a.Wait, Payload: a.Payload})
}

// WithTeamsTenants maps Microsoft Entra tenant ids to the organization
// each belongs to, as the deployment's operator configured it: the bot
// registers a conversation of such a tenant for that organization when it
// is installed there or first contacted, and no other organization may
// register one (docs/DECISIONS.md).
func WithTeamsTenants(tenants map[string]string) Option {
	return func(s *Base) { s.tenants = tenants }
}

// botConversation returns the registered conversation an activity came
// from, registering it first for the organization its tenant is mapped
// to (moving it there from another organization that claimed it); nil
// when it is not registered and its tenant is mapped to none. A
// conversation whose tenant, as Teams reports it, is not the one
// registered counts as not registered.
func (s *Bot) botConversation(ctx context.Context, a *cardflow.BotActivity) (*cardflow.TeamsConversation, error) {
	id, tenant := a.Conversation.ConversationID, a.Conversation.TenantID
	if id == "" {
		return nil, nil
	}
	mapped := s.tenants[tenant]
	c, err := s.store.FindConversation(ctx, id)
	if err == nil && mapped != "" && c.OrganizationID != mapped {
		// The operator's mapping outranks an admin's claim: the
		// conversation moves to its tenant's organization, and the
		// claimant's workflows post there no more.
		s.log.WarnContext(ctx, "Teams conversation moved to its tenant's organization", "conversation_id", id, "tenant_id", tenant,
			"from", c.OrganizationID, "to", mapped)
		if err = s.store.DeleteConversation(ctx, c.OrganizationID, id); err == nil {
			err = cardflow.ConversationNotFound(id)
		}
	}
	if cardflow.ErrorCode(err) == cardflow.ENOTFOUND && mapped != "" {
		source := cardflow.ConversationByFirstContact
		if a.Type == "conversationUpdate" || a.Type == "installationUpdate" {
			source = cardflow.ConversationByInstallation
		}
		c = &cardflow.TeamsConversation{OrganizationID: mapped, ConversationID: id, ServiceURL: a.Conversation.ServiceURL,
			TenantID: tenant, Kind: a.ConversationKind, Source: source, RegisteredBy: "teams:tenant " + tenant, RegisteredOn: s.millis()}
		if err = s.store.RegisterConversation(ctx, c); cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			c, err = s.store.FindConversation(ctx, id)
		}
	}
	switch {
	case cardflow.ErrorCode(err) == cardflow.ENOTFOUND:
		return nil, nil
	case err != nil:
		return nil, err
	case mapped != "" && mapped != c.OrganizationID, c.TenantID != "" && tenant != "" && c.TenantID != tenant:
		s.log.WarnContext(ctx, "Teams conversation registered for an organization its tenant is not mapped to", "conversation_id", id, "tenant_id", tenant)
		return nil, nil
	}
	return c, nil
}

// RegisterConversationInput is the body of registerConversation.
type RegisterConversationInput struct {
	ConversationID string `json:"conversation_id"`
	ServiceURL     string `json:"service_url"`
	TenantID       string `json:"tenant_id"`
	Kind           string `json:"kind"`
}

// RegisterConversation registers a Teams conversation for the caller's
// organization (admin scope), so that its workflows may post there and
// clicks there answer its executions. A conversation another organization
// has, or one of a tenant the deployment maps to another organization, is
// refused.
func (s *Conversations) RegisterConversation(ctx context.Context, in RegisterConversationInput) (*cardflow.TeamsConversation, error) {
	p, err := principal(ctx, cardflow.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	c := &cardflow.TeamsConversation{
		OrganizationID: p.OrganizationID, ConversationID: in.ConversationID, ServiceURL: in.ServiceURL,
		TenantID: in.TenantID, Kind: in.Kind, Source: cardflow.ConversationByAdmin,
		RegisteredBy: p.Actor, RegisteredOn: s.millis(),
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if org := s.tenants[c.TenantID]; org != "" && org != p.OrganizationID {
		return nil, cardflow.Errorf(cardflow.EFORBIDDEN, "this deployment maps tenant %q to another organization: its conversations are that organization's", c.TenantID)
	}
	if err := s.store.RegisterConversation(ctx, c); err != nil {
		return nil, err
	}
	return c, nil
}

// ListConversations lists the caller's organization's conversations
// (admin scope).
func (s *Conversations) ListConversations(ctx context.Context) ([]*cardflow.TeamsConversation, error) {
	p, err := principal(ctx, cardflow.ScopeAdmin)
	if err != nil {
		return nil, err
	}
	return s.store.ListConversations(ctx, p.OrganizationID)
}

// RemoveConversation removes one of the caller's organization's
// conversations (admin scope); its workflows' cards then fail to post
// there, and clicks on cards already there answer nothing.
func (s *Conversations) RemoveConversation(ctx context.Context, conversationID string) error {
	p, err := principal(ctx, cardflow.ScopeAdmin)
	if err != nil {
		return err
	}
	if conversationID == "" {
		return cardflow.Errorf(cardflow.EINVALID, "conversation_id is required")
	}
	return s.store.DeleteConversation(ctx, p.OrganizationID, conversationID)
}
