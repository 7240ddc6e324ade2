package keyadmin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// WebhookManager adds, lists, removes and rotates the secrets of the
// webhooks of local mode. *app.Service is one.
type WebhookManager interface {
	AddWebhook(ctx context.Context, org, url string) (*cardflow.Webhook, error)
	ListWebhooks(ctx context.Context, org string) ([]*cardflow.Webhook, error)
	RemoveWebhook(ctx context.Context, org, webhookID string) (*cardflow.Webhook, error)
	RotateWebhook(ctx context.Context, org, webhookID string, keepPrevious time.Duration) (*cardflow.Webhook, error)
}

// Admin is everything an administrator manages: what the admin socket's
// client and the service itself both do.
type Admin interface {
	Manager
	WebhookManager
}

type webhookRequest struct {
	OrganizationID string `json:"organization_id"`
	URL            string `json:"url,omitempty"`
	WebhookID      string `json:"webhook_id,omitempty"`
	// KeepPrevious is how long the old secret keeps signing after a
	// rotation, in nanoseconds.
	KeepPrevious time.Duration `json:"keep_previous,omitempty"`
}

// webhookRoutes serves m on mux for Client.
func webhookRoutes(mux *http.ServeMux, m WebhookManager) {
	mux.HandleFunc("POST /webhooks", func(w http.ResponseWriter, r *http.Request) {
		var in webhookRequest
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			reply(w, nil, cardflow.Errorf(cardflow.EINVALID, "bad request: %v", err))
			return
		}
		hook, err := m.AddWebhook(r.Context(), in.OrganizationID, in.URL)
		reply(w, hook, err)
	})
	mux.HandleFunc("GET /webhooks", func(w http.ResponseWriter, r *http.Request) {
		list, err := m.ListWebhooks(r.Context(), r.URL.Query().Get("org"))
		reply(w, list, err)
	})
	mux.HandleFunc("POST /webhooks/remove", func(w http.ResponseWriter, r *http.Request) {
		var in webhookRequest
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			reply(w, nil, cardflow.Errorf(cardflow.EINVALID, "bad request: %v", err))
			return
		}
		hook, err := m.RemoveWebhook(r.Context(), in.OrganizationID, in.WebhookID)
		reply(w, hook, err)
	})
	mux.HandleFunc("POST /webhooks/rotate", func(w http.ResponseWriter, r *http.Request) {
		var in webhookRequest
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			reply(w, nil, cardflow.Errorf(cardflow.EINVALID, "bad request: %v", err))
			return
		}
		hook, err := m.RotateWebhook(r.Context(), in.OrganizationID, in.WebhookID, in.KeepPrevious)
		reply(w, hook, err)
	})
}

// AddWebhook implements WebhookManager.
func (c *Client) AddWebhook(ctx context.Context, org, u string) (*cardflow.Webhook, error) {
	var out cardflow.Webhook
	if err := c.call(ctx, "POST", "/webhooks", webhookRequest{OrganizationID: org, URL: u}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListWebhooks implements WebhookManager.
func (c *Client) ListWebhooks(ctx context.Context, org string) ([]*cardflow.Webhook, error) {
	var out []*cardflow.Webhook
	err := c.call(ctx, "GET", "/webhooks?org="+url.QueryEscape(org), nil, &out)
	return out, err
}

// RemoveWebhook implements WebhookManager.
func (c *Client) RemoveWebhook(ctx context.Context, org, webhookID string) (*cardflow.Webhook, error) {
	var out cardflow.Webhook
	if err := c.call(ctx, "POST", "/webhooks/remove", webhookRequest{OrganizationID: org, WebhookID: webhookID}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RotateWebhook implements WebhookManager.
func (c *Client) RotateWebhook(ctx context.Context, org, webhookID string, keepPrevious time.Duration) (*cardflow.Webhook, error) {
	var out cardflow.Webhook
	if err := c.call(ctx, "POST", "/webhooks/rotate", webhookRequest{OrganizationID: org, WebhookID: webhookID, KeepPrevious: keepPrevious}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
