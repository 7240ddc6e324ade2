package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/url"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// webhookSecretPrefix starts every webhook secret, so a leaked one is easy
// to recognise; the Standard Webhooks libraries read the key from the
// standard base64 after it.
const webhookSecretPrefix = "whsec_"

// MaxKeepPrevious bounds how long a rotated-out webhook secret goes on
// signing deliveries.
const MaxKeepPrevious = 7 * 24 * time.Hour

func newWebhookSecret() string {
	var secret [32]byte
	rand.Read(secret[:])
	return webhookSecretPrefix + base64.StdEncoding.EncodeToString(secret[:])
}

// AddWebhook configures a receiver of org's events (local mode). It
// returns the webhook with its signing secret, which is shown this once:
// lists never carry it. This is an operator action, not an API call.
func (s *Admin) AddWebhook(ctx context.Context, org, rawURL string) (*cardflow.Webhook, error) {
	org = strings.TrimSpace(org)
	if !tenantIDPattern.MatchString(org) {
		return nil, cardflow.Errorf(cardflow.EINVALID, "an organization id is required: 1 to 64 letters, digits, . _ or -, starting with a letter or digit")
	}
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, cardflow.Errorf(cardflow.EINVALID, "a webhook needs an http or https URL with a host and no user info")
	}
	now := s.now()
	w := &cardflow.Webhook{
		WebhookID: cardflow.NewID(now), OrganizationID: org, URL: u.String(),
		Secret: newWebhookSecret(), CreatedOn: now.UnixMilli(),
	}
	if err := s.store.CreateWebhook(ctx, w); err != nil {
		return nil, err
	}
	return w, nil
}

// ListWebhooks lists the webhooks of org, or of every organization when org
// is "", without their secrets.
func (s *Admin) ListWebhooks(ctx context.Context, org string) ([]*cardflow.Webhook, error) {
	list, err := s.store.ListWebhooks(ctx, strings.TrimSpace(org))
	if err != nil {
		return nil, err
	}
	out := make([]*cardflow.Webhook, len(list))
	for i, w := range list {
		out[i] = w.Redacted()
	}
	return out, nil
}

// RemoveWebhook removes a webhook of org, or of whichever organization has
// it when org is ""; its events stop at once. It returns the webhook
// removed, without its secret.
func (s *Admin) RemoveWebhook(ctx context.Context, org, webhookID string) (*cardflow.Webhook, error) {
	org, webhookID = strings.TrimSpace(org), strings.TrimSpace(webhookID)
	list, err := s.store.ListWebhooks(ctx, org)
	if err != nil {
		return nil, err
	}
	for _, w := range list {
		if w.WebhookID == webhookID {
			if err := s.store.DeleteWebhook(ctx, w.OrganizationID, w.WebhookID); err != nil {
				return nil, err
			}
			return w.Redacted(), nil
		}
	}
	return nil, cardflow.Errorf(cardflow.ENOTFOUND, "webhook %s not found", webhookID)
}

// RotateWebhook gives a webhook of org (or of whichever organization has it
// when org is "") a new signing secret, which it returns this once. For
// keepPrevious more, deliveries are signed with the old secret as well, so
// that the receiver can move to the new one without refusing any.
func (s *Admin) RotateWebhook(ctx context.Context, org, webhookID string, keepPrevious time.Duration) (*cardflow.Webhook, error) {
	if keepPrevious < 0 || keepPrevious > MaxKeepPrevious {
		return nil, cardflow.Errorf(cardflow.EINVALID, "the old secret may keep signing for 0 to %.0fh, not %s", MaxKeepPrevious.Hours(), keepPrevious)
	}
	org, webhookID = strings.TrimSpace(org), strings.TrimSpace(webhookID)
	list, err := s.store.ListWebhooks(ctx, org)
	if err != nil {
		return nil, err
	}
	for _, w := range list {
		if w.WebhookID == webhookID {
			rotated, err := s.store.RotateWebhookSecret(ctx, w.OrganizationID, w.WebhookID, newWebhookSecret(), s.now().Add(keepPrevious).UnixMilli())
			if err != nil {
				return nil, err
			}
			rotated.PreviousSecret = ""
			return rotated, nil
		}
	}
	return nil, cardflow.Errorf(cardflow.ENOTFOUND, "webhook %s not found", webhookID)
}
