// Package httpapi serves the service's HTTP API on net/http. The same
// handlers run behind API Gateway (wrapped by a Lambda adapter) and in local
// mode; only the Authenticator differs.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// MaxBodyBytes is the largest request body accepted (256 KB).
const MaxBodyBytes = 256 << 10

// Defaults of the budget of request bodies in flight (WithBodyBudget);
// docs/DECISIONS.md says why these figures.
const (
	// DefaultBodyBudget is the most request-body bytes the handlers may
	// hold at once: 64 bodies of the largest size.
	DefaultBodyBudget = 16 << 20
	// DefaultBodyWait is how long a request waits for its share of the
	// budget before it is answered 503.
	DefaultBodyWait = 10 * time.Second
)

// Authenticator returns the principal of a request.
type Authenticator interface {
	Authenticate(r *http.Request) (*cardflow.Principal, error)
}

// KeyAuthenticator checks the x-api-key header against the store, the way
// the Lambda authorizer does on AWS.
type KeyAuthenticator struct{ Service *app.Service }

// Authenticate implements Authenticator.
func (a KeyAuthenticator) Authenticate(r *http.Request) (*cardflow.Principal, error) {
	return a.Service.Authenticate(r.Context(), r.Header.Get("x-api-key"))
}

// Server routes requests to the service's use cases.
type Server struct {
	svc    *app.Service
	auth   Authenticator
	log    *slog.Logger
	routes map[string]map[string]route // path -> method -> route
	// patterns are the paths with {name} segments, in matching order.
	patterns []string
	outbox   Outbox
	// bodies is the budget of request-body bytes in flight; a request
	// holds its share from before its body is read until its handler
	// returns, so the memory that concurrent requests hold is bounded.
	bodies     *semaphore.Weighted
	bodyBudget int64
	bodyWait   time.Duration
}

type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// Option configures a Server.
type Option func(*Server)

// WithLogger sets the logger for failed requests.
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithOutbox adds GET /v1/adaptive-cards/outbox, local mode's view of the
// cards card steps sent; a nil outbox adds nothing. The route is added
// here rather than in NewEndpoints, so that a program that gives no outbox
// links no outbox handler.
func WithOutbox(o Outbox) Option {
	return func(s *Server) {
		if o == nil {
			return
		}
		s.outbox = o
		s.add(GetOutbox.routes(s))
	}
}

// WithBodyBudget sets the budget of request-body bytes the handlers may
// hold at once (at least MaxBodyBytes) and how long a request past it
// waits before it is answered 503. A request takes its Content-Length,
// or MaxBodyBytes when it does not say, up to MaxBodyBytes.
func WithBodyBudget(bytes int64, wait time.Duration) Option {
	return func(s *Server) { s.bodyBudget, s.bodyWait = bytes, wait }
}

// New returns a Server of every endpoint for svc, authenticating requests
// with auth.
func New(svc *app.Service, auth Authenticator, opts ...Option) (*Server, error) {
	return NewEndpoints(svc, auth, Endpoints(), opts...)
}

// NewEndpoints returns a Server of the endpoints given, as one Lambda
// function per endpoint needs; in matching order, like Endpoints.
func NewEndpoints(svc *app.Service, auth Authenticator, endpoints []Endpoint, opts ...Option) (*Server, error) {
	if svc == nil || auth == nil {
		return nil, errors.New("httpapi: service and authenticator are required")
	}
	s := &Server{svc: svc, auth: auth, log: slog.Default(), routes: map[string]map[string]route{},
		bodyBudget: DefaultBodyBudget, bodyWait: DefaultBodyWait}
	for _, o := range opts {
		o(s)
	}
	if s.bodyBudget < MaxBodyBytes {
		return nil, fmt.Errorf("httpapi: the budget of request bodies in flight is %d bytes; it must hold at least one body of %d", s.bodyBudget, MaxBodyBytes)
	}
	if s.bodyWait <= 0 {
		return nil, errors.New("httpapi: the wait for the budget of request bodies must be positive")
	}
	s.bodies = semaphore.NewWeighted(s.bodyBudget)
	for _, e := range endpoints {
		if e.handle == nil {
			return nil, errors.New("httpapi: an endpoint is not one of Endpoints")
		}
		if err := svc.Need(needs[e.Name]); err != nil {
			return nil, fmt.Errorf("httpapi: endpoint %s: %w", e.Name, err)
		}
		s.add(e.routes(s))
	}
	if len(s.routes) == 0 {
		return nil, errors.New("httpapi: no endpoint to serve")
	}
	return s, nil
}

// add puts routes into the routing table.
func (s *Server) add(routes []route) {
	for _, rt := range routes {
		if s.routes[rt.path] == nil {
			s.routes[rt.path] = map[string]route{}
			if strings.Contains(rt.path, "{") {
				s.patterns = append(s.patterns, rt.path)
			}
		}
		s.routes[rt.path][rt.method] = rt
	}
}

// match finds the routes of a path: an exact path first, then the patterns
// in table order, whose {name} segments match one non-empty segment each.
func (s *Server) match(path string) (map[string]route, map[string]string) {
	if methods, ok := s.routes[path]; ok && !strings.Contains(path, "{") {
		return methods, nil
	}
	segs := strings.Split(path, "/")
	for _, p := range s.patterns {
		psegs := strings.Split(p, "/")
		if len(psegs) != len(segs) {
			continue
		}
		params := map[string]string{}
		for i, ps := range psegs {
			if strings.HasPrefix(ps, "{") {
				if segs[i] == "" {
					params = nil
					break
				}
				params[strings.Trim(ps, "{}")] = segs[i]
			} else if ps != segs[i] {
				params = nil
				break
			}
		}
		if params != nil {
			if methods, ok := s.routes[p]; ok {
				return methods, params
			}
		}
	}
	return nil, nil
}

// Routes lists the routes the server answers, as "METHOD /path".
func (s *Server) Routes() []string {
	var out []string
	for path, methods := range s.routes {
		for method := range methods {
			out = append(out, method+" "+path)
		}
	}
	return out
}

// ServeHTTP finds the route, authenticates the caller and runs the handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	methods, params := s.match(r.URL.Path)
	if methods == nil {
		s.writeError(w, r, cardflow.Errorf(cardflow.ENOTFOUND, "no endpoint %s; see openapi.yaml for the API", r.URL.Path))
		return
	}
	// Routes without a scope authenticate requests themselves (a Bot
	// Framework JWT, a signed link) instead of by x-api-key.
	var p *cardflow.Principal
	self := selfAuthenticating(methods)
	if !self {
		var err error
		if p, err = s.auth.Authenticate(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		// Every request of a key counts against its organization's rate,
		// whatever comes of it.
		if err := s.svc.Admit(r.Context(), p); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	rt, ok := methods[r.Method]
	if !ok {
		allowed := make([]string, 0, len(methods))
		for m := range methods {
			allowed = append(allowed, m)
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		s.writeError(w, r, cardflow.Errorf(cardflow.EMETHOD, "%s takes %s, not %s", r.URL.Path, strings.Join(allowed, ", "), r.Method))
		return
	}
	if self {
		s.run(w, r, rt)
		return
	}
	if err := app.Authorize(p, rt.scope); err != nil {
		s.writeError(w, r, err)
		return
	}
	r = r.WithContext(cardflow.NewContextWithPrincipal(r.Context(), p))
	for k, v := range params {
		r.SetPathValue(k, v)
	}
	s.run(w, r, rt)
}

// run runs a route's handler once the request has its share of the body
// budget, and gives the share back when the handler returns.
func (s *Server) run(w http.ResponseWriter, r *http.Request, rt route) {
	release, err := s.admitBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer release()
	if err := rt.handle(w, r); err != nil {
		s.writeError(w, r, err)
	}
}

// admitBody takes the request's share of the budget of bodies in flight:
// its Content-Length, or MaxBodyBytes for a body of unknown length, at
// most MaxBodyBytes (more is refused while reading). A request without a
// body takes nothing. Past the budget it waits, at most s.bodyWait and
// while its client waits, then is answered 503 with Retry-After.
func (s *Server) admitBody(r *http.Request) (release func(), err error) {
	n := r.ContentLength
	if n < 0 || n > MaxBodyBytes {
		n = MaxBodyBytes
	}
	if n == 0 {
		return func() {}, nil
	}
	if !s.bodies.TryAcquire(n) {
		ctx, cancel := context.WithTimeout(r.Context(), s.bodyWait)
		defer cancel()
		if s.bodies.Acquire(ctx, n) != nil {
			return nil, &cardflow.Error{Code: cardflow.EUNAVAILABLE, RetryAfter: time.Second,
				Message: fmt.Sprintf("the server is busy: the requests it is handling hold all the %d KB of request bodies it takes at once; try again in a moment", s.bodyBudget>>10)}
		}
	}
	return func() { s.bodies.Release(n) }, nil
}

// selfAuthenticating reports whether every route of a path authenticates
// its requests itself.
func selfAuthenticating(methods map[string]route) bool {
	for _, rt := range methods {
		if rt.scope != "" {
			return false
		}
	}
	return true
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeJSON encodes v fully before writing, so an encoding failure still
// gets a proper error status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() {
		buf.Reset()
		bufPool.Put(buf)
	}()
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"message":"internal error","code":"INTERNAL"}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// ok answers 200 with "message": "success" and the given fields.
func ok(w http.ResponseWriter, body any) error {
	writeJSON(w, http.StatusOK, body)
	return nil
}

type itemResponse struct {
	Message string `json:"message"`
	Item    any    `json:"item"`
}

func okItem(w http.ResponseWriter, item any) error {
	return ok(w, itemResponse{Message: "success", Item: item})
}

// okDryRun answers a save with dry_run: the body is valid, nothing was
// stored.
func okDryRun(w http.ResponseWriter) error {
	return ok(w, struct {
		Message string `json:"message"`
		DryRun  bool   `json:"dry_run"`
	}{"success", true})
}

// okItemJSON answers an item that is JSON already, as okItem would, without
// encoding it again: executions are large, and the store keeps them encoded.
func okItemJSON(w http.ResponseWriter, item []byte) error {
	const head, tail = `{"message":"success","item":`, "}\n"
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(head)+len(item)+len(tail)))
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, head)
	_, _ = w.Write(item)
	_, _ = io.WriteString(w, tail)
	return nil
}

type listResponse[T, K any] struct {
	Message string `json:"message"`
	Count   int    `json:"count"`
	Items   []T    `json:"items"`
	LastKey *K     `json:"lastKey,omitempty"`
}

func okList[T, K any](w http.ResponseWriter, items []T, lastKey *K) error {
	if items == nil {
		items = []T{}
	}
	return ok(w, listResponse[T, K]{Message: "success", Count: len(items), Items: items, LastKey: lastKey})
}
