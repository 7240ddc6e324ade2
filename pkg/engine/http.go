package engine

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/cardflow/cardflow/pkg/outbound"
	"github.com/cardflow/cardflow/pkg/sap"
	"github.com/cardflow/cardflow/pkg/secrets"
)

// request is an outbound call as a step's templates rendered it.
type request struct {
	method  string
	url     string
	headers map[string]string
	body    any
}

// stepCall holds what one http or erp step run needs: its deadline and the
// secret values it used, which are cut out of everything it records.
type stepCall struct {
	r       *run
	n       *node
	secrets []string
}

// Secret resolves a secret of the execution's organization, never another's
// nor the deployment's, and remembers its value for redaction.
func (c *stepCall) Secret(ctx context.Context, name string) (string, error) {
	v, err := secrets.ForOrganization(c.r.e.secrets, c.r.ex.OrganizationID).Secret(ctx, name)
	if err == nil {
		c.sensitive(v)
	}
	return v, err
}

// sensitive remembers a value, and its base64 forms, as never to be
// recorded.
func (c *stepCall) sensitive(v string) {
	if len(v) < 4 {
		return
	}
	c.secrets = append(c.secrets, v,
		base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v)))
}

// redacted is a step outcome with every known secret value replaced.
func (c *stepCall) redacted(out outcome) outcome {
	if len(c.secrets) > 0 {
		out.input = redact(out.input, c.secrets)
		out.output = redact(out.output, c.secrets)
		out.reason = redactString(out.reason, c.secrets)
	}
	if out.reason != "" {
		c.r.e.log.Info("step call failed", slog.String("execution", c.r.ex.WorkflowExecutionID),
			slog.String("step", c.n.step.ID), slog.String("reason", out.reason))
	}
	return out
}

const redactedMark = "[redacted]"

func redactString(s string, secrets []string) string {
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, redactedMark)
	}
	return s
}

func redact(v any, secrets []string) any {
	switch t := v.(type) {
	case string:
		return redactString(t, secrets)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			out[redactString(k, secrets)] = redact(val, secrets)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(t))
		for k, val := range t {
			out[k] = redactString(val, secrets)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = redact(val, secrets)
		}
		return out
	}
	return v
}

// idempotencyKey is the call's Idempotency-Key, unless the step turns it
// off: stable across retries and a re-run after a crash, new for each visit
// of the step.
func (c *stepCall) idempotencyKey() string {
	if on, ok := c.n.step.Config["idempotency_key"].(bool); ok && !on {
		return ""
	}
	return outbound.IdempotencyKey(c.r.ex.WorkflowExecutionID, c.n.step.ID, c.r.ex.State.StepsRun)
}

func (c *stepCall) context(ctx context.Context) (context.Context, context.CancelFunc) {
	timeout := c.n.timeout
	if timeout == 0 {
		timeout = DefaultHTTPTimeout
	}
	return context.WithTimeout(ctx, timeout)
}

// failure words a failed call: a deadline says which one.
func (c *stepCall) failure(ctx context.Context, prefix string, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		timeout := c.n.timeout
		if timeout == 0 {
			timeout = DefaultHTTPTimeout
		}
		return fmt.Sprintf("%sno answer within %s (config.timeout)", prefix, timeout)
	}
	return prefix + err.Error()
}

func (r *run) httpCall(ctx context.Context, n *node) outcome {
	c := &stepCall{r: r, n: n}
	return c.redacted(c.http(ctx))
}

func (c *stepCall) http(ctx context.Context) outcome {
	q, err := c.r.render(ctx, c.n)
	if err != nil {
		return outcome{reason: err.Error()}
	}
	ctx, cancel := c.context(ctx)
	defer cancel()
	secretHeaders, err := c.auth(ctx)
	if err != nil {
		return outcome{input: q.view(), reason: err.Error()}
	}
	var body *bytes.Reader
	if q.body != nil {
		b, err := json.Marshal(q.body)
		if err != nil {
			return outcome{input: q.view(), reason: "body is not JSON: " + err.Error()}
		}
		body = bytes.NewReader(b)
	}
	var hr *http.Request
	if body != nil {
		hr, err = http.NewRequestWithContext(ctx, q.method, q.url, body)
	} else {
		hr, err = http.NewRequestWithContext(ctx, q.method, q.url, nil)
	}
	if err != nil {
		return outcome{input: q.view(), reason: err.Error()}
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if key := c.idempotencyKey(); key != "" {
		hr.Header.Set(outbound.IdempotencyKeyHeader, key)
	}
	for k, v := range q.headers {
		hr.Header.Set(k, v)
	}
	for k, v := range secretHeaders {
		hr.Header.Set(k, v)
	}
	prefix := q.method + " " + q.url + ": "
	resp, err := c.r.e.client.Do(hr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the prefix already
		}
		return outcome{input: q.view(), reason: c.failure(ctx, prefix, err)}
	}
	defer resp.Body.Close()
	raw, err := outbound.ReadBody(resp.Body, outbound.DefaultMaxBody)
	if err != nil {
		return outcome{input: q.view(), reason: c.failure(ctx, prefix, err)}
	}
	var decoded any = string(raw)
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); strings.HasSuffix(mt, "json") && len(raw) > 0 {
		if err := json.Unmarshal(raw, &decoded); err != nil {
			decoded = string(raw)
		}
	}
	out := outcome{input: q.view(), output: map[string]any{"status": resp.StatusCode, "headers": headerView(resp.Header), "body": decoded}}
	if resp.StatusCode >= 400 {
		out.reason = fmt.Sprintf("%s %s answered %s%s", q.method, q.url, resp.Status, errorDetail(decoded))
	}
	return out
}

// auth builds the headers of config.auth from its secret.
func (c *stepCall) auth(ctx context.Context) (map[string]string, error) {
	a, _ := c.n.step.Config["auth"].(map[string]any)
	if a == nil {
		return nil, nil
	}
	name, _ := a["secret"].(string)
	secret, err := c.Secret(ctx, name)
	if err != nil {
		return nil, err
	}
	switch a["type"] {
	case "basic":
		user, pass, ok := strings.Cut(secret, ":")
		if !ok {
			return nil, fmt.Errorf("secret %q must be user:password for basic auth", name)
		}
		c.sensitive(pass)
		h := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
		return map[string]string{"Authorization": h}, nil
	case "bearer":
		return map[string]string{"Authorization": "Bearer " + secret}, nil
	default: // "header", checked when the workflow was saved
		h, _ := a["header"].(string)
		return map[string]string{h: secret}, nil
	}
}

// headerView is the response headers a step passes on: not the cookies,
// which may hold a session.
func headerView(h http.Header) map[string]any {
	out := map[string]any{}
	for k := range h {
		lk := strings.ToLower(k)
		if lk == "set-cookie" || lk == "x-csrf-token" {
			continue
		}
		out[lk] = h.Get(k)
	}
	return out
}

// erpCall calls the workflow's SAP profile.
func (r *run) erpCall(ctx context.Context, n *node) outcome {
	c := &stepCall{r: r, n: n}
	return c.redacted(c.erp(ctx))
}

func (c *stepCall) erp(ctx context.Context) outcome {
	profile, err := sap.ParseProfile(c.r.ex.State.Integrations["erp"])
	if err != nil {
		return outcome{reason: err.Error()}
	}
	parts, err := c.r.renderParts(ctx, c.n)
	if err != nil {
		return outcome{reason: err.Error()}
	}
	service, _ := c.n.step.Config["service"].(string)
	req := sap.Request{Method: parts.method, Service: service, Entity: parts.target, Query: parts.query, Header: http.Header{}, Body: parts.body}
	for k, v := range parts.headers {
		req.Header.Set(k, v)
	}
	if key := c.idempotencyKey(); key != "" {
		req.Header.Set(outbound.IdempotencyKeyHeader, key)
	}
	ctx, cancel := c.context(ctx)
	defer cancel()
	client, err := sap.New(profile, c.r.e.client, c, sap.WithSensitive(c.sensitive))
	if err != nil {
		return outcome{reason: err.Error()}
	}
	q := &request{method: req.Method, headers: parts.headers, body: parts.body}
	if q.url, err = client.URL(req); err != nil {
		return outcome{input: q.view(), reason: err.Error()}
	}
	resp, err := client.Do(ctx, req)
	if resp == nil {
		reason := err.Error()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = c.failure(ctx, q.method+" "+q.url+": ", err)
		}
		return outcome{input: q.view(), reason: reason}
	}
	out := outcome{input: q.view(), output: map[string]any{"status": resp.Status, "headers": headerView(resp.Header), "body": resp.Body}}
	if err != nil {
		out.reason = err.Error()
		return out
	}
	out.output.(map[string]any)["body"] = resp.Result
	return out
}

// parts is a step's call config with its templates evaluated.
type parts struct {
	method  string
	target  string // the url of an http step, the entity of an erp step
	query   url.Values
	headers map[string]string
	body    any
}

// renderParts evaluates the step's url (or entity), query, headers and
// body.
func (r *run) renderParts(ctx context.Context, n *node) (*parts, error) {
	vars := r.vars()
	p := &parts{headers: map[string]string{}, query: url.Values{}}
	u, err := n.url.Eval(ctx, vars)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", n.urlKey(), err)
	}
	p.target = text(u)
	p.method, _ = n.step.Config["method"].(string)
	p.method = strings.ToUpper(p.method)
	if p.method == "" {
		p.method = http.MethodGet
	}
	if n.query != nil {
		v, err := n.query.Eval(ctx, vars)
		if err != nil {
			return nil, fmt.Errorf("query: %v", err)
		}
		for k, val := range asMap(v) {
			p.query.Set(k, text(val))
		}
	}
	if n.headers != nil {
		v, err := n.headers.Eval(ctx, vars)
		if err != nil {
			return nil, fmt.Errorf("headers: %v", err)
		}
		for k, val := range asMap(v) {
			p.headers[k] = text(val)
		}
	}
	if n.body != nil {
		if p.body, err = n.body.Eval(ctx, vars); err != nil {
			return nil, fmt.Errorf("body: %v", err)
		}
	}
	return p, nil
}

// render evaluates an http step's call: an http or https URL with the query
// added.
func (r *run) render(ctx context.Context, n *node) (*request, error) {
	p, err := r.renderParts(ctx, n)
	if err != nil {
		return nil, err
	}
	target, err := url.Parse(p.target)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return nil, fmt.Errorf("url %q is not an http or https URL", p.target)
	}
	if len(p.query) > 0 {
		q := target.Query()
		for k, vs := range p.query {
			q[k] = vs
		}
		target.RawQuery = q.Encode()
	}
	return &request{method: p.method, url: target.String(), headers: p.headers, body: p.body}, nil
}

// view is the request as condensed logs show it: without secret headers.
func (q *request) view() map[string]any {
	v := map[string]any{"method": q.method, "url": q.url}
	if len(q.headers) > 0 {
		v["headers"] = q.headers
	}
	if q.body != nil {
		v["body"] = q.body
	}
	return v
}

// errorDetail picks a readable message out of an error body: OData's
// error.message.value or error.message, or a short text body.
func errorDetail(body any) string {
	if m, ok := body.(map[string]any); ok {
		if e, ok := m["error"].(map[string]any); ok {
			switch msg := e["message"].(type) {
			case string:
				return ": " + msg
			case map[string]any:
				if v, ok := msg["value"].(string); ok {
					return ": " + v
				}
			}
		}
		if msg, ok := m["message"].(string); ok {
			return ": " + msg
		}
	}
	if s, ok := body.(string); ok && s != "" && len(s) <= 200 {
		return ": " + strings.TrimSpace(s)
	}
	return ""
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// text renders a value as a header or query value: strings as they are,
// anything else as JSON.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
