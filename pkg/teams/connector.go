package teams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Bot Framework defaults.
const (
	// DefaultTokenURL issues tokens to multi-tenant bots; a single-tenant
	// bot uses https://login.microsoftonline.com/<tenant id>/oauth2/v2.0/token.
	DefaultTokenURL = "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token"
	// BotScope is the scope a bot asks for to call the Bot Connector.
	BotScope = "https://api.botframework.com/.default"
)

// DefaultServiceHosts are the hosts a conversation's service URL may name:
// the bearer token goes there, so it must be Microsoft's Bot Connector.
// An entry with a leading dot matches every subdomain.
var DefaultServiceHosts = []string{"smba.trafficmanager.net", ".botframework.com", ".teams.microsoft.com"}

// tokenMargin renews a token this long before it expires.
const tokenMargin = 5 * time.Minute

// TokenSource gets the bot's access tokens with the OAuth2 client
// credentials grant and keeps each until shortly before it expires.
type TokenSource struct {
	url, appID, secret string
	secrets            Secrets
	client             *http.Client
	now                func() time.Time

	mu      sync.Mutex
	token   string
	expires time.Time
}

// NewTokenSource returns a token source for the bot appID whose client
// secret is the secret named secretName.
func NewTokenSource(tokenURL, appID, secretName string, secrets Secrets, client *http.Client, now func() time.Time) (*TokenSource, error) {
	if tokenURL == "" {
		tokenURL = DefaultTokenURL
	}
	if appID == "" || secretName == "" || secrets == nil || client == nil || now == nil {
		return nil, errors.New("teams: a token source needs the app id, the name of its secret, secrets, an HTTP client and a clock")
	}
	return &TokenSource{url: tokenURL, appID: appID, secret: secretName, secrets: secrets, client: client, now: now}, nil
}

// Token returns a valid access token.
func (t *TokenSource) Token(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token != "" && t.now().Before(t.expires.Add(-tokenMargin)) {
		return t.token, nil
	}
	secret, err := t.secrets.Secret(ctx, t.secret)
	if err != nil {
		return "", err
	}
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {t.appID},
		"client_secret": {secret},
		"scope":         {BotScope},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, strings.NewReader(form.Encode()))
	if err != nil {
		return "", errors.New("teams: the token URL is not a URL")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	status, body, err := do(t.client, req)
	if err != nil {
		return "", fmt.Errorf("the bot's token request: %w", err)
	}
	if status != http.StatusOK {
		return "", replyError("the bot's token endpoint", status, body)
	}
	var r struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.AccessToken == "" || r.ExpiresIn <= 0 {
		return "", errors.New("the bot's token endpoint answered without access_token and expires_in")
	}
	t.token, t.expires = r.AccessToken, t.now().Add(time.Duration(r.ExpiresIn)*time.Second)
	return t.token, nil
}

// Conversation is a stored conversation reference: where a bot posts
// proactively.
type Conversation struct {
	ServiceURL     string
	ConversationID string
	TenantID       string
}

// Connector sends and updates activities through the Bot Connector REST API.
type Connector struct {
	tokens *TokenSource
	client *http.Client
	hosts  []string
}

// NewConnector returns a connector that authenticates with tokens and only
// talks to service URLs on hosts (DefaultServiceHosts when empty).
func NewConnector(tokens *TokenSource, client *http.Client, hosts []string) (*Connector, error) {
	if tokens == nil || client == nil {
		return nil, errors.New("teams: a connector needs a token source and an HTTP client")
	}
	if len(hosts) == 0 {
		hosts = DefaultServiceHosts
	}
	return &Connector{tokens: tokens, client: client, hosts: hosts}, nil
}

// activitiesURL checks the service URL and returns the conversation's
// activities URL.
func (c *Connector) activitiesURL(serviceURL, conversationID string) (string, error) {
	u, err := url.Parse(serviceURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return "", cardflow.Errorf(cardflow.EINVALID, "the service URL %q is not an https URL", serviceURL)
	}
	if !hostAllowed(u.Hostname(), c.hosts) {
		return "", cardflow.Errorf(cardflow.EINVALID, "the service URL's host %s is not a Bot Connector host this deployment allows (%s)", u.Hostname(), strings.Join(c.hosts, ", "))
	}
	return strings.TrimRight(u.String(), "/") + "/v3/conversations/" + url.PathEscape(conversationID) + "/activities", nil
}

func hostAllowed(host string, hosts []string) bool {
	host = strings.ToLower(host)
	for _, h := range hosts {
		h = strings.ToLower(h)
		if host == h || (strings.HasPrefix(h, ".") && strings.HasSuffix(host, h)) {
			return true
		}
	}
	return false
}

// cardActivity is a message activity carrying one adaptive card.
func cardActivity(conv Conversation, card map[string]any) map[string]any {
	a := map[string]any{
		"type":        "message",
		"attachments": []any{map[string]any{"contentType": ContentType, "content": card}},
	}
	if conv.TenantID != "" {
		a["conversation"] = map[string]any{"id": conv.ConversationID, "tenantId": conv.TenantID}
		a["channelData"] = map[string]any{"tenant": map[string]any{"id": conv.TenantID}}
	}
	return a
}

// Send posts card into the conversation and returns the new activity's id.
func (c *Connector) Send(ctx context.Context, conv Conversation, card map[string]any) (string, error) {
	target, err := c.activitiesURL(conv.ServiceURL, conv.ConversationID)
	if err != nil {
		return "", err
	}
	body, err := c.call(ctx, http.MethodPost, target, cardActivity(conv, card))
	if err != nil {
		return "", err
	}
	var r struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &r) // the id is optional: without one the card cannot be updated
	return r.ID, nil
}

// Update replaces the card of an activity the bot sent earlier.
func (c *Connector) Update(ctx context.Context, conv Conversation, activityID string, card map[string]any) error {
	target, err := c.activitiesURL(conv.ServiceURL, conv.ConversationID)
	if err != nil {
		return err
	}
	a := cardActivity(conv, card)
	a["id"] = activityID
	_, err = c.call(ctx, http.MethodPut, target+"/"+url.PathEscape(activityID), a)
	return err
}

func (c *Connector) call(ctx context.Context, method, target string, activity map[string]any) ([]byte, error) {
	token, err := c.tokens.Token(ctx)
	if err != nil {
		return nil, err
	}
	status, body, err := send(ctx, c.client, method, target, http.Header{"Authorization": {"Bearer " + token}}, activity)
	if err != nil {
		return nil, fmt.Errorf("the Bot Connector: %w", err)
	}
	return body, replyError("the Bot Connector", status, body)
}
