package steps

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/outbound"
	"github.com/cardflow/cardflow/pkg/secrets"
)

// HTTP calls a URL; its output is {status, headers, body}, and a status of
// 400 and up or a network error leaves by the error exit.
var HTTP = Define[httpConfig]("http", cardflow.StepTraits{Exits: []string{cardflow.ExitError}}, httpSchema)

var httpMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}

type httpConfig struct {
	callConfig
	URL  *string   `json:"url"`
	Auth *httpAuth `json:"auth"`
}

// Ways config.auth sends its secret.
const (
	authBasic  = "basic"
	authBearer = "bearer"
	authHeader = "header"
)

// httpAuth is config.auth: {"type": "basic" | "bearer" | "header",
// "secret": "<name>", "header": "<name>" for type header}.
type httpAuth struct {
	Type   string `json:"type"`
	Secret string `json:"secret"`
	Header string `json:"header"`
}

// UnmarshalJSON reads an auth object, refusing fields it does not have, so
// a credential put there by mistake is not stored quietly.
func (a *httpAuth) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return errors.New(`config.auth must be an object such as {"type": "bearer", "secret": "<secret name>"}`)
	}
	fields := map[string]*string{"type": &a.Type, "secret": &a.Secret, "header": &a.Header}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		f, ok := fields[k]
		if !ok {
			return fmt.Errorf("config.auth.%s is not an auth field; use type, secret and header", k)
		}
		if m[k] == nil {
			continue
		}
		if *f, ok = m[k].(string); !ok {
			return fmt.Errorf("config.auth.%s must be a string", k)
		}
	}
	return nil
}

var headerName = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")

// check checks the auth's secret name and type; it names a secret, never
// holds one.
func (a *httpAuth) check() error {
	if !secrets.ValidName(a.Secret) {
		return fmt.Errorf("config.auth.secret must name a secret (letters, digits and _ . @ + = / -), not hold one")
	}
	switch a.Type {
	case authBasic, authBearer:
		if a.Header != "" {
			return fmt.Errorf("config.auth.header belongs to type header")
		}
	case authHeader:
		if !headerName.MatchString(a.Header) {
			return fmt.Errorf("config.auth.header must name the header that carries the secret, such as X-API-Key")
		}
	default:
		if a.Type == "" {
			return errors.New("config.auth.type must be basic, bearer or header")
		}
		return fmt.Errorf("config.auth.type must be basic, bearer or header, not %v", a.Type)
	}
	return nil
}

func (c *httpConfig) Validate() error {
	if err := required("http", "method", c.Method); err != nil {
		return err
	}
	if err := c.checkMethod(httpMethods); err != nil {
		return err
	}
	if err := required("http", "url", c.URL); err != nil {
		return err
	}
	return c.readTimeout()
}

func (c *httpConfig) Check(env *expr.Env) (Step, error) {
	if c.Auth != nil {
		if err := c.Auth.check(); err != nil {
			return nil, err
		}
	}
	target, err := compileURL(env, *c.URL)
	if err != nil {
		return nil, err
	}
	k, err := c.check(env, target)
	if err != nil {
		return nil, err
	}
	return &httpStep{call: k, auth: c.Auth}, nil
}

type httpStep struct {
	call *call
	auth *httpAuth
}

func (s *httpStep) Run(ctx context.Context, r *Run) Outcome {
	c := &callRun{call: s.call, run: r}
	return c.redacted(s.do(ctx, c))
}

func (s *httpStep) do(ctx context.Context, c *callRun) Outcome {
	q, err := s.render(ctx, c.run.Vars)
	if err != nil {
		return Outcome{Reason: err.Error()}
	}
	ctx, cancel := c.context(ctx)
	defer cancel()
	secretHeaders, err := s.authHeaders(ctx, c)
	if err != nil {
		return Outcome{Input: q.view(), Reason: err.Error()}
	}
	var body *bytes.Reader
	if q.body != nil {
		b, err := json.Marshal(q.body)
		if err != nil {
			return Outcome{Input: q.view(), Reason: "body is not JSON: " + err.Error()}
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
		return Outcome{Input: q.view(), Reason: err.Error()}
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
	resp, err := c.run.Client.Do(hr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the prefix already
		}
		return Outcome{Input: q.view(), Reason: c.failure(ctx, prefix, err)}
	}
	defer resp.Body.Close()
	raw, err := outbound.ReadBody(resp.Body, outbound.DefaultMaxBody)
	if err != nil {
		return Outcome{Input: q.view(), Reason: c.failure(ctx, prefix, err)}
	}
	var decoded any = string(raw)
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); strings.HasSuffix(mt, "json") && len(raw) > 0 {
		if err := json.Unmarshal(raw, &decoded); err != nil {
			decoded = string(raw)
		}
	}
	out := Outcome{Input: q.view(), Output: map[string]any{"status": resp.StatusCode, "headers": headerView(resp.Header), "body": decoded}}
	if resp.StatusCode >= 400 {
		out.Reason = fmt.Sprintf("%s %s answered %s%s", q.method, q.url, resp.Status, errorDetail(decoded))
	}
	return out
}

// render evaluates the step's call: an http or https URL with the query
// added.
func (s *httpStep) render(ctx context.Context, vars expr.Vars) (*request, error) {
	p, err := s.call.render(ctx, vars)
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

// authHeaders builds the headers of config.auth from its secret.
func (s *httpStep) authHeaders(ctx context.Context, c *callRun) (map[string]string, error) {
	a := s.auth
	if a == nil {
		return nil, nil
	}
	secret, err := c.Secret(ctx, a.Secret)
	if err != nil {
		return nil, err
	}
	switch a.Type {
	case authBasic:
		user, pass, ok := strings.Cut(secret, ":")
		if !ok {
			return nil, fmt.Errorf("secret %q must be user:password for basic auth", a.Secret)
		}
		c.sensitive(pass)
		h := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
		return map[string]string{"Authorization": h}, nil
	case authBearer:
		return map[string]string{"Authorization": "Bearer " + secret}, nil
	default: // authHeader, checked when the workflow was saved
		return map[string]string{a.Header: secret}, nil
	}
}

var httpSchema = object("Calls a URL through the outbound policy; its output is {status, headers, body}.", []string{"url"}, withCall(map[string]Schema{
	"url": typed("string", "The URL, https unless allowed otherwise; may hold {{ }} templates."),
	"auth": object("How the call authenticates with one of the organization's secrets.", []string{"type", "secret"}, map[string]Schema{
		"type":   enum("basic (secret user:password), bearer, or header (config.auth.header names it).", authBasic, authBearer, authHeader),
		"secret": typed("string", "The name of the organization's secret."),
		"header": typed("string", "For type header: the header the secret goes in."),
	}),
}))
