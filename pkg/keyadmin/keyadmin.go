// Package keyadmin lets the cardflow CLI manage API keys while a local
// server holds the embedded store open: the server serves key management on
// a unix socket in its data directory, whose file permissions stand for the
// operator's access to the data itself.
package keyadmin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Manager creates, lists and revokes API keys, and sets the
// organizations' limits. *app.Service is one.
type Manager interface {
	CreateKey(ctx context.Context, in app.CreateKeyInput) (string, *cardflow.APIKey, error)
	ListKeys(ctx context.Context, org string) ([]*cardflow.APIKey, error)
	RevokeKey(ctx context.Context, keyID string) (*cardflow.APIKey, error)
	LimitsManager
}

type createRequest struct {
	OrganizationID string   `json:"organization_id"`
	WorkspaceID    string   `json:"workspace_id"`
	Scopes         []string `json:"scopes"`
	Name           string   `json:"name"`
	Person         string   `json:"person,omitempty"`
}

type createResponse struct {
	Key    string           `json:"key"`
	Record *cardflow.APIKey `json:"record"`
}

type revokeRequest struct {
	KeyID string `json:"key_id"`
}

type errorResponse struct {
	Message string `json:"message"`
	Code    string `json:"code"`
}

// Handler serves m for Client.
func Handler(m Manager) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /keys", func(w http.ResponseWriter, r *http.Request) {
		var in createRequest
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			reply(w, nil, cardflow.Errorf(cardflow.EINVALID, "bad request: %v", err))
			return
		}
		key, rec, err := m.CreateKey(r.Context(), app.CreateKeyInput{OrganizationID: in.OrganizationID, WorkspaceID: in.WorkspaceID, Scopes: in.Scopes, Name: in.Name, Person: in.Person})
		reply(w, createResponse{Key: key, Record: rec}, err)
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		keys, err := m.ListKeys(r.Context(), r.URL.Query().Get("org"))
		reply(w, keys, err)
	})
	mux.HandleFunc("POST /keys/revoke", func(w http.ResponseWriter, r *http.Request) {
		var in revokeRequest
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			reply(w, nil, cardflow.Errorf(cardflow.EINVALID, "bad request: %v", err))
			return
		}
		rec, err := m.RevokeKey(r.Context(), in.KeyID)
		reply(w, rec, err)
	})
	if wm, ok := m.(WebhookManager); ok {
		webhookRoutes(mux, wm)
	}
	limitRoutes(mux, m)
	return mux
}

func reply(w http.ResponseWriter, v any, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(errorResponse{Message: cardflow.ErrorMessage(err), Code: cardflow.ErrorCode(err)})
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

// Client is a Manager that talks to a Handler on a unix socket.
type Client struct {
	http *http.Client
}

// Dial connects to the socket at path. It fails when no server listens there.
func Dial(path string) (*Client, error) {
	conn, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return nil, err
	}
	conn.Close()
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
	return &Client{http: &http.Client{Transport: &http.Transport{DialContext: dial}, Timeout: 10 * time.Second}}, nil
}

// CreateKey implements Manager.
func (c *Client) CreateKey(ctx context.Context, in app.CreateKeyInput) (string, *cardflow.APIKey, error) {
	var out createResponse
	err := c.call(ctx, "POST", "/keys", createRequest{OrganizationID: in.OrganizationID, WorkspaceID: in.WorkspaceID, Scopes: in.Scopes, Name: in.Name, Person: in.Person}, &out)
	return out.Key, out.Record, err
}

// ListKeys implements Manager.
func (c *Client) ListKeys(ctx context.Context, org string) ([]*cardflow.APIKey, error) {
	var out []*cardflow.APIKey
	err := c.call(ctx, "GET", "/keys?org="+url.QueryEscape(org), nil, &out)
	return out, err
}

// RevokeKey implements Manager.
func (c *Client) RevokeKey(ctx context.Context, keyID string) (*cardflow.APIKey, error) {
	var out cardflow.APIKey
	if err := c.call(ctx, "POST", "/keys/revoke", revokeRequest{KeyID: keyID}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://cardflow"+path, body)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("keyadmin: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e errorResponse
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Code == "" {
			return errors.New("keyadmin: unexpected answer from the server: " + resp.Status)
		}
		return &cardflow.Error{Code: e.Code, Message: e.Message}
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
