package loadgen

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
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

// approvalServer answers the calls of a round trip as the service would,
// each trigger's execution taking one of the ways its number picks (see
// the rt constants), and counts the executions of each way.
type approvalServer struct {
	t     *testing.T
	mu    sync.Mutex
	execs map[string]*fakeExecution // by execution id
	pids  map[string]string         // execution id by process id
	ways  [rtWays]int
	waits map[string]int // waitForExecution calls by execution id
}

// The ways of a round trip in approvalServer.
const (
	rtSucceeds         = iota
	rtTriggerRefused   // the trigger answers 500
	rtResumeRefused    // the resume answers 409; the execution stays WAITING
	rtWaitDropped      // every wait loses its connection without an answer
	rtFails            // the execution ends FAILED
	rtConnectionClosed // the final wait's connection is closed after it
	rtWays
)

type fakeExecution struct {
	way     int
	status  string
	resumed bool
}

func newApprovalServer(t *testing.T) *approvalServer {
	return &approvalServer{t: t, execs: map[string]*fakeExecution{}, pids: map[string]string{}, waits: map[string]int{}}
}

func (s *approvalServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("x-api-key") != "k" {
		s.t.Errorf("%s: got x-api-key %q, want k", r.URL.Path, r.Header.Get("x-api-key"))
	}
	body, _ := io.ReadAll(r.Body)
	if r.Method == "POST" && r.Header.Get("Content-Type") != "application/json" {
		s.t.Errorf("%s: got Content-Type %q, want application/json", r.URL.Path, r.Header.Get("Content-Type"))
	}
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.Method == "POST" && r.URL.Path == "/v1/workflows/triggerworkflow/wf":
		if got, want := string(body), `{"amount":4800}`; got != want {
			s.t.Errorf("trigger: got body %s, want %s", got, want)
		}
		pid := q.Get("process_id")
		if _, dup := s.pids[pid]; dup || pid == "" {
			s.t.Errorf("trigger: got process id %q again or empty", pid)
		}
		n := len(s.pids)
		s.ways[n%rtWays]++
		id := "e" + strconv.Itoa(n)
		s.pids[pid] = id
		if n%rtWays == rtTriggerRefused {
			http.Error(w, `{"message":"broken"}`, 500)
			return
		}
		s.execs[id] = &fakeExecution{way: n % rtWays, status: "WAITING"}
		w.Write([]byte(`{"message":"started","service_execution_id":"` + id + `"}`))
	case r.Method == "POST" && strings.HasPrefix(r.URL.Path, "/v1/workflows/resumeworkflow/"):
		if got, want := string(body), `{"decision":"approve","source":"TEAMS"}`; got != want {
			s.t.Errorf("resume: got body %s, want %s", got, want)
		}
		e := s.execs[s.pids[strings.TrimPrefix(r.URL.Path, "/v1/workflows/resumeworkflow/")]]
		if e == nil || e.way == rtResumeRefused {
			http.Error(w, `{"message":"no card waits"}`, http.StatusConflict)
			return
		}
		e.resumed, e.status = true, "RUNNING"
		w.Write([]byte(`{"message":"resumed"}`))
	case r.Method == "GET" && r.URL.Path == "/v1/workflows/waitForExecution":
		id := q.Get("workflow_execution_id")
		e := s.execs[id]
		s.waits[id]++
		if e == nil || !e.resumed || q.Get("until") != "final" || q.Get("workflow_id") != "wf" {
			s.t.Errorf("wait %s: got %q for an execution not resumed", id, r.URL.RawQuery)
			return
		}
		if e.way == rtWaitDropped {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		// The first wait sees it running still, the next one final.
		ans := `{"message":"success","item":{"workflow_id":"wf","log":{"status":"SUCCEEDED"},"status":"` + e.status + `","steps":[{"status":"SUCCEEDED"}]}}`
		if e.status == "RUNNING" {
			e.status = "SUCCEEDED"
			if e.way == rtFails {
				e.status = "FAILED"
			}
		} else if e.way == rtConnectionClosed {
			// Answered as if kept alive, then closed: the worker's next
			// request finds the connection closed.
			conn, bw, _ := w.(http.Hijacker).Hijack()
			fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(ans), ans)
			bw.Flush()
			conn.Close()
			return
		}
		w.Write([]byte(ans))
	case r.Method == "GET" && r.URL.Path == "/v1/workflows/getWorkflowExecutionById":
		e := s.execs[q.Get("workflow_execution_id")]
		switch {
		case e == nil:
			http.Error(w, `{"message":"not found"}`, 404)
		case e.way == rtWaitDropped:
			w.Write([]byte(`{"item":{"status":"SUCCEEDED"}}`))
		default:
			w.Write([]byte(`{"item":{"status":"` + e.status + `"}}`))
		}
	default:
		s.t.Errorf("got %s %s, want a call of a round trip", r.Method, r.URL)
		http.Error(w, "", 404)
	}
}

// TestRoundTrips runs round trips against a server that takes every way
// an approval can go: errors and non-2xx counted as Call counts them,
// connections kept alive per client and dialed again when the server
// closed them, and every execution read back for its final status.
func TestRoundTrips(t *testing.T) {
	as := newApprovalServer(t)
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(as)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	const clients = 3
	c, err := NewClient(srv.URL, "k", clients)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d := 300 * time.Millisecond
	res := RoundTrips(t.Context(), c, clients, d, "wf", map[string]int{"amount": 4800}, time.Now().Add(d+200*time.Millisecond))

	as.mu.Lock()
	defer as.mu.Unlock()
	k := as.ways
	n := len(as.pids)
	if k[rtConnectionClosed] == 0 {
		t.Fatalf("got %d round trips, want every way taken: %v", n, k)
	}
	a, e := res.Approvals, res.ResumeToEnd
	if got, want := [3]int{a.Requests, a.Failed, a.Transport}, [3]int{n, k[rtTriggerRefused] + k[rtResumeRefused], k[rtWaitDropped] + k[rtFails]}; got != want {
		t.Errorf("approvals: got round trips, non-2xx, transport errors %v, want %v", got, want)
	}
	if got, want := [3]int{e.Requests, e.Failed, e.Transport}, [3]int{n - k[rtTriggerRefused], k[rtResumeRefused], k[rtWaitDropped]}; got != want {
		t.Errorf("resume to end: got calls, non-2xx, transport errors %v, want %v", got, want)
	}
	if a.FirstError == "" || e.FirstError == "" || a.P50 <= 0 || e.P50 <= 0 || e.Max > a.Max {
		t.Errorf("got first errors %q, %q and max %v, %v; want errors named, resume to end within the round trip", a.FirstError, e.FirstError, e.Max, a.Max)
	}
	o := res.Outcome
	if got, want := [5]int{res.Started, o.Statuses["SUCCEEDED"], o.Statuses["FAILED"], o.Open, o.Lost}, [5]int{n - k[rtTriggerRefused], k[rtSucceeds] + k[rtWaitDropped] + k[rtConnectionClosed], k[rtFails], k[rtResumeRefused], 0}; got != want {
		t.Errorf("got started, SUCCEEDED, FAILED, open, lost %v, want %v", got, want)
	}
	// Every wait is answered, RUNNING then final, but a dropped one, which
	// is sent once more on a new connection.
	for id, ex := range as.execs {
		want := map[int]int{rtSucceeds: 2, rtWaitDropped: 2, rtFails: 2, rtConnectionClosed: 2}[ex.way]
		if as.waits[id] != want {
			t.Errorf("execution %s (way %d): got %d waits, want %d", id, ex.way, as.waits[id], want)
		}
	}
	// A client's calls share its connection: new ones only where the
	// server dropped or closed one, and those of the final reads.
	if got, most := conns.Load(), int64(2*clients+2*k[rtWaitDropped]+k[rtConnectionClosed]); got > most {
		t.Errorf("got %d connections, want at most %d", got, most)
	}
}

// TestStringAt reads one string of an answer, past values of any kind and
// nested names alike, and refuses answers without it.
func TestStringAt(t *testing.T) {
	for _, tc := range []struct {
		answer, want string
		fail         bool
	}{
		{`{"item":{"status":"SUCCEEDED"}}`, "SUCCEEDED", false},
		{` {"message":"success","item":{"id":"e1","n":2,"ok":true,"none":null,"log":{"status":"RUNNING"},"steps":[{"status":"RUNNING"}],"status":"WAITING","modified_on":1}}`, "WAITING", false},
		{`{"item":{"status":"FAILED"},"item":{"status":"RUNNING"}}`, "FAILED", false},
		{`{"item":{"status":"A\u0042\n"}}`, "AB\n", false},
		{`{"item":{"log":{"status":"RUNNING"}}}`, "", true},
		{`{"status":"RUNNING"}`, "", true},
		{`{"item":{"status":3}}`, "", true},
		{`{"item":["status","RUNNING"]}`, "", true},
		{`{"item":{"log":[1,}`, "", true},
		{``, "", true},
	} {
		got, err := stringAt([]byte(tc.answer), "item", "status")
		if got != tc.want || (err != nil) != tc.fail {
			t.Errorf("%s: got %q, %v; want %q, failing %v", tc.answer, got, err, tc.want, tc.fail)
		}
	}
}
