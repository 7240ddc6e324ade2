package cardflow

// CardAnswer is an answer to a delivered card that arrives without an API
// key: through the Teams bot or by a response link. A reference this
// service signed into the card names the organization and the wait, so the
// answer reaches no other.
type CardAnswer struct {
	OrganizationID string
	ProcessID      string
	ExecutionID    string
	// Wait is the sequence number of the wait the card was sent for.
	Wait int
	// Actor is who answered, as the Resume records it.
	Actor string
	// Identities are the ids the channel vouches for (an Entra ID object
	// id, a UPN), which an approval matches against its approvers.
	Identities []string
	// Payload is the answer: the submitted data or the link's choice. Its
	// "responder" object says who answered; its name, when there is one,
	// names them (see Resume.Responder).
	Payload map[string]any
	// Label is what the person chose as the card put it (a response
	// link's button title); empty when unknown.
	Label string
}

// BotActivity is an activity the Teams bot received, checked to come
// through the Bot Connector.
type BotActivity struct {
	// Type is the activity's type, e.g. message or invoke.
	Type string
	// Conversation is where it was sent: what a bot delivery profile names.
	Conversation BotConversation
	// ConversationKind is Teams' conversationType (personal, groupChat,
	// channel); "" when the activity does not say.
	ConversationKind string
	// ReplyToID is the activity it replies to: for an answer by
	// Action.Submit, the bot's card, which the decision then replaces.
	ReplyToID string
	// Answer is the card answer it carries; nil for an activity that
	// answers no card (the bot installed, a chat message).
	Answer *CardAnswer
	// ReplyWithCard is set when the activity expects the decision card in
	// its reply (Action.Execute) rather than in place of the card.
	ReplyWithCard bool
}

// BotConversation is a conversation of the Teams bot: the Bot Connector
// that reaches it and its ids.
type BotConversation struct {
	ServiceURL     string
	ConversationID string
	TenantID       string
}

// CardOutcome is what an answered card came to, for the card that
// replaces it.
type CardOutcome struct {
	// Title names the request, e.g. the card step's name.
	Title string
	// Decision is the answer that claimed the wait; nil when it timed out
	// or closed unanswered.
	Decision *Resume
	TimedOut bool
	// Note says why a card without a decision is closed.
	Note string
}

// Responder names who gave an answer: the name of its payload's
// responder (Teams sends one), else the actor.
func (r *Resume) Responder() string {
	payload, _ := r.Payload.(map[string]any)
	who, _ := payload["responder"].(map[string]any)
	if name, _ := who["name"].(string); name != "" {
		return name
	}
	return r.Actor
}
