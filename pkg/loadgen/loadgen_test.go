package loadgen

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercentiles(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		lat           []time.Duration
		p50, p99, max time.Duration
	}{
		{"none", nil, 0, 0, 0},
		{"one", ms(7), 7 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond},
		{"unsorted four", ms(4, 1, 3, 2), 2 * time.Millisecond, 4 * time.Millisecond, 4 * time.Millisecond},
		{"hundred", ms(seq(100)...), 50 * time.Millisecond, 99 * time.Millisecond, 100 * time.Millisecond},
		{"thousand", ms(seq(1000)...), 500 * time.Millisecond, 990 * time.Millisecond, 1000 * time.Millisecond},
	} {
		p50, p99, top := percentiles(tc.lat)
		if p50 != tc.p50 || p99 != tc.p99 || top != tc.max {
			t.Errorf("%s: got p50 %v, p99 %v, max %v; want %v, %v, %v", tc.name, p50, p99, top, tc.p50, tc.p99, tc.max)
		}
	}
}

// seq is 1 to n, reversed so percentiles must sort.
func seq(n int) []int {
	out := make([]int, n)
	for i := range n {
		out[i] = n - i
	}
	return out
}

// TestRunCountsErrors calls a server that answers 200, 500 and, for every
// third request, drops the connection without an answer.
func TestRunCountsErrors(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != "k" {
			t.Errorf("got x-api-key %q, want k", r.Header.Get("x-api-key"))
		}
		switch r.URL.Query().Get("answer") {
		case "500":
			http.Error(w, `{"message":"broken"}`, 500)
		case "drop":
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		default:
			n.Add(1)
			w.Write([]byte(`{}`))
		}
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, "k", 3)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	answers := []string{"200", "500", "drop"}
	r := RunN(context.Background(), "mixed", 3, 30, func(ctx context.Context, _, i int) error {
		return c.Call(ctx, "GET", "/?answer="+answers[i%3], nil, nil)
	})
	if got, want := [4]int{r.Requests, r.Failed, r.Transport, int(n.Load())}, [4]int{30, 10, 10, 10}; got != want {
		t.Errorf("got requests, non-2xx, transport errors, answered %v, want %v", got, want)
	}
	if r.FirstError == "" || r.Errors() != 20 {
		t.Errorf("got first error %q and %d errors, want one named and 20", r.FirstError, r.Errors())
	}
	if r.P50 <= 0 || r.P99 < r.P50 || r.Max < r.P99 {
		t.Errorf("got p50 %v, p99 %v, max %v; want 0 < p50 <= p99 <= max", r.P50, r.P99, r.Max)
	}
}

// TestRunN checks that every call number is handed out exactly once.
func TestRunN(t *testing.T) {
	var mu sync.Mutex
	var got []int
	r := RunN(context.Background(), "count", 4, 100, func(_ context.Context, w, i int) error {
		if w < 0 || w >= 4 {
			t.Errorf("got worker %d, want 0 to 3", w)
		}
		mu.Lock()
		got = append(got, i)
		mu.Unlock()
		return nil
	})
	slices.Sort(got)
	want := make([]int, 100)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(got, want) || r.Requests != 100 {
		t.Errorf("got calls %v (%d requests), want 0 to 99 once each", got, r.Requests)
	}
}

// TestRunStops checks that a timed run ends and that an interrupted call
// does not count as a failure.
func TestRunStops(t *testing.T) {
	r := Run(context.Background(), "timed", 2, 50*time.Millisecond, func(context.Context, int, int) error {
		time.Sleep(time.Millisecond)
		return nil
	})
	if r.Requests == 0 || r.Elapsed < 50*time.Millisecond || r.Elapsed > 5*time.Second {
		t.Errorf("got %d requests in %v, want some in about 50ms", r.Requests, r.Elapsed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	r = Run(ctx, "cancelled", 2, time.Hour, func(ctx context.Context, _, _ int) error {
		<-ctx.Done()
		return ctx.Err()
	})
	if r.Errors() != 0 {
		t.Errorf("got %d errors after cancelling, want 0", r.Errors())
	}
}

func TestNewClientRefuses(t *testing.T) {
	for _, tc := range []struct {
		url, key string
		conns    int
	}{{"", "k", 1}, {"http://x", "", 1}, {"http://x", "k", 0}} {
		if _, err := NewClient(tc.url, tc.key, tc.conns); err == nil {
			t.Errorf("NewClient(%q, %q, %d): got no error", tc.url, tc.key, tc.conns)
		}
	}
}

// TestGet reads over a connection per worker: answers counted as Call
// counts them, connections kept alive, dropped ones dialed again.
func TestGet(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != "k" {
			t.Errorf("got x-api-key %q, want k", r.Header.Get("x-api-key"))
		}
		switch r.URL.Path {
		case "/fail":
			http.Error(w, `{"message":"broken"}`, 500)
		case "/drop":
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		case "/close":
			w.Header().Set("Connection", "close")
			w.Write([]byte(`{}`))
		case "/slow":
			<-r.Context().Done()
		default:
			w.Write([]byte(`{"item":"` + strings.Repeat("x", 10_000) + `"}`))
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := NewClient(srv.URL, "k", 3)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		path                        string
		failed, transport, maxConns int
		first                       string
	}{
		{"/ok", 0, 0, 3, ""},
		{"/fail", 30, 0, 3, `status 500: {"message":"broken"}`},
		{"/drop", 0, 30, 30, "EOF"},
		{"/close", 0, 0, 30, ""},
	} {
		conns.Store(0)
		r := RunN(t.Context(), tc.path, 3, 30, c.Get(tc.path))
		if got, want := [3]int{r.Requests, r.Failed, r.Transport}, [3]int{30, tc.failed, tc.transport}; got != want {
			t.Errorf("%s: got requests, non-2xx, transport errors %v, want %v", tc.path, got, want)
		}
		if n := conns.Load(); n > int64(tc.maxConns) {
			t.Errorf("%s: got %d connections, want at most %d", tc.path, n, tc.maxConns)
		}
		if !strings.Contains(r.FirstError, tc.first) {
			t.Errorf("%s: got first error %q, want one with %q", tc.path, r.FirstError, tc.first)
		}
	}

	// A kept-alive connection the server closed is dialed again.
	get := c.Get("/ok")
	if err := get(t.Context(), 0, 0); err != nil {
		t.Fatal(err)
	}
	srv.CloseClientConnections()
	if err := get(t.Context(), 0, 1); err != nil {
		t.Errorf("after the server closed the connection: got %v, want the read done on a new one", err)
	}

	// A call under way when the run ends is interrupted, not failed.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if r := Run(ctx, "slow", 2, time.Hour, c.Get("/slow")); r.Errors() != 0 {
		t.Errorf("got %d errors after cancelling, want 0", r.Errors())
	}
}
