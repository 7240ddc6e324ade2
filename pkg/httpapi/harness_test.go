package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/localmode"
)

var (
	specOnce   sync.Once
	specRouter routers.Router
	specErr    error
)

// openapiRouter loads openapi.yaml once; every response the tests see is
// validated against it.
func openapiRouter(t testing.TB) routers.Router {
	specOnce.Do(func() {
		loader := openapi3.NewLoader()
		var doc *openapi3.T
		doc, specErr = loader.LoadFromFile(filepath.Join("..", "..", "openapi.yaml"))
		if specErr != nil {
			return
		}
		if specErr = doc.Validate(context.Background()); specErr != nil {
			return
		}
		specRouter, specErr = gorillamux.NewRouter(doc)
	})
	if specErr != nil {
		t.Fatalf("openapi.yaml: %v", specErr)
	}
	return specRouter
}

// env is a real HTTP server over a real embedded store.
type env struct {
	t     testing.TB
	srv   *httptest.Server
	svc   *app.Service
	store cardflow.Store
	now   time.Time
}

// newEnv starts the API with the outbox and approval links, and opts.
func newEnv(t testing.TB, opts ...httpapi.Option) *env {
	t.Helper()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(store, store, localmode.Config{EarlyResume: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc := st.Service
	api, err := httpapi.New(svc, httpapi.KeyAuthenticator{Service: svc}, append([]httpapi.Option{httpapi.WithOutbox(store), httpapi.WithApprovalLinks()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &env{t: t, srv: srv, svc: svc, store: store, now: time.Now()}
}

// key creates an API key of org with the given scopes.
func (e *env) key(org string, scopes ...string) string {
	e.t.Helper()
	key, _, err := e.svc.CreateKey(context.Background(), app.CreateKeyInput{OrganizationID: org, WorkspaceID: org + "-ws", Scopes: scopes})
	if err != nil {
		e.t.Fatal(err)
	}
	return key
}

// as returns a context acting as an admin of org, for writing fixtures
// through the service.
func as(org string) context.Context {
	return cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{OrganizationID: org, WorkspaceID: org + "-ws", Scopes: cardflow.AllScopes, Actor: "test"})
}

type response struct {
	status int
	body   map[string]any
	raw    []byte
	header http.Header
}

// msg returns the error message of a response.
func (r response) msg() string { s, _ := r.body["message"].(string); return s }

// code returns the error code of a response.
func (r response) code() string { s, _ := r.body["code"].(string); return s }

// do sends a request and validates the response against openapi.yaml.
// body is JSON-encoded unless it is a string or []byte.
func (e *env) do(method, path, key string, body any) response {
	e.t.Helper()
	return e.send(method, path, key, body, nil)
}

// send is do with extra request headers.
func (e *env) send(method, path, key string, body any, header http.Header) response {
	e.t.Helper()
	var reader io.Reader
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.t.Fatal(err)
		}
	}
	if raw != nil {
		reader = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, reader)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	r := response{status: resp.StatusCode, raw: out, header: resp.Header}
	if err := json.Unmarshal(out, &r.body); err != nil {
		e.t.Fatalf("%s %s: response is not a JSON object: %v: %s", method, path, err, out)
	}
	e.validate(req, raw, resp, out)
	return r
}

// specRequest is req as sent to openapi.yaml's first server: the router
// matches servers by host and port, and the test server's port is its own.
func specRequest(req *http.Request) *http.Request {
	r := req.Clone(context.Background())
	r.URL.Scheme, r.URL.Host, r.Host = "http", "127.0.0.1:3000", "127.0.0.1:3000"
	return r
}

// validate checks a response against the operation openapi.yaml documents
// for the request. Requests to paths the API does not have are not checked.
func (e *env) validate(req *http.Request, reqBody []byte, resp *http.Response, body []byte) {
	e.t.Helper()
	router := openapiRouter(e.t)
	req = specRequest(req)
	route, params, err := router.FindRoute(req)
	if err != nil {
		return
	}
	if reqBody != nil {
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status:  resp.StatusCode,
		Header:  resp.Header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		e.t.Errorf("%s %s -> %d does not match openapi.yaml: %v\nbody: %s", req.Method, req.URL.RequestURI(), resp.StatusCode, err, body)
	}
}

// get is do for GET requests with query parameters.
func (e *env) get(path, key string, query ...string) response {
	e.t.Helper()
	q := url.Values{}
	for i := 0; i+1 < len(query); i += 2 {
		q.Set(query[i], query[i+1])
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return e.do("GET", path, key, nil)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func items(r response) []map[string]any {
	list, _ := r.body["items"].([]any)
	out := make([]map[string]any, len(list))
	for i, it := range list {
		out[i], _ = it.(map[string]any)
	}
	return out
}

func keys(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ",")
}
