// Package webhooks delivers events to the webhooks organizations configure
// in local mode: a POST of the event as JSON, signed under the webhook's
// secret as the Standard Webhooks specification says, retried with
// exponential backoff until the receiver answers 2xx. It is the outbox
// relay's publisher there.
package webhooks

import (
	"bytes"
	"context"
	"encoding/base64"
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

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Headers of a delivery, as the Standard Webhooks specification names them
// (https://www.standardwebhooks.com/).
const (
	HeaderEventID   = standardwebhooks.HeaderWebhookID
	HeaderTimestamp = standardwebhooks.HeaderWebhookTimestamp
	HeaderSignature = standardwebhooks.HeaderWebhookSignature
)

// Key returns the HMAC key of a secret. A secret in the specification's
// form is "whsec_" and the key in standard base64; secrets cardflow made
// before it followed the specification are the key in URL-safe base64 and
// still sign; any other string is the key itself.
func Key(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if k, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return k
		}
		if k, err := base64.RawURLEncoding.DecodeString(rest); err == nil {
			return k
		}
	}
	return []byte(secret)
}

// Sign returns the webhook-signature header of a delivery: for each secret,
// "v1," and the base64 HMAC-SHA256 under its key of the message id, the
// timestamp and the body, joined by "."; several are space-separated. A
// receiver accepts the delivery when one of them verifies, which is how a
// rotated secret and its predecessor both sign for a while. Signing the id
// and the timestamp with the body stops replays: an old delivery sent
// again keeps its old timestamp.
func Sign(secrets []string, id string, timestamp time.Time, body []byte) (string, error) {
	sigs := make([]string, 0, len(secrets))
	for _, secret := range secrets {
		wh, err := standardwebhooks.NewWebhookRaw(Key(secret))
		if err != nil {
			return "", err
		}
		sig, err := wh.Sign(id, timestamp, body)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// Verify checks a delivery as a receiver should: one of its signatures is
// secret's and the timestamp is within tolerance of now. The Standard
// Webhooks libraries' Verify does the same against the wall clock.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(h.Get(HeaderTimestamp), 10, 64)
	if err != nil {
		return errors.New("webhooks: no timestamp")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return errors.New("webhooks: timestamp too far from now")
	}
	wh, err := standardwebhooks.NewWebhookRaw(Key(secret))
	if err != nil {
		return err
	}
	if err := wh.VerifyIgnoringTimestamp(body, h); err != nil {
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
	// DefaultParallel bounds the deliveries in flight to one
	// organization's webhooks.
	DefaultParallel = 16
	// DefaultQueue bounds the deliveries queued for one organization;
	// events past it stay in the outbox for a later pass.
	DefaultQueue = 1000
	// DefaultTimeout bounds one delivery, connecting to reading the answer.
	DefaultTimeout = 10 * time.Second
)

// Publisher delivers events to their organization's webhooks. Each
// organization has its own queue and its own workers, at most parallel of
// them: a receiver that is slow or down holds back only its own
// organization's deliveries, never another's, and never the relay, which
// Publish does not keep waiting for a delivery.
type Publisher struct {
	hooks    Webhooks
	client   *http.Client
	now      func() time.Time
	log      *slog.Logger
	first    time.Duration
	most     time.Duration
	parallel int
	queueMax int
	notify   func()

	// ctx is what deliveries run under; Close ends it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu sync.Mutex
	// state is what is known of each pending event's deliveries since
	// this process started: which webhooks took it, whether some are in
	// flight, when to try the others again. A restart forgets it and
	// delivers again.
	state map[string]*pending
	orgs  map[string]*orgQueue
}

type pending struct {
	done     map[string]bool // webhook ids that answered 2xx
	inFlight int             // deliveries of this round queued or under way
	failed   bool            // a delivery of this round failed
	attempts int
	next     time.Time
}

// orgQueue is one organization's deliveries waiting for a worker.
type orgQueue struct {
	jobs    []job
	workers int
}

type job struct {
	ev *cardflow.Published
	w  *cardflow.Webhook
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

// WithParallel sets how many deliveries to one organization's webhooks
// are in flight at once (default DefaultParallel).
func WithParallel(n int) Option { return func(p *Publisher) { p.parallel = max(1, n) } }

// WithNotify sets what the publisher calls when an event's deliveries of
// a round have all answered: the relay's Wake, so that a delivered event
// leaves the outbox at once rather than at the next tick.
func WithNotify(f func()) Option { return func(p *Publisher) { p.notify = f } }

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
	ctx, cancel := context.WithCancel(context.Background())
	p := &Publisher{
		hooks: hooks, client: &http.Client{Timeout: DefaultTimeout, Transport: transport}, now: time.Now, log: slog.Default(),
		first: DefaultFirstRetry, most: DefaultMaxRetry, parallel: DefaultParallel, queueMax: DefaultQueue,
		ctx: ctx, cancel: cancel, state: map[string]*pending{}, orgs: map[string]*orgQueue{},
	}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// Close stops the deliveries in flight and waits for the workers: their
// events stay in the outbox and are delivered after a restart.
func (p *Publisher) Close() {
	p.cancel()
	p.wg.Wait()
}

// Publish returns the events whose every webhook has taken them (or whose
// organization has none), and queues to their organization's workers the
// deliveries of the others that are due, without waiting for them: what
// they deliver is returned by a later call. An event with deliveries in
// flight or waiting for a retry is left alone; the receivers that took an
// event are not asked again.
func (p *Publisher) Publish(ctx context.Context, events []*cardflow.Published) ([]*cardflow.Published, error) {
	now := p.now()
	var due []*cardflow.Published
	hooks := map[string][]*cardflow.Webhook{}
	p.mu.Lock()
	for _, ev := range events {
		if st := p.state[ev.ID]; st != nil && (st.inFlight > 0 || now.Before(st.next)) {
			continue
		}
		due = append(due, ev)
		hooks[ev.OrganizationID] = nil
	}
	p.mu.Unlock()
	for org := range hooks {
		list, err := p.hooks.ListWebhooks(ctx, org)
		if err != nil {
			return nil, err
		}
		hooks[org] = list
	}

	var out []*cardflow.Published
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ev := range due {
		st := p.state[ev.ID]
		var queued []job
		for _, w := range hooks[ev.OrganizationID] {
			if st == nil || !st.done[w.WebhookID] {
				queued = append(queued, job{ev, w})
			}
		}
		if len(queued) == 0 {
			out = append(out, ev)
			delete(p.state, ev.ID)
			continue
		}
		q := p.orgs[ev.OrganizationID]
		if q == nil {
			q = &orgQueue{}
			p.orgs[ev.OrganizationID] = q
		}
		if len(q.jobs)+len(queued) > p.queueMax {
			continue // the organization's queue is full: a later pass
		}
		if st == nil {
			st = &pending{done: map[string]bool{}}
			p.state[ev.ID] = st
		}
		st.inFlight, st.failed = len(queued), false
		q.jobs = append(q.jobs, queued...)
		for q.workers < p.parallel && q.workers < len(q.jobs) {
			q.workers++
			p.wg.Add(1)
			go p.work(ev.OrganizationID, q)
		}
	}
	return out, nil
}

// work delivers the jobs of one organization's queue until it is empty.
func (p *Publisher) work(org string, q *orgQueue) {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		if len(q.jobs) == 0 || p.ctx.Err() != nil {
			q.workers--
			if q.workers == 0 && p.orgs[org] == q {
				delete(p.orgs, org)
			}
			// Jobs left by a Close are forgotten with their events' state:
			// the events stay in the outbox.
			for _, j := range q.jobs {
				delete(p.state, j.ev.ID)
			}
			q.jobs = nil
			p.mu.Unlock()
			return
		}
		j := q.jobs[0]
		q.jobs[0] = job{}
		q.jobs = q.jobs[1:]
		p.mu.Unlock()

		err := p.deliver(p.ctx, j.w, j.ev)

		p.mu.Lock()
		st := p.state[j.ev.ID]
		if st == nil {
			p.mu.Unlock()
			continue
		}
		if err == nil {
			st.done[j.w.WebhookID] = true
		} else {
			if !st.failed {
				st.failed = true
				st.attempts++
				st.next = p.now().Add(p.backoff(st.attempts))
			}
			p.log.WarnContext(p.ctx, "webhook delivery failed; it is retried", "webhook", j.w.WebhookID, "event", j.ev.ID,
				"attempt", st.attempts, "retry_at", st.next, "error", err)
		}
		st.inFlight--
		round := st.inFlight == 0
		p.mu.Unlock()
		if round && p.notify != nil {
			p.notify()
		}
	}
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
	now := p.now()
	sig, err := Sign(w.Secrets(now), ev.ID, now, body)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", w.WebhookID, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook %s: %w", w.WebhookID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "cardflow-webhooks")
	// The event's id is the message id: the same on every retry, so the
	// receiver deduplicates by it.
	req.Header.Set(HeaderEventID, ev.ID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", w.WebhookID, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // drained for reuse, at best
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook %s answered %s", w.WebhookID, strings.TrimSpace(resp.Status))
	}
	return nil
}
