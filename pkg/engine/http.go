package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// maxResponseBytes bounds the response body an http or erp step reads.
const maxResponseBytes = 1 << 20

// request is an outbound call as a step's templates rendered it.
type request struct {
	method  string
	url     string
	headers map[string]string
	body    any
	// secretHeaders are set on the request but kept out of logs.
	secretHeaders map[string]string
}

func (r *run) httpCall(ctx context.Context, n *node) outcome {
	req, err := r.render(ctx, n, "")
	if err != nil {
		return outcome{reason: err.Error()}
	}
	return r.send(ctx, n, req)
}

// erpCall calls the workflow's ERP profile: base_url + path, with its auth.
func (r *run) erpCall(ctx context.Context, n *node) outcome {
	erp, _ := r.ex.State.Integrations["erp"].(map[string]any)
	base, _ := erp["base_url"].(string)
	if base == "" {
		return outcome{reason: "the workflow has no workflow_integrations.erp.base_url"}
	}
	req, err := r.render(ctx, n, strings.TrimRight(base, "/"))
	if err != nil {
		return outcome{reason: err.Error()}
	}
	if req.headers["Accept"] == "" {
		req.headers["Accept"] = "application/json"
	}
	if client, _ := erp["client"].(string); client != "" {
		req.headers["sap-client"] = client
	}
	if auth, _ := erp["auth"].(map[string]any); auth != nil {
		name, _ := auth["secret"].(string)
		secret, err := r.e.secrets.Secret(ctx, name)
		if err != nil {
			return outcome{input: req.view(), reason: err.Error()}
		}
		switch auth["type"] {
		case "basic":
			user, pass, _ := strings.Cut(secret, ":")
			hr, _ := http.NewRequest("GET", "http://x", nil)
			hr.SetBasicAuth(user, pass)
			req.secretHeaders = map[string]string{"Authorization": hr.Header.Get("Authorization")}
		case "bearer":
			req.secretHeaders = map[string]string{"Authorization": "Bearer " + secret}
		default:
			return outcome{input: req.view(), reason: fmt.Sprintf("workflow_integrations.erp.auth.type %v is not basic or bearer", auth["type"])}
		}
	}
	out := r.send(ctx, n, req)
	if out.reason == "" {
		out.output = odataResult(out.output)
	}
	return out
}

// render evaluates the step's url (or path under base), headers, query and
// body.
func (r *run) render(ctx context.Context, n *node, base string) (*request, error) {
	vars := r.vars()
	u, err := n.url.Eval(ctx, vars)
	if err != nil {
		return nil, fmt.Errorf("url: %v", err)
	}
	us, ok := u.(string)
	if !ok {
		b, _ := json.Marshal(u)
		us = string(b)
	}
	target, err := url.Parse(base + us)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return nil, fmt.Errorf("url %q is not an http or https URL", base+us)
	}
	req := &request{url: target.String(), headers: map[string]string{}}
	req.method, _ = n.step.Config["method"].(string)
	req.method = strings.ToUpper(req.method)
	if req.method == "" {
		req.method = http.MethodGet
	}
	if n.query != nil {
		v, err := n.query.Eval(ctx, vars)
		if err != nil {
			return nil, fmt.Errorf("query: %v", err)
		}
		q := target.Query()
		for k, val := range asMap(v) {
			q.Set(k, text(val))
		}
		target.RawQuery = q.Encode()
		req.url = target.String()
	}
	if n.headers != nil {
		v, err := n.headers.Eval(ctx, vars)
		if err != nil {
			return nil, fmt.Errorf("headers: %v", err)
		}
		for k, val := range asMap(v) {
			req.headers[k] = text(val)
		}
	}
	if n.body != nil {
		if req.body, err = n.body.Eval(ctx, vars); err != nil {
			return nil, fmt.Errorf("body: %v", err)
		}
	}
	return req, nil
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

// send makes the call. A transport error or a status of 400 or more fails
// the step; the output keeps status, headers and the body (decoded when it
// is JSON).
func (r *run) send(ctx context.Context, n *node, q *request) outcome {
	timeout := n.timeout
	if timeout == 0 {
		timeout = DefaultHTTPTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if q.body != nil {
		b, err := json.Marshal(q.body)
		if err != nil {
			return outcome{input: q.view(), reason: "body is not JSON: " + err.Error()}
		}
		body = bytes.NewReader(b)
	}
	hr, err := http.NewRequestWithContext(ctx, q.method, q.url, body)
	if err != nil {
		return outcome{input: q.view(), reason: err.Error()}
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range q.headers {
		hr.Header.Set(k, v)
	}
	for k, v := range q.secretHeaders {
		hr.Header.Set(k, v)
	}
	resp, err := r.e.client.Do(hr)
	if err != nil {
		// The url error repeats the URL; the input shows it already.
		reason := err.Error()
		if ue, ok := err.(*url.Error); ok {
			reason = ue.Err.Error()
		}
		return outcome{input: q.view(), reason: fmt.Sprintf("%s %s: %s", q.method, q.url, reason)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return outcome{input: q.view(), reason: fmt.Sprintf("%s %s: reading the response: %v", q.method, q.url, err)}
	}
	if len(raw) > maxResponseBytes {
		return outcome{input: q.view(), reason: fmt.Sprintf("%s %s: the response is larger than %d KB", q.method, q.url, maxResponseBytes>>10)}
	}
	headers := map[string]any{}
	for k := range resp.Header {
		headers[strings.ToLower(k)] = resp.Header.Get(k)
	}
	var decoded any = string(raw)
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); strings.HasSuffix(mt, "json") && len(raw) > 0 {
		if err := json.Unmarshal(raw, &decoded); err != nil {
			decoded = string(raw)
		}
	}
	out := outcome{input: q.view(), output: map[string]any{"status": resp.StatusCode, "headers": headers, "body": decoded}}
	if resp.StatusCode >= 400 {
		out.reason = fmt.Sprintf("%s %s answered %s%s", q.method, q.url, resp.Status, errorDetail(decoded))
	}
	return out
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

// odataResult unwraps OData v2 ({"d": {"results": [...]}}) and v4
// ({"value": [...]}) bodies so expressions reach the records directly.
func odataResult(out any) any {
	m, _ := out.(map[string]any)
	body, _ := m["body"].(map[string]any)
	if body == nil {
		return out
	}
	switch {
	case body["d"] != nil:
		d := body["d"]
		if dm, ok := d.(map[string]any); ok && dm["results"] != nil {
			d = dm["results"]
		}
		m["body"] = d
	case body["value"] != nil && len(body) <= 2:
		m["body"] = body["value"]
	}
	return m
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

// EnvSecrets resolves a secret named "sap-prod" from CARDFLOW_SECRET_SAP_PROD.
type EnvSecrets struct{}

// Secret implements Secrets.
func (EnvSecrets) Secret(_ context.Context, name string) (string, error) {
	key := "CARDFLOW_SECRET_" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v, nil
	}
	return "", cardflow.Errorf(cardflow.EINVALID, "secret %q is not set (locally: set %s)", name, key)
}
