package keyadmin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// LimitsManager sets the organizations' overrides of the default limits.
// *app.Service is one.
type LimitsManager interface {
	OrganizationLimits(ctx context.Context, org string) (*cardflow.Limits, error)
	SetLimits(ctx context.Context, l cardflow.Limits) (*cardflow.Limits, error)
	ClearLimits(ctx context.Context, org string) error
}

type clearLimitsRequest struct {
	OrganizationID string `json:"organization_id"`
}

// limitRoutes serves m's limits: the running server applies a change at
// once.
func limitRoutes(mux *http.ServeMux, m LimitsManager) {
	mux.HandleFunc("GET /limits", func(w http.ResponseWriter, r *http.Request) {
		l, err := m.OrganizationLimits(r.Context(), r.URL.Query().Get("org"))
		reply(w, l, err)
	})
	mux.HandleFunc("POST /limits", func(w http.ResponseWriter, r *http.Request) {
		var in cardflow.Limits
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			reply(w, nil, cardflow.Errorf(cardflow.EINVALID, "bad request: %v", err))
			return
		}
		l, err := m.SetLimits(r.Context(), in)
		reply(w, l, err)
	})
	mux.HandleFunc("POST /limits/clear", func(w http.ResponseWriter, r *http.Request) {
		var in clearLimitsRequest
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			reply(w, nil, cardflow.Errorf(cardflow.EINVALID, "bad request: %v", err))
			return
		}
		reply(w, struct{}{}, m.ClearLimits(r.Context(), in.OrganizationID))
	})
}

// OrganizationLimits implements LimitsManager.
func (c *Client) OrganizationLimits(ctx context.Context, org string) (*cardflow.Limits, error) {
	var out cardflow.Limits
	if err := c.call(ctx, "GET", "/limits?org="+url.QueryEscape(org), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetLimits implements LimitsManager.
func (c *Client) SetLimits(ctx context.Context, l cardflow.Limits) (*cardflow.Limits, error) {
	var out cardflow.Limits
	if err := c.call(ctx, "POST", "/limits", l, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ClearLimits implements LimitsManager.
func (c *Client) ClearLimits(ctx context.Context, org string) error {
	return c.call(ctx, "POST", "/limits/clear", clearLimitsRequest{OrganizationID: org}, &struct{}{})
}
