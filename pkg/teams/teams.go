// Package teams delivers adaptive cards to Microsoft Teams and reads the
// answers that come back. A card step's delivery profile (see
// cardflow.TeamsProfile) picks the way: a Teams Workflows webhook, whose
// buttons become signed single-use response links, or the deployment's Bot
// Framework bot, which posts into a stored conversation and receives
// Action.Execute and Action.Submit at its messaging endpoint.
package teams

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Secrets resolves secret references by name within one namespace.
type Secrets interface {
	Secret(ctx context.Context, name string) (string, error)
}

// OrganizationSecrets returns the secrets an organization's workflows may
// name (pkg/secrets ForOrganization): a webhook_secret is looked up there,
// never among the deployment's own secrets or another organization's.
type OrganizationSecrets func(organizationID string) Secrets

// configured turns a secret that is not set into EINVALID: a
// card step naming it fails with that message instead of being retried,
// while a secret store that cannot be reached stays worth a retry.
type configured struct{ Secrets }

func (c configured) Secret(ctx context.Context, name string) (string, error) {
	v, err := c.Secrets.Secret(ctx, name)
	var nf interface{ NotFound() bool }
	if err != nil && errors.As(err, &nf) && nf.NotFound() && cardflow.ErrorCode(err) == cardflow.EINTERNAL {
		return "", cardflow.Errorf(cardflow.EINVALID, "%v", err)
	}
	return v, err
}

// Config is a deployment's Teams setup. Everything is optional: without a
// signing secret there are no response links and no bot answers; without an
// app id there is no bot.
type Config struct {
	// PublicURL is where people reach this service, e.g.
	// https://cardflow.example.com; response links start with it.
	PublicURL string
	// SigningSecret names the deployment's secret holding the key (at
	// least 32 characters) that signs response links and bot action data.
	SigningSecret string
	// LinkTTL is how long a response link works (default 14 days).
	LinkTTL time.Duration

	// AppID is the bot's Microsoft app id; AppSecret names the
	// deployment's secret holding its client secret.
	AppID, AppSecret string
	// TokenURL is the OAuth2 token endpoint (default DefaultTokenURL).
	TokenURL string
	// OpenIDMetadataURL and Issuer check incoming tokens (defaults
	// DefaultOpenIDMetadataURL and DefaultIssuer).
	OpenIDMetadataURL, Issuer string
	// ServiceHosts are the Bot Connector hosts a conversation may name
	// (default DefaultServiceHosts).
	ServiceHosts []string
}

// DefaultLinkTTL is how long a response link works unless configured.
const DefaultLinkTTL = 14 * 24 * time.Hour

// minKeyBytes is the shortest signing key accepted.
const minKeyBytes = 32

// Integration is a deployment's Teams integration: a cardflow.Deliverer,
// and what the answer use cases of pkg/app need to check what comes back
// and to show the decision (their ActivityVerifier, CardReplier and
// LinkVerifier).
type Integration struct {
	cfg           Config
	fallback      cardflow.Deliverer
	secrets       Secrets // the deployment's
	organizations OrganizationSecrets
	webhook       *Webhook
	connector     *Connector
	verifier      *Verifier
	now           func() time.Time
}

// Option configures an Integration.
type Option func(*options)

type options struct {
	client *http.Client
	now    func() time.Time
}

// WithHTTPClient sets the client of every outbound call (webhooks, tokens,
// Bot Connector, signing keys).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.client = c } }

// WithClock replaces the wall clock.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// New returns the integration. Deliveries whose profile is the outbox go to
// fallback. The signing key and the bot's client secret are read from
// deployment, the deployment's own secrets; a webhook's URL from the
// secrets of the delivery's organization.
func New(cfg Config, fallback cardflow.Deliverer, deployment Secrets, organizations OrganizationSecrets, opts ...Option) (*Integration, error) {
	o := options{client: &http.Client{Timeout: 30 * time.Second}, now: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	if fallback == nil || deployment == nil || organizations == nil {
		return nil, errors.New("teams: a fallback deliverer, the deployment's secrets and the organizations' secrets are required")
	}
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, errors.New("teams: the public URL must be an http or https URL such as https://cardflow.example.com")
		}
		cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	}
	if cfg.LinkTTL <= 0 {
		cfg.LinkTTL = DefaultLinkTTL
	}
	src := configured{deployment}
	in := &Integration{cfg: cfg, fallback: fallback, secrets: src, organizations: organizations, now: o.now}
	var err error
	if in.webhook, err = NewWebhook(o.client); err != nil {
		return nil, err
	}
	if cfg.AppID != "" {
		if cfg.AppSecret == "" || cfg.SigningSecret == "" {
			return nil, errors.New("teams: a bot needs its app secret and a signing secret")
		}
		tokens, err := NewTokenSource(cfg.TokenURL, cfg.AppID, cfg.AppSecret, src, o.client, o.now)
		if err != nil {
			return nil, err
		}
		if in.connector, err = NewConnector(tokens, o.client, cfg.ServiceHosts); err != nil {
			return nil, err
		}
		if in.verifier, err = NewVerifier(cfg.OpenIDMetadataURL, cfg.Issuer, cfg.AppID, o.client, o.now); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// HasBot reports whether a bot is configured (POST /v1/teams/messages).
func (in *Integration) HasBot() bool { return in.verifier != nil }

// HasLinks reports whether response links can be checked
// (GET /v1/teams/respond).
func (in *Integration) HasLinks() bool { return in.cfg.SigningSecret != "" }

// SigningKey returns the key that signs links and action data.
func (in *Integration) SigningKey(ctx context.Context) ([]byte, error) {
	if in.cfg.SigningSecret == "" {
		return nil, cardflow.Errorf(cardflow.EINVALID, "this deployment has no Teams signing secret (cardflow serve --teams-signing-secret)")
	}
	k, err := in.secrets.Secret(ctx, in.cfg.SigningSecret)
	if err != nil {
		return nil, err
	}
	if len(k) < minKeyBytes {
		return nil, cardflow.Errorf(cardflow.EINVALID, "the Teams signing secret %q holds fewer than %d characters", in.cfg.SigningSecret, minKeyBytes)
	}
	return []byte(k), nil
}

// Verify checks the Authorization header of a Bot Connector request.
func (in *Integration) Verify(ctx context.Context, authorization string) (*Claims, error) {
	if in.verifier == nil {
		return nil, cardflow.Errorf(cardflow.ENOTFOUND, "this deployment has no Teams bot")
	}
	return in.verifier.Verify(ctx, authorization)
}

// Deliver implements cardflow.Deliverer: it sends the card the way the
// delivery's profile says.
func (in *Integration) Deliver(ctx context.Context, d *cardflow.Delivery) error {
	_, err := in.DeliverPosted(ctx, d)
	return err
}

// DeliverPosted implements cardflow.CardPoster: Deliver that says where
// the bot posted the card (nil for the other ways).
func (in *Integration) DeliverPosted(ctx context.Context, d *cardflow.Delivery) (*cardflow.BotPost, error) {
	p := func(k string) string { s, _ := d.Teams[k].(string); return s }
	ref := Ref{OrganizationID: d.OrganizationID, ProcessID: d.ProcessID, ExecutionID: d.ExecutionID, Wait: d.Wait, Who: d.Approver}
	if d.RequestedBy != "" {
		c := *d
		c.CardPayload = WithNote(d.CardPayload, "Requested by "+d.RequestedBy)
		d = &c
	}
	switch p("type") {
	case "", cardflow.DeliveryOutbox:
		// The outbox is readable by the organization's keys, so its copies
		// carry no personal links (IssueApprovalLinks gives them to an
		// admin who asks).
		return nil, in.fallback.Deliver(ctx, d)
	case cardflow.DeliveryWebhook:
		name := p("webhook_secret")
		if d.ApprovalID != "" {
			// An approver's copy carries links that answer as them: only
			// their own webhook takes it.
			var err error
			if name, err = cardflow.ApproverWebhook(d.Teams, d.Approver); err != nil {
				return nil, err
			}
		}
		target, err := configured{in.organizations(d.OrganizationID)}.Secret(ctx, name)
		if err != nil {
			return nil, err
		}
		card, err := in.linkCard(ctx, d.CardPayload, ref)
		if err != nil {
			return nil, err
		}
		return nil, in.webhook.Post(ctx, target, card)
	case cardflow.DeliveryBot:
		if in.connector == nil {
			return nil, cardflow.Errorf(cardflow.EINVALID, "the card step delivers by bot, but this deployment has no Teams bot (cardflow serve --teams-app-id)")
		}
		key, err := in.SigningKey(ctx)
		if err != nil {
			return nil, err
		}
		card, err := WithActionData(d.CardPayload, func(o Offer) (string, error) { return SignAction(key, ref, o) })
		if err != nil {
			return nil, err
		}
		conv := Conversation{ServiceURL: p("service_url"), ConversationID: p("conversation_id"), TenantID: p("tenant_id")}
		id, err := in.connector.Send(ctx, conv, card)
		if err != nil || id == "" {
			return nil, err
		}
		return &cardflow.BotPost{ServiceURL: conv.ServiceURL, ConversationID: conv.ConversationID, TenantID: conv.TenantID, ActivityID: id}, nil
	}
	return nil, cardflow.Errorf(cardflow.EINVALID, "unknown delivery type %q", p("type"))
}

// AnnounceApproval implements cardflow.ApprovalAnnouncer: under a webhook
// profile with a shared webhook_secret, the approval's card goes there
// once, without its buttons, with a line saying who answers and where. The
// approvers' own copies, with their personal links, go to their own
// webhooks.
func (in *Integration) AnnounceApproval(ctx context.Context, a *cardflow.Approval) error {
	p := func(k string) string { s, _ := a.Teams[k].(string); return strings.TrimSpace(s) }
	if p("type") != cardflow.DeliveryWebhook || p("webhook_secret") == "" {
		return nil
	}
	target, err := configured{in.organizations(a.OrganizationID)}.Secret(ctx, p("webhook_secret"))
	if err != nil {
		return err
	}
	return in.webhook.Post(ctx, target, Announcement(a.CardPayload, a.Approvers))
}

// linkCard turns the card's buttons into response links.
func (in *Integration) linkCard(ctx context.Context, card map[string]any, ref Ref) (map[string]any, error) {
	return in.linkCardSeen(ctx, card, ref, func(string, string) {})
}

// linkCardSeen is linkCard that shows seen each link it makes.
func (in *Integration) linkCardSeen(ctx context.Context, card map[string]any, ref Ref, seen func(title, url string)) (map[string]any, error) {
	var key []byte
	return WithResponseLinks(card, func(choice any, title string) (string, error) {
		if in.cfg.PublicURL == "" {
			return "", cardflow.Errorf(cardflow.EINVALID, "the card has buttons, and a webhook delivery turns them into response links, but this deployment has no public URL (cardflow serve --public-url)")
		}
		if key == nil {
			k, err := in.SigningKey(ctx)
			if err != nil {
				return "", err
			}
			key = k
		}
		r := ref
		r.Choice, r.Title, r.Expires = choice, title, in.now().Add(in.cfg.LinkTTL).Unix()
		token, err := SignLink(key, r)
		if err != nil {
			return "", err
		}
		u := in.cfg.PublicURL + "/v1/teams/respond?token=" + token
		seen(title, u)
		return u, nil
	})
}

// UpdateApprovalCards implements cardflow.ApprovalCardUpdater: every bot
// message carrying a copy of the finished approval's card gets the card
// that shows how it ended, without buttons. It tries every copy and
// returns the first failure.
func (in *Integration) UpdateApprovalCards(ctx context.Context, a *cardflow.Approval) error {
	if in.connector == nil || len(a.Posts) == 0 {
		return nil
	}
	card := DecisionCard(cardflow.CardOutcome{Title: a.StepName, Note: a.EndNote()})
	var first error
	for _, p := range a.Posts {
		err := in.connector.Update(ctx, Conversation{ServiceURL: p.ServiceURL, ConversationID: p.ConversationID, TenantID: p.TenantID}, p.ActivityID, card)
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// IssueApprovalLinks returns approver's personal response links to the
// approval's card, one per button, as the copy sent to them carries (app's
// LinkIssuer).
func (in *Integration) IssueApprovalLinks(ctx context.Context, a *cardflow.Approval, approver string) ([]cardflow.DeliveryLink, error) {
	ref := Ref{OrganizationID: a.OrganizationID, ProcessID: a.ProcessID, ExecutionID: a.ExecutionID, Wait: a.Wait, Who: approver}
	links := []cardflow.DeliveryLink{}
	_, err := in.linkCardSeen(ctx, a.CardPayload, ref, func(title, u string) { links = append(links, cardflow.DeliveryLink{Title: title, URL: u}) })
	return links, err
}

// VerifyResponseLink reads the answer of a response link's token: the
// button's choice, answered through the link (app's LinkVerifier).
func (in *Integration) VerifyResponseLink(ctx context.Context, token string) (*cardflow.CardAnswer, error) {
	key, err := in.SigningKey(ctx)
	if err != nil {
		return nil, err
	}
	ref, err := VerifyLink(key, token, in.now())
	if err != nil {
		return nil, err
	}
	payload, _ := ref.Choice.(map[string]any)
	if payload == nil {
		payload = map[string]any{}
		if ref.Choice != nil {
			payload["choice"] = ref.Choice
		}
	}
	payload["responder"] = map[string]any{"via": "response link"}
	a := &cardflow.CardAnswer{
		OrganizationID: ref.OrganizationID, ProcessID: ref.ProcessID, ExecutionID: ref.ExecutionID, Wait: ref.Wait,
		Actor: "teams:response-link", Payload: payload, Label: ref.Title,
	}
	if ref.Who != "" {
		// A personal link: the signature vouches that it was sent to this
		// approver alone.
		a.Actor, a.Identities = ref.Who, []string{ref.Who}
		payload["responder"] = map[string]any{"via": "response link", "name": ref.Who}
	}
	return a, nil
}

// ConfirmResponseLink returns the token the confirmation form of a
// response link posts (app's LinkVerifier).
func (in *Integration) ConfirmResponseLink(ctx context.Context, token string) (string, error) {
	key, err := in.SigningKey(ctx)
	if err != nil {
		return "", err
	}
	return SignConfirmation(key, token), nil
}

// VerifyConfirmation checks the token a response link's confirmation form
// posted with the link's token (app's LinkVerifier).
func (in *Integration) VerifyConfirmation(ctx context.Context, token, confirmation string) error {
	key, err := in.SigningKey(ctx)
	if err != nil {
		return err
	}
	return VerifyConfirmation(key, token, confirmation)
}
