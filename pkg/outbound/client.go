package outbound

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Defaults of Config.
const (
	DefaultDialTimeout   = 10 * time.Second
	DefaultHeaderTimeout = 30 * time.Second
	DefaultMaxAttempts   = 3
	DefaultBackoff       = 250 * time.Millisecond
	DefaultMaxWait       = 30 * time.Second
	// DefaultMaxBody bounds the response body a step reads.
	DefaultMaxBody = 1 << 20
	maxRedirects   = 10
)

// Config configures the client New builds. Zero fields take the defaults.
type Config struct {
	// Allow lists the refused addresses the deployment may call anyway;
	// nil allows none of them.
	Allow *Policy
	// DialTimeout bounds connecting, TLS handshake included.
	DialTimeout time.Duration
	// HeaderTimeout bounds the wait for the response headers.
	HeaderTimeout time.Duration
	// MaxAttempts bounds the attempts of a retryable call (1: no retries).
	MaxAttempts int
	// Backoff is the wait before the first retry; it doubles each time.
	Backoff time.Duration
	// MaxWait is the longest wait before a retry: a Retry-After asking
	// for more ends the retries and returns the answer.
	MaxWait time.Duration
	// Sleep waits before a retry; tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now reads the clock for Retry-After dates.
	Now func() time.Time
}

func (c *Config) defaults() {
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.HeaderTimeout <= 0 {
		c.HeaderTimeout = DefaultHeaderTimeout
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	if c.MaxWait <= 0 {
		c.MaxWait = DefaultMaxWait
	}
	if c.Sleep == nil {
		c.Sleep = sleep
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// FromEnv returns the client with the allow list of CARDFLOW_OUTBOUND_ALLOW
// and the default timeouts and retries.
func FromEnv() (*http.Client, error) {
	allow, err := ParseAllow(os.Getenv(AllowEnv))
	if err != nil {
		return nil, err
	}
	return New(Config{Allow: allow})
}

// New returns a client that enforces the policy on every connection it
// opens, redirects included, and retries idempotent calls. It ignores proxy
// settings of the environment: a proxy would be the only address checked.
func New(cfg Config) (*http.Client, error) {
	cfg.defaults()
	if cfg.MaxAttempts > 10 {
		return nil, errors.New("outbound: MaxAttempts above 10")
	}
	policy := cfg.Allow
	base := &net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: 30 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		d := *base
		if !policy.AllowsHost(host) {
			// Control sees each resolved address just before connecting,
			// so what is checked is what is dialled.
			d.Control = func(_, address string, _ syscall.RawConn) error { return policy.checkAddress(address) }
		}
		conn, err := d.DialContext(ctx, network, addr)
		var refused *RefusedError
		if errors.As(err, &refused) {
			refused.Host = strings.Trim(host, "[]")
		}
		return conn, err
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dial,
		TLSHandshakeTimeout:   cfg.DialTimeout,
		ResponseHeaderTimeout: cfg.HeaderTimeout,
		ExpectContinueTimeout: time.Second,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   10,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{Transport: &retrying{next: tr, cfg: cfg}, CheckRedirect: checkRedirect}, nil
}

// redirectHeaders are the only headers a redirect to another origin keeps:
// they describe the request, not who sends it. Everything else, whatever
// its name (Authorization, an auth header such as X-API-Key, cookies,
// CSRF tokens, headers filled from templates, Referer), is dropped, since
// any header may carry a secret.
var redirectHeaders = []string{"Accept", "Accept-Language", "Content-Language", "Content-Type", "User-Agent", IdempotencyKeyHeader}

// checkRedirect bounds redirects and keeps the first request's headers
// from leaving its origin. http.Client copies them from the first request
// to every hop and drops only Authorization and cookies on a change of
// host, so once any hop leaves the origin (another host or port, or https
// to http) each later hop keeps redirectHeaders alone.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return fmt.Errorf("refused a redirect to %s: not http or https", req.URL.Scheme)
	}
	first := via[0].URL
	left := !sameOrigin(first, req.URL)
	for _, hop := range via[1:] {
		left = left || !sameOrigin(first, hop.URL)
	}
	if left {
		for k := range req.Header {
			if !slices.Contains(redirectHeaders, http.CanonicalHeaderKey(k)) {
				delete(req.Header, k)
			}
		}
	}
	return nil
}

// sameOrigin reports whether to is where from's headers may go: the same
// host and port, and not https to http.
func sameOrigin(from, to *url.URL) bool {
	return strings.EqualFold(from.Hostname(), to.Hostname()) && port(from) == port(to) &&
		!(from.Scheme == "https" && to.Scheme == "http")
}

// port is u's port, the scheme's default when it names none.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// retrying retries calls that are safe to repeat.
type retrying struct {
	next http.RoundTripper
	cfg  Config
}

// IdempotencyKeyHeader makes a POST or PATCH safe to retry: the receiver can
// recognise the repeat.
const IdempotencyKeyHeader = "Idempotency-Key"

// Retryable reports whether a call may be repeated: GET, HEAD, OPTIONS, PUT
// and DELETE, and other methods only with an Idempotency-Key.
func Retryable(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	}
	return req.Header.Get(IdempotencyKeyHeader) != ""
}

func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	retry := Retryable(req) && replayable
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 {
			r = req.Clone(req.Context())
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		resp, err := t.next.RoundTrip(r)
		if !retry || attempt >= t.cfg.MaxAttempts || req.Context().Err() != nil {
			return resp, err
		}
		wait, again := t.wait(attempt, resp, err)
		if !again {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // drained for reuse, at best
			resp.Body.Close()
		}
		if err := t.cfg.Sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// wait says whether to try again after this answer, and after how long.
func (t *retrying) wait(attempt int, resp *http.Response, err error) (time.Duration, bool) {
	backoff := t.cfg.Backoff << (attempt - 1)
	if backoff > t.cfg.MaxWait {
		backoff = t.cfg.MaxWait
	}
	if err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			return 0, false
		}
		return backoff, true
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		if d, ok := RetryAfter(resp.Header.Get("Retry-After"), t.cfg.Now()); ok {
			return d, d <= t.cfg.MaxWait
		}
		return backoff, true
	case http.StatusBadGateway, http.StatusGatewayTimeout:
		return backoff, true
	}
	return 0, false
}

// RetryAfter reads a Retry-After value: delay seconds or an HTTP date.
func RetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	if d < 0 {
		d = 0
	}
	return d, true
}

// TooLargeError is a response body over the limit.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the response is larger than %d KB, the most a step reads", e.Limit>>10)
}

// ReadBody reads at most limit bytes of a body, and fails with a
// *TooLargeError when there is more.
func ReadBody(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return b, nil
}

// IdempotencyKey derives the Idempotency-Key of one call: the same for
// every retry of a step's call, and for the step run again after a crash
// before its result was recorded; different for each visit of the step
// (scope counts the execution's steps) and for each execution.
func IdempotencyKey(executionID, stepID string, scope int) string {
	sum := sha256.Sum256([]byte(executionID + "\x00" + stepID + "\x00" + strconv.Itoa(scope)))
	return "cf-" + hex.EncodeToString(sum[:16])
}
