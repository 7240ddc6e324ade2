// Package loadgen drives a running cardflow service over HTTP from many
// concurrent connections and measures what it answers: requests per
// second, latency percentiles and errors.
package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Client calls one service with one API key over a pool of kept-alive
// connections.
type Client struct {
	base string
	key  string
	http *http.Client

	mu    sync.Mutex
	conns []*conns
}

// NewClient returns a client of the service at baseURL that keeps up to
// conns connections open, one per concurrent caller.
func NewClient(baseURL, key string, conns int) (*Client, error) {
	if baseURL == "" || key == "" {
		return nil, errors.New("loadgen: a base URL and an API key are needed")
	}
	if conns < 1 {
		return nil, fmt.Errorf("loadgen: %d connections; want at least 1", conns)
	}
	tr := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     time.Minute,
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), key: key, http: &http.Client{Transport: tr, Timeout: time.Minute}}, nil
}

// StatusError is an answer outside 2xx.
type StatusError struct {
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("status %d: %s", e.Status, e.Body)
}

// Call sends a request with in as its JSON body (none when nil) and
// decodes a 2xx answer into out (unless nil). An answer outside 2xx is a
// *StatusError; any other error is a transport error.
func (c *Client) Call(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	b, err := c.call(ctx, c.do, 0, method, path, body)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// call sends a request with body as its JSON body (none when nil) through
// send from worker w, and returns the body of a 2xx answer.
func (c *Client) call(ctx context.Context, send sender, w int, method, path string, body []byte) ([]byte, error) {
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	return send(ctx, w, req)
}

// newRequest returns a request of the service with the API key, and body
// as its JSON body unless nil.
func (c *Client) newRequest(ctx context.Context, method, path string, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-api-key", c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// do is the sender of the Client's pool of connections.
func (c *Client) do(_ context.Context, _ int, req *http.Request) ([]byte, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	// Read whole, so the connection is reused.
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return answer(resp.StatusCode, b)
}

// answer is the body of an answer, or a *StatusError when its status is
// outside 2xx.
func answer(status int, body []byte) ([]byte, error) {
	if status < 200 || status > 299 {
		return nil, &StatusError{Status: status, Body: strings.TrimSpace(string(body[:min(len(body), 512)]))}
	}
	return body, nil
}

// Close closes the idle connections, and those of the Get ops.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.conns {
		p.close()
	}
}

// Result is what one run of an operation measured.
type Result struct {
	Name        string
	Connections int
	// Requests counts every finished call, failed or not.
	Requests int
	// Failed counts answers outside 2xx, Transport calls that got no
	// answer at all.
	Failed, Transport int
	// FirstError is the first failure, to tell what went wrong.
	FirstError string
	Elapsed    time.Duration
	// Latency percentiles over every call, failed ones included.
	P50, P99, Max time.Duration
}

// PerSecond is the rate of finished calls.
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Errors is the number of failed calls of both kinds.
func (r Result) Errors() int { return r.Failed + r.Transport }

func (r Result) String() string {
	s := fmt.Sprintf("%s: %d requests in %s from %d connections, %.0f/s, p50 %s, p99 %s, max %s, %d non-2xx, %d transport errors",
		r.Name, r.Requests, r.Elapsed.Round(time.Millisecond), r.Connections, r.PerSecond(),
		ms(r.P50), ms(r.P99), ms(r.Max), r.Failed, r.Transport)
	if r.FirstError != "" {
		s += " (first: " + r.FirstError + ")"
	}
	return s
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

// Op is one call; worker numbers the connection (0 to conns-1) and i the
// calls of that worker.
type Op func(ctx context.Context, worker, i int) error

// Run calls op from conns workers at once, each calling again as soon as
// its call returns, until d has passed (calls under way then finish and
// count) or ctx is done.
func Run(ctx context.Context, name string, conns int, d time.Duration, op Op) Result {
	return runTaking(ctx, name, conns, d, nil, op)
}

// RunN makes n calls of op from conns workers at once, i numbering the
// calls from 0 to n-1 across workers.
func RunN(ctx context.Context, name string, conns, n int, op Op) Result {
	var mu sync.Mutex
	next := 0
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= n {
			return 0, false
		}
		next++
		return next - 1, true
	}
	return runTaking(ctx, name, conns, 0, take, op)
}

// runTaking runs the workers; with take they make the calls take hands
// out, else they call until d has passed.
func runTaking(ctx context.Context, name string, conns int, d time.Duration, take func() (int, bool), op Op) Result {
	type tally struct {
		lat               []time.Duration
		failed, transport int
		first             error
	}
	tallies := make([]tally, conns)
	start := time.Now()
	end := start.Add(d)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := &tallies[w]
			for i := 0; ctx.Err() == nil; i++ {
				n := i
				if take != nil {
					var ok bool
					if n, ok = take(); !ok {
						return
					}
				} else if !time.Now().Before(end) {
					return
				}
				t0 := time.Now()
				err := op(ctx, w, n)
				t.lat = append(t.lat, time.Since(t0))
				if err == nil {
					continue
				}
				if ctx.Err() != nil {
					// Interrupted, not failed.
					t.lat = t.lat[:len(t.lat)-1]
					return
				}
				if t.first == nil {
					t.first = err
				}
				if se := (*StatusError)(nil); errors.As(err, &se) {
					t.failed++
				} else {
					t.transport++
				}
			}
		}()
	}
	wg.Wait()
	r := Result{Name: name, Connections: conns, Elapsed: time.Since(start)}
	var all []time.Duration
	for _, t := range tallies {
		all = append(all, t.lat...)
		r.Failed += t.failed
		r.Transport += t.transport
		if t.first != nil && r.FirstError == "" {
			r.FirstError = t.first.Error()
		}
	}
	r.Requests = len(all)
	r.P50, r.P99, r.Max = percentiles(all)
	return r
}

// percentiles gives the 50th and 99th percentile (nearest rank) and the
// maximum of lat, which it sorts.
func percentiles(lat []time.Duration) (p50, p99, top time.Duration) {
	if len(lat) == 0 {
		return 0, 0, 0
	}
	slices.Sort(lat)
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(float64(len(lat))*p)) - 1
		return lat[min(max(i, 0), len(lat)-1)]
	}
	return rank(0.50), rank(0.99), lat[len(lat)-1]
}
