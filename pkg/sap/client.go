package sap

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"github.com/cardflow/cardflow/pkg/outbound"
)

// Secrets resolves secret references by name: those of the organization
// whose workflow calls (the engine's step call, over
// secrets.ForOrganization), never another's or the deployment's.
type Secrets interface {
	Secret(ctx context.Context, name string) (string, error)
}

// Client calls one SAP system for one step: it keeps the CSRF token and the
// session cookies that go with it, and the OAuth access token, for its own
// calls only. It is not safe for concurrent use.
type Client struct {
	p         *Profile
	hc        *http.Client
	secrets   Secrets
	maxBody   int64
	sensitive func(string)

	csrf  map[string]string // service root -> token, "" where the service issues none
	token string            // OAuth access token
}

// Option configures a Client.
type Option func(*Client)

// WithSensitive receives every credential the client sends (secret values,
// user:password pairs whose base64 form goes in headers, access and CSRF
// tokens), so the caller can keep them out of what it records.
func WithSensitive(f func(string)) Option { return func(c *Client) { c.sensitive = f } }

// New returns a client for profile p over hc (an outbound client; its
// transport is shared, the cookie jar is the client's own).
func New(p *Profile, hc *http.Client, secrets Secrets, opts ...Option) (*Client, error) {
	if p == nil || hc == nil || secrets == nil {
		return nil, errors.New("sap: profile, HTTP client and secrets are required")
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	own := *hc
	own.Jar = jar
	c := &Client{p: p, hc: &own, secrets: secrets, maxBody: outbound.DefaultMaxBody, sensitive: func(string) {}, csrf: map[string]string{}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Request is one OData call.
type Request struct {
	Method string
	// Service is the service root path, e.g.
	// /sap/opu/odata/sap/API_PURCHASEORDER_PROCESS_SRV; the CSRF token is
	// fetched there.
	Service string
	// Entity is the path under the service root, e.g.
	// A_PurchaseOrder('4500000001') or A_PurchaseOrder.
	Entity string
	Query  url.Values
	Body   any
	// Header holds extra headers, such as If-Match or Idempotency-Key.
	Header http.Header
}

// Response is SAP's answer.
type Response struct {
	Status int
	Header http.Header
	// Body is the decoded JSON body (or the text of another body).
	Body any
	// Result is Body without the OData envelope: V2's d or d.results,
	// V4's value of a collection.
	Result any
	// Pages is the number of pages DoAll read; 0 from Do.
	Pages int
}

// URL is the address of a request's resource, with sap-client.
func (c *Client) URL(r Request) (string, error) {
	service := "/" + strings.Trim(r.Service, "/")
	// An empty entity addresses the service document, service + "/".
	raw := c.p.BaseURL + service + "/" + strings.TrimLeft(r.Entity, "/")
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%s is not a URL: %v", raw, err)
	}
	q := u.Query()
	for k, vs := range r.Query {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	if c.p.Client != "" {
		q.Set("sap-client", c.p.Client)
	}
	// Spaces as %20, not +: OData's URL syntax has no + for a space, and
	// CAP refuses it ($filter=amount+gt+5 is a parse error there).
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String(), nil
}

func normalMethod(m string) string {
	if m == "" {
		return http.MethodGet
	}
	return strings.ToUpper(m)
}

// modifying methods need a CSRF token.
func modifying(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// Do makes the call. A status of 400 or more gives both the response and an
// *Error with OData's message.
func (c *Client) Do(ctx context.Context, r Request) (*Response, error) {
	r.Method = normalMethod(r.Method)
	target, err := c.URL(r)
	if err != nil {
		return nil, err
	}
	return c.do(ctx, r, target)
}

// do makes the call r to target, its URL or a next link.
func (c *Client) do(ctx context.Context, r Request, target string) (*Response, error) {
	var body []byte
	var err error
	if r.Body != nil {
		if body, err = json.Marshal(r.Body); err != nil {
			return nil, fmt.Errorf("body is not JSON: %v", err)
		}
	}
	auth, err := c.authorization(ctx)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		token := ""
		if modifying(r.Method) {
			if token, err = c.csrfToken(ctx, r.Service, auth); err != nil {
				return nil, err
			}
		}
		resp, err := c.send(ctx, r.Method, target, body, r.Header, auth, token)
		if err != nil {
			return nil, err
		}
		// A token that expired with its session is answered 403 with
		// "x-csrf-token: Required": fetch a new one, once.
		if resp.Status == http.StatusForbidden && token != "" && strings.EqualFold(resp.Header.Get("X-Csrf-Token"), "Required") && attempt == 0 {
			delete(c.csrf, r.Service)
			continue
		}
		if resp.Status >= 400 {
			return resp, c.odataError(r.Method, target, resp)
		}
		resp.Result = unwrap(c.p.ODataVersion, resp.Body)
		return resp, nil
	}
}

func (c *Client) send(ctx context.Context, method, target string, body []byte, extra http.Header, auth, csrf string) (*Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, err
	}
	for k, vs := range extra {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", auth)
	if csrf != "" {
		req.Header.Set("X-Csrf-Token", csrf)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", method, redactQuery(target), outbound.Reason(err))
	}
	defer resp.Body.Close()
	raw, err := outbound.ReadBody(resp.Body, c.maxBody)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", method, redactQuery(target), err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: decode(resp.Header.Get("Content-Type"), raw)}, nil
}

// redactQuery keeps error messages short: the path names the resource, and
// the step's input shows the whole URL.
func redactQuery(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}

func decode(contentType string, raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	if mt, _, _ := mime.ParseMediaType(contentType); strings.HasSuffix(mt, "json") {
		var v any
		if err := json.Unmarshal(raw, &v); err == nil {
			return v
		}
	}
	return string(raw)
}

// csrfToken returns the service's token, fetching it with a GET of the
// service root and "x-csrf-token: Fetch"; the cookie jar keeps the session
// the token belongs to.
func (c *Client) csrfToken(ctx context.Context, service, auth string) (string, error) {
	if t, fetched := c.csrf[service]; fetched {
		return t, nil
	}
	root, err := c.URL(Request{Service: service, Entity: ""})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("X-Csrf-Token", "Fetch")
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetching the CSRF token at %s: %v", redactQuery(root), outbound.Reason(err))
	}
	defer resp.Body.Close()
	raw, _ := outbound.ReadBody(resp.Body, c.maxBody)
	if resp.StatusCode >= 400 {
		r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: decode(resp.Header.Get("Content-Type"), raw)}
		return "", fmt.Errorf("fetching the CSRF token: %w", c.odataError(http.MethodGet, root, r))
	}
	t := resp.Header.Get("X-Csrf-Token")
	if strings.EqualFold(t, "Required") {
		return "", fmt.Errorf("fetching the CSRF token at %s: SAP sent no x-csrf-token", redactQuery(root))
	}
	// A service without CSRF protection (CAP on its own, or a Gateway
	// service with the check switched off) sends no token: the calls go
	// without one, and a 403 "Required" still says so if that was wrong.
	if t != "" {
		c.sensitive(t)
	}
	c.csrf[service] = t
	return t, nil
}

// authorization builds the Authorization header from the profile's secret.
func (c *Client) authorization(ctx context.Context) (string, error) {
	secret, err := c.secrets.Secret(ctx, c.p.Auth.Secret)
	if err != nil {
		return "", err
	}
	c.sensitive(secret)
	switch c.p.Auth.Type {
	case AuthBasic:
		user, pass, err := pair(secret, "username", "password", "user:password")
		if err != nil {
			return "", fmt.Errorf("secret %q: %v", c.p.Auth.Secret, err)
		}
		// The pair is sensitive too: the header carries its base64 form.
		c.sensitive(pass)
		c.sensitive(user + ":" + pass)
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)), nil
	case AuthOAuth2:
		if c.token == "" {
			if c.token, err = c.fetchToken(ctx, secret); err != nil {
				return "", err
			}
			c.sensitive(c.token)
		}
		return "Bearer " + c.token, nil
	}
	return "", fmt.Errorf("auth type %q is not basic or oauth2", c.p.Auth.Type)
}

// pair reads "a:b" or a JSON object with the two keys.
func pair(secret, k1, k2, shape string) (string, string, error) {
	if strings.HasPrefix(strings.TrimSpace(secret), "{") {
		var m map[string]string
		if err := json.Unmarshal([]byte(secret), &m); err == nil && m[k1] != "" && m[k2] != "" {
			return m[k1], m[k2], nil
		}
		return "", "", fmt.Errorf("the value is a JSON object without %s and %s", k1, k2)
	}
	a, b, ok := strings.Cut(secret, ":")
	if !ok || a == "" || b == "" {
		return "", "", fmt.Errorf("the value must be %s or a JSON object with %s and %s", shape, k1, k2)
	}
	return a, b, nil
}

// fetchToken runs the OAuth 2.0 client credentials grant (RFC 6749 4.4),
// authenticating the client with HTTP basic auth.
func (c *Client) fetchToken(ctx context.Context, secret string) (string, error) {
	id, key, err := pair(secret, "client_id", "client_secret", "client_id:client_secret")
	if err != nil {
		return "", fmt.Errorf("secret %q: %v", c.p.Auth.Secret, err)
	}
	c.sensitive(key)
	form := url.Values{"grant_type": {"client_credentials"}}
	if c.p.Auth.Scope != "" {
		form.Set("scope", c.p.Auth.Scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.p.Auth.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(key))
	c.sensitive(url.QueryEscape(id) + ":" + url.QueryEscape(key))
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("OAuth token request to %s: %v", c.p.Auth.TokenURL, outbound.Reason(err))
	}
	defer resp.Body.Close()
	raw, err := outbound.ReadBody(resp.Body, 64<<10)
	if err != nil {
		return "", fmt.Errorf("OAuth token request to %s: %v", c.p.Auth.TokenURL, err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(raw, &tok) // an answer that is no JSON has no token: reported below
	if resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		msg := fmt.Sprintf("OAuth token request to %s answered %s", c.p.Auth.TokenURL, resp.Status)
		if tok.Error != "" {
			msg += ": " + tok.Error
			if tok.Description != "" {
				msg += ": " + tok.Description
			}
		}
		return "", errors.New(msg)
	}
	if tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer") {
		return "", fmt.Errorf("OAuth token request to %s gave a %q token, not a bearer token", c.p.Auth.TokenURL, tok.TokenType)
	}
	return tok.AccessToken, nil
}

// unwrap takes the OData envelope off a body.
func unwrap(version string, body any) any {
	m, ok := body.(map[string]any)
	if !ok {
		return body
	}
	if version == V2 {
		d, ok := m["d"]
		if !ok {
			return body
		}
		if dm, ok := d.(map[string]any); ok {
			if results, ok := dm["results"].([]any); ok {
				return results
			}
		}
		return d
	}
	if value, ok := m["value"].([]any); ok {
		return value
	}
	return body
}
