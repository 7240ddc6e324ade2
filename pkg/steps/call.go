package steps

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/outbound"
)

// DefaultHTTPTimeout is the timeout of an http or erp call whose step sets
// none.
const DefaultHTTPTimeout = 30 * time.Second

// MaxCallTimeout is the longest timeout an http or erp step may set. A
// step may start just as Advance's time budget (2 minutes) runs out, and
// must end, and be recorded, within the Advance function's timeout (300 s
// in template.yaml).
const MaxCallTimeout = 2 * time.Minute

// callConfig is the part of the config http and erp steps share.
type callConfig struct {
	Method         *string        `json:"method"`
	Query          any            `json:"query"`
	Headers        map[string]any `json:"headers"`
	Body           any            `json:"body"`
	Timeout        string         `json:"timeout"`
	IdempotencyKey *bool          `json:"idempotency_key"`

	timeout time.Duration
}

// method is the configured method, "" when there is none.
func (c *callConfig) method() string {
	if c.Method == nil {
		return ""
	}
	return *c.Method
}

// checkMethod checks the method, when there is one, against methods.
func (c *callConfig) checkMethod(methods []string) error {
	if m := c.method(); m != "" && !slices.Contains(methods, strings.ToUpper(m)) {
		return fmt.Errorf("config.method %q is not one of %s", m, strings.Join(methods, ", "))
	}
	return nil
}

// readTimeout reads config.timeout, which may not exceed MaxCallTimeout.
func (c *callConfig) readTimeout() error {
	var err error
	if c.timeout, err = duration("timeout", c.Timeout); err != nil {
		return err
	}
	if c.timeout > MaxCallTimeout {
		return fmt.Errorf("config.timeout %s is longer than %d minutes, the longest a call may wait", c.Timeout, int(MaxCallTimeout.Minutes()))
	}
	return nil
}

// check compiles the call's templates; target is the url of an http step,
// the entity of an erp step, compiled.
func (c *callConfig) check(env *expr.Env, target *urlTemplate) (*call, error) {
	k := &call{target: target, timeout: c.timeout, idempotencyKey: c.IdempotencyKey == nil || *c.IdempotencyKey}
	k.method = strings.ToUpper(c.method())
	if k.method == "" {
		k.method = http.MethodGet
	}
	var err error
	if c.Headers != nil {
		if k.headers, err = compileValue(env, "headers", c.Headers); err != nil {
			return nil, err
		}
	}
	if k.query, err = compileValue(env, "query", c.Query); err != nil {
		return nil, err
	}
	if k.body, err = compileValue(env, "body", c.Body); err != nil {
		return nil, err
	}
	return k, nil
}

// call is the compiled part of an http or erp step.
type call struct {
	method  string
	target  *urlTemplate
	query   *expr.Value
	headers *expr.Value
	body    *expr.Value
	timeout time.Duration
	// idempotencyKey is false when the step turns the header off.
	idempotencyKey bool
}

// parts is a step's call with its templates evaluated.
type parts struct {
	method  string
	target  string // the url of an http step, the entity of an erp step
	query   url.Values
	headers map[string]string
	body    any
}

// render evaluates the step's target, query, headers and body.
func (k *call) render(ctx context.Context, vars expr.Vars) (*parts, error) {
	p := &parts{method: k.method, headers: map[string]string{}, query: url.Values{}}
	var err error
	if p.target, err = k.target.render(ctx, vars); err != nil {
		return nil, err
	}
	if k.query != nil {
		v, err := k.query.Eval(ctx, vars)
		if err != nil {
			return nil, fmt.Errorf("query: %v", err)
		}
		for key, val := range asMap(v) {
			p.query.Set(key, text(val))
		}
	}
	if k.headers != nil {
		v, err := k.headers.Eval(ctx, vars)
		if err != nil {
			return nil, fmt.Errorf("headers: %v", err)
		}
		for key, val := range asMap(v) {
			p.headers[key] = text(val)
		}
	}
	if k.body != nil {
		if p.body, err = k.body.Eval(ctx, vars); err != nil {
			return nil, fmt.Errorf("body: %v", err)
		}
	}
	return p, nil
}

// limit is the call's timeout, or the default.
func (k *call) limit() time.Duration {
	if k.timeout == 0 {
		return DefaultHTTPTimeout
	}
	return k.timeout
}

// callRun is one run of an http or erp step: the secret values it used,
// which are cut out of everything it records.
type callRun struct {
	call    *call
	run     *Run
	secrets []string
}

// Secret resolves a secret and remembers its value for redaction.
func (c *callRun) Secret(ctx context.Context, name string) (string, error) {
	v, err := c.run.Secrets.Secret(ctx, name)
	if err == nil {
		c.sensitive(v)
	}
	return v, err
}

// sensitive remembers a value, and its base64 forms, as never to be
// recorded.
func (c *callRun) sensitive(v string) {
	if len(v) < 4 {
		return
	}
	c.secrets = append(c.secrets, v,
		base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v)),
		base64.URLEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v)))
}

// redacted is a step outcome with every known secret value replaced.
func (c *callRun) redacted(out Outcome) Outcome {
	if len(c.secrets) > 0 {
		out.Input = redact(out.Input, c.secrets)
		out.Output = redact(out.Output, c.secrets)
		out.Reason = redactString(out.Reason, c.secrets)
	}
	if out.Reason != "" {
		c.run.Log.Info("step call failed", slog.String("execution", c.run.Execution.WorkflowExecutionID),
			slog.String("step", c.run.StepID), slog.String("reason", out.Reason))
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
func (c *callRun) idempotencyKey() string {
	if !c.call.idempotencyKey {
		return ""
	}
	ex := c.run.Execution
	return outbound.IdempotencyKey(ex.WorkflowExecutionID, c.run.StepID, ex.State.StepsRun)
}

func (c *callRun) context(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.call.limit())
}

// failure words a failed call: a deadline says which one, and no other
// reason names an address the host resolved to (outbound.Reason).
func (c *callRun) failure(ctx context.Context, prefix string, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("%sno answer within %s (config.timeout)", prefix, c.call.limit())
	}
	return prefix + outbound.Reason(err)
}

// request is an outbound call as a step's templates rendered it.
type request struct {
	method  string
	url     string
	headers map[string]string
	body    any
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

// withCall adds the config keys of a step that makes a call (http, erp)
// to props.
func withCall(props map[string]Schema) map[string]Schema {
	props["method"] = typed("string", "The HTTP method (default GET).")
	props["query"] = anyValue("Query parameters, an object whose values may hold {{ }} templates.")
	props["headers"] = typed("object", "Request headers; values may hold {{ }} templates.")
	props["body"] = anyValue("The request body, a value whose strings may hold {{ }} templates.")
	props["timeout"] = typed("string", "An ISO 8601 duration bounding the call.")
	props["idempotency_key"] = typed("boolean", "Whether the call sends an Idempotency-Key header, the same on every retry of the step (default true).")
	return props
}
