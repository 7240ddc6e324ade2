package cardflow

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
)

// How a Teams conversation came to be registered for its organization.
const (
	// ConversationByAdmin: an admin of the organization registered it.
	ConversationByAdmin = "admin"
	// ConversationByInstallation: the bot was installed there (a
	// conversationUpdate or installationUpdate activity) by someone of an
	// Entra tenant the deployment maps to the organization.
	ConversationByInstallation = "installation"
	// ConversationByFirstContact: someone of such a tenant wrote to the bot
	// or clicked a card there before it was registered otherwise.
	ConversationByFirstContact = "first_contact"
)

// maxConversationIDRunes bounds a conversation id, whose UTF-8 also fits
// a DynamoDB key (2048 bytes); Teams ids are well under it.
const maxConversationIDRunes = 512

// TeamsConversation is a Teams conversation registered for one
// organization: the bot posts its workflows' cards there and nobody
// else's, and a click there answers its executions and nobody else's
// (docs/DECISIONS.md, Microsoft Teams: "Which organization a
// conversation belongs to").
type TeamsConversation struct {
	OrganizationID string `json:"organization_id"`
	ConversationID string `json:"conversation_id"`
	ServiceURL     string `json:"service_url,omitempty"`
	TenantID       string `json:"tenant_id,omitempty"`
	// Kind is Teams' conversationType: personal, groupChat or channel;
	// "" when not known.
	Kind string `json:"kind,omitempty"`
	// Source is how it was registered (ConversationByAdmin, ...).
	Source       string `json:"source"`
	RegisteredBy string `json:"registered_by,omitempty"`
	RegisteredOn int64  `json:"registered_on"`
}

// Validate checks what a store keys and an admin gives, as openapi.yaml
// describes it.
func (c *TeamsConversation) Validate() error {
	id := c.ConversationID
	switch {
	case c.OrganizationID == "":
		return Errorf(EINVALID, "a conversation needs an organization")
	case id == "":
		return Errorf(EINVALID, "conversation_id is required: the id of the chat or channel conversation, as the bot's log shows it (e.g. 19:...@thread.tacv2)")
	case !ValidConversationID(id):
		return Errorf(EINVALID, "conversation_id is not a Teams conversation id (at most %d characters, no spaces around it, no control characters)", maxConversationIDRunes)
	case utf8.RuneCountInString(c.TenantID) > 128 || utf8.RuneCountInString(c.Kind) > 64:
		return Errorf(EINVALID, "tenant_id (at most 128 characters) or kind (at most 64) is too long")
	}
	if u := c.ServiceURL; u != "" && (!strings.HasPrefix(u, "https://") || len(u) == len("https://") || utf8.RuneCountInString(u) > 2048 || strings.Contains(u, " ") || hasControl(u)) {
		return Errorf(EINVALID, "service_url must be the https serviceUrl of the conversation, e.g. https://smba.trafficmanager.net/emea/")
	}
	return nil
}

// ValidConversationID reports whether id can be a registered
// conversation's: stores answer ENOTFOUND for any other without asking
// their backend, which may refuse a key that long.
func ValidConversationID(id string) bool {
	return id != "" && utf8.RuneCountInString(id) <= maxConversationIDRunes && utf8.ValidString(id) && !hasControl(id) &&
		id[0] != ' ' && id[len(id)-1] != ' '
}

// hasControl reports whether s holds an ASCII control character.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// ConversationStore keeps which organization each Teams conversation
// belongs to. A conversation belongs to one organization at most.
// Adapters of Store implement it; the contract suite covers it.
type ConversationStore interface {
	// RegisterConversation stores c. Registering a conversation its
	// organization has already replaces the record; ECONFLICT when another
	// organization has it.
	RegisterConversation(ctx context.Context, c *TeamsConversation) error
	// GetConversation returns org's conversation; ENOTFOUND when org has
	// none by that id, whether or not another organization has it.
	GetConversation(ctx context.Context, org, conversationID string) (*TeamsConversation, error)
	// FindConversation returns the conversation whichever organization
	// has it; ENOTFOUND when none does. Only the bot's messaging endpoint
	// asks, to learn whose a conversation is.
	FindConversation(ctx context.Context, conversationID string) (*TeamsConversation, error)
	// ListConversations lists org's conversations by conversation id.
	ListConversations(ctx context.Context, org string) ([]*TeamsConversation, error)
	// DeleteConversation removes org's conversation; ENOTFOUND as
	// GetConversation.
	DeleteConversation(ctx context.Context, org, conversationID string) error
}

// ConversationNotFound is the error of a conversation org does not have.
func ConversationNotFound(conversationID string) error {
	return Errorf(ENOTFOUND, "conversation %q is not registered for this organization", conversationID)
}

// ConversationTaken is the error of registering a conversation another
// organization has.
func ConversationTaken(conversationID string) error {
	return Errorf(ECONFLICT, "conversation %q is registered for another organization; a conversation belongs to one organization", conversationID)
}

// BotConversationOf returns the conversation a delivery profile posts to
// as the bot, "" when it posts none.
func BotConversationOf(profile map[string]any) string {
	if t, _ := profile["type"].(string); t != DeliveryBot {
		return ""
	}
	// Exactly as the bot posts to it: an id with spaces around it is not
	// the registered one.
	id, _ := profile["conversation_id"].(string)
	return id
}

// GuardConversations returns d, which refuses, posting nothing, a bot
// delivery into a conversation not registered for the delivery's
// organization. It keeps d's CardPoster, ApprovalCardUpdater and
// ApprovalAnnouncer.
func GuardConversations(store ConversationStore, d Deliverer) Deliverer {
	if _, ok := d.(*guarded); ok {
		return d
	}
	return &guarded{store: store, next: d}
}

type guarded struct {
	store ConversationStore
	next  Deliverer
}

func (g *guarded) check(ctx context.Context, d *Delivery) error {
	id := BotConversationOf(d.Teams)
	if id == "" {
		return nil
	}
	_, err := g.store.GetConversation(ctx, d.OrganizationID, id)
	if ErrorCode(err) == ENOTFOUND {
		// EINVALID: the step fails with this reason instead of retrying.
		return Errorf(EINVALID, "the bot posts only into conversations registered for the workflow's organization, and conversation %q is not one of them (install the bot there, or POST /v1/teams/registerConversation)", id)
	}
	return err
}

func (g *guarded) Deliver(ctx context.Context, d *Delivery) error {
	if err := g.check(ctx, d); err != nil {
		return err
	}
	return g.next.Deliver(ctx, d)
}

func (g *guarded) DeliverPosted(ctx context.Context, d *Delivery) (*BotPost, error) {
	if err := g.check(ctx, d); err != nil {
		return nil, err
	}
	if p, ok := g.next.(CardPoster); ok {
		return p.DeliverPosted(ctx, d)
	}
	return nil, g.next.Deliver(ctx, d)
}

// AnnounceApproval passes on: an announcement goes to a webhook, never
// into a bot conversation.
func (g *guarded) AnnounceApproval(ctx context.Context, a *Approval) error {
	if an, ok := g.next.(ApprovalAnnouncer); ok {
		return an.AnnounceApproval(ctx, a)
	}
	return nil
}

func (g *guarded) UpdateApprovalCards(ctx context.Context, a *Approval) error {
	if u, ok := g.next.(ApprovalCardUpdater); ok {
		return u.UpdateApprovalCards(ctx, a)
	}
	return nil
}

// BotConversations returns where w's card deliveries post as the bot:
// each conversation id with the first place that names it, in definition
// order.
func (w *Workflow) BotConversations() []NamedConversation {
	var out []NamedConversation
	seen := map[string]bool{}
	add := func(id, where string) {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, NamedConversation{ConversationID: id, Where: where})
		}
	}
	add(BotConversationOf(TeamsProfile(w.WorkflowIntegrations, nil)), "workflow_integrations.teams")
	for i, s := range w.WorkflowSteps {
		if d, ok := s.Config["delivery"].(map[string]any); ok {
			add(BotConversationOf(TeamsProfile(w.WorkflowIntegrations, d)), fmt.Sprintf("workflow_steps[%d] (id %q) config.delivery", i, s.ID))
		}
	}
	return out
}

// NamedConversation is a conversation a workflow names, and where.
type NamedConversation struct {
	ConversationID string
	Where          string
}
