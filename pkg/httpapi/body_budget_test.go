package httpapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/httpapi"
)

// budgetEnv is newEnv serving through a server whose budget of request
// bodies in flight is budget bytes, waited for at most wait.
func budgetEnv(t *testing.T, budget int64, wait time.Duration) (*env, *httpapi.Server) {
	t.Helper()
	e := newEnv(t)
	api, err := httpapi.New(e.svc, httpapi.KeyAuthenticator{Service: e.svc}, httpapi.WithBodyBudget(budget, wait))
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(api)
	t.Cleanup(e.srv.Close)
	return e, api
}

// paddedBody is a JSON object of n bytes, which previewCard reads whole
// and refuses (400, an unknown field).
func paddedBody(n int) []byte {
	const head, tail = `{"pad":"`, `"}`
	return []byte(head + strings.Repeat("a", n-len(head)-len(tail)) + tail)
}

// heldRequest is a previewCard request whose client has sent its headers
// and the first byte of its body, so its handler waits for the rest.
type heldRequest struct {
	conn net.Conn
	rest []byte
}

func (e *env) hold(key string, body []byte) *heldRequest {
	e.t.Helper()
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { conn.Close() })
	if _, err := fmt.Fprintf(conn, "POST /v1/adaptive-cards/previewCard HTTP/1.1\r\nHost: cardflow\r\nX-Api-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", key, len(body), body[:1]); err != nil {
		e.t.Fatal(err)
	}
	return &heldRequest{conn: conn, rest: body[1:]}
}

// finish sends the rest of the body and returns the answer's status.
func (h *heldRequest) finish(t *testing.T) int {
	t.Helper()
	if _, err := h.conn.Write(h.rest); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(h.conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// awaitHeld waits until a request in flight holds some of api's budget,
// that is until the server has read its headers.
func awaitHeld(t *testing.T, api *httpapi.Server, budget int64, size int) {
	t.Helper()
	testenv.WaitFor(t, fmt.Sprintf("a request with a %d KB body to hold some of the budget once its headers are sent", size>>10),
		func() bool { return !httpapi.BodyFree(api, budget) })
}

// Concurrent requests hold at most the server's budget of request bodies:
// a request past it waits until one in flight is done, and past the wait
// is answered 503 with Retry-After, whichever endpoint it is for.
func TestRequestBodiesInFlightAreBounded(t *testing.T) {
	t.Parallel()
	const budget = httpapi.MaxBodyBytes
	held, next := paddedBody(200<<10), paddedBody(100<<10)
	const path = "/v1/adaptive-cards/previewCard"

	t.Run("past the wait", func(t *testing.T) {
		e, api := budgetEnv(t, budget, time.Nanosecond)
		key := e.key("org-a", "read")
		a := e.hold(key, held)
		awaitHeld(t, api, budget, len(held))
		r := e.do("POST", path, key, next)
		if r.status != http.StatusServiceUnavailable {
			t.Fatalf("got %d %s for a %d KB body while %d KB were in flight under a budget of %d KB, want 503", r.status, r.raw, len(next)>>10, len(held)>>10, budget>>10)
		}
		if got, want := r.code(), "UNAVAILABLE"; got != want {
			t.Errorf("got code %q, want %q", got, want)
		}
		if got, want := r.header.Get("Retry-After"), "1"; got != want {
			t.Errorf("got Retry-After %q, want %q", got, want)
		}
		if got, want := r.msg(), "the server is busy"; !strings.Contains(got, want) {
			t.Errorf("got message %q, want it to contain %q", got, want)
		}
		if got, want := a.finish(t), http.StatusBadRequest; got != want {
			t.Errorf("the held request: got %d, want %d", got, want)
		}
		// With a's share given back, the same request is served.
		if r := e.do("POST", path, key, next); r.status != http.StatusBadRequest {
			t.Errorf("after the held request: got %d %s, want 400", r.status, r.raw)
		}
	})

	t.Run("within the wait", func(t *testing.T) {
		e, api := budgetEnv(t, budget, time.Hour)
		key := e.key("org-a", "read")
		a := e.hold(key, held)
		awaitHeld(t, api, budget, len(held))
		done := make(chan int, 1)
		go func() {
			req, _ := http.NewRequest("POST", e.srv.URL+path, bytes.NewReader(next))
			req.Header.Set("x-api-key", key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		// The next request waits for a's share; a request without a body
		// still passes meanwhile.
		for httpapi.BodyFree(api, 1) {
			select {
			case got := <-done:
				t.Fatalf("got %d for a %d KB body while %d KB were in flight under a budget of %d KB; want it to wait", got, len(next)>>10, len(held)>>10, budget>>10)
			case <-time.After(time.Millisecond):
			}
		}
		if r := e.get("/v1/adaptive-cards/getOrganizationCards", key); r.status != http.StatusOK {
			t.Errorf("a read while a request waits: got %d %s, want 200", r.status, r.raw)
		}
		if got, want := a.finish(t), http.StatusBadRequest; got != want {
			t.Errorf("the held request: got %d, want %d", got, want)
		}
		if got, want := <-done, http.StatusBadRequest; got != want {
			t.Errorf("the waiting request: got %d, want %d", got, want)
		}
	})
}

// A budget smaller than one body could never admit the largest request.
func TestBodyBudgetHoldsOneBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := httpapi.New(e.svc, httpapi.KeyAuthenticator{Service: e.svc}, httpapi.WithBodyBudget(httpapi.MaxBodyBytes-1, time.Second)); err == nil {
		t.Errorf("got a server with a budget of %d bytes, want an error", httpapi.MaxBodyBytes-1)
	}
}
