// Package webhooks delivers events to the webhooks organizations configure
// in local mode: a POST of the event as JSON, signed with HMAC-SHA256 under
// the webhook's secret, retried with exponential backoff until the
// receiver answers 2xx. It is the outbox relay's publisher there.
package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Headers of a delivery.
const (
	HeaderEventID   = "X-Cardflow-Event-Id"
	HeaderTimestamp = "X-Cardflow-Timestamp"
	HeaderSignature = "X-Cardflow-Signature"
)

// Sign returns the X-Cardflow-Signature of a delivery: "sha256=" and the
// hex HMAC-SHA256, under secret, of the timestamp header's value, a "."
// and the body. Signing the timestamp with the body is what makes it
// stop replays: an old delivery sent again keeps its old timestamp.
func Sign(secret string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(timestamp, 10)))
	m.Write([]byte("."))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a delivery as a receiver should: the signature matches and
// the timestamp is within tolerance of now.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
	if err != nil {
		return errors.New("webhooks: no timestamp")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return errors.New("webhooks: timestamp too far from now")
	}
	if !hmac.Equal([]byte(h.Get(HeaderSignature)), []byte(Sign(secret, ts, body))) {
		return errors.New("webhooks: signature does not match")
	}
	return nil
}

// Webhooks lists an organization's webhooks; cardflow.EventStore has it.
type Webhooks interface {
	ListWebhooks(ctx context.Context, org string) ([]*cardflow.Webhook, error)
}

// Backoff defaults: the first retry after a second, each next one twice as
// late, at most an hour apart; retries go on until the receiver answers.
const (
	DefaultFirstRetry = time.Second
	DefaultMaxRetry   = time.Hour
	// DefaultParallel bounds the deliveries in flight.
	DefaultParallel = 16
)

// Publisher delivers events to their organization's webhooks.
type Publisher struct {
	hooks    Webhooks
	client   *http.Client
	now      func() time.Time
	log      *slog.Logger
	first    time.Duration
	most     time.Duration
	parallel int

	mu sync.Mutex
	// state is what is known of each pending event's deliveries since
	// this process started: which webhooks took it, when to try the
	// others again. A restart forgets it and delivers again.
	state map[string]*pending
}

type pending struct {
	done     map[string]bool // webhook ids that answered 2xx
	attempts int
	next     time.Time
}

// Option configures a Publisher.
type Option func(*Publisher)

// WithClock replaces the wall clock that retries are timed by.
func WithClock(now func() time.Time) Option { return func(p *Publisher) { p.now = now } }

// WithHTTPClient sets the client deliveries use.
func WithHTTPClient(c *http.Client) Option { return func(p *Publisher) { p.client = c } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(p *Publisher) { p.log = l } }

// WithBackoff sets the wait before the first retry and the longest wait.
func WithBackoff(first, most time.Duration) Option {
	return func(p *Publisher) { p.first, p.most = first, most }
}

// New returns a publisher to the webhooks hooks lists.
func New(hooks Webhooks, opts ...Option) (*Publisher, error) {
	if hooks == nil {
		return nil, errors.New("webhooks: a webhook store is required")
	}
	// Deliveries run in parallel: keep a connection per delivery in
	// flight, where the default transport keeps two per host and closes
	// the rest after each request.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = DefaultParallel
	p := &Publisher{
		hooks: hooks, client: &http.Client{Timeout: 10 * time.Second, Transport: transport}, now: time.Now, log: slog.Default(),
		first: DefaultFirstRetry, most: DefaultMaxRetry, parallel: DefaultParallel, state: map[string]*pending{},
	}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// Publish delivers each event that is due to every webhook of its
// organization that has not taken it yet. An event is published once all
// have taken it (or its organization has none); one that any refused waits
// for its next retry, with the receivers that took it not asked again.
func (p *Publisher) Publish(ctx context.Context, events []*cardflow.Published) ([]*cardflow.Published, error) {
	now := p.now()
	hooks := map[string][]*cardflow.Webhook{}
	var due []*cardflow.Published
	for _, ev := range events {
		if st := p.get(ev.ID); st != nil && now.Before(st.next) {
			continue
		}
		if _, ok := hooks[ev.OrganizationID]; !ok {
			list, err := p.hooks.ListWebhooks(ctx, ev.OrganizationID)
			if err != nil {
				return nil, err
			}
			hooks[ev.OrganizationID] = list
		}
		due = append(due, ev)
	}
	type job struct {
		ev *cardflow.Published
		w  *cardflow.Webhook
	}
	var jobs []job
	for _, ev := range due {
		st := p.get(ev.ID)
		for _, w := range hooks[ev.OrganizationID] {
			if st == nil || !st.done[w.WebhookID] {
				jobs = append(jobs, job{ev, w})
			}
		}
	}
	results := make([]error, len(jobs))
	sem := make(chan struct{}, p.parallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = p.deliver(ctx, j.w, j.ev)
		}()
	}
	wg.Wait()

	failed := map[string]bool{}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, j := range jobs {
		st := p.state[j.ev.ID]
		if st == nil {
			st = &pending{done: map[string]bool{}}
			p.state[j.ev.ID] = st
		}
		if results[i] == nil {
			st.done[j.w.WebhookID] = true
			continue
		}
		if !failed[j.ev.ID] {
			failed[j.ev.ID] = true
			st.attempts++
			st.next = now.Add(p.backoff(st.attempts))
		}
		p.log.WarnContext(ctx, "webhook delivery failed; it is retried", "webhook", j.w.WebhookID, "event", j.ev.ID,
			"attempt", st.attempts, "retry_at", st.next, "error", results[i])
	}
	var out []*cardflow.Published
	for _, ev := range due {
		if !failed[ev.ID] {
			out = append(out, ev)
			delete(p.state, ev.ID)
		}
	}
	return out, nil
}

func (p *Publisher) get(id string) *pending {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state[id]
}

// backoff is the wait before retry n (from 1): first, doubled each time,
// at most most, less up to a fifth at random so that retries spread out.
func (p *Publisher) backoff(n int) time.Duration {
	d := p.most
	if n < 32 {
		d = min(p.first<<(n-1), p.most)
	}
	return d - rand.N(d/5+1)
}

// deliver posts one event to one webhook. Its errors name the webhook's
// id and the answer's status, never the secret.
func (p *Publisher) deliver(ctx context.Context, w *cardflow.Webhook, ev *cardflow.Published) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	ts := p.now().Unix()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook %s: %w", w.WebhookID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "cardflow-webhooks")
	req.Header.Set(HeaderEventID, ev.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(w.Secret, ts, body))
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", w.WebhookID, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook %s answered %s", w.WebhookID, strings.TrimSpace(resp.Status))
	}
	return nil
}
