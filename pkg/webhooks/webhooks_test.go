package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/webhooks"
)

type hooks map[string][]*cardflow.Webhook

func (h hooks) ListWebhooks(_ context.Context, org string) ([]*cardflow.Webhook, error) {
	return h[org], nil
}

// receiver records verified deliveries and refuses the first `refuse`.
type receiver struct {
	t      *testing.T
	secret string
	now    func() time.Time
	mu     sync.Mutex
	refuse int
	got    []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if err := webhooks.Verify(r.secret, req.Header, body, r.now(), 5*time.Minute); err != nil {
		r.t.Errorf("delivery does not verify: %v", err)
	}
	var ev cardflow.Published
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID != req.Header.Get(webhooks.HeaderEventID) {
		r.t.Errorf("got body %s with id header %q, want the event with that id", body, req.Header.Get(webhooks.HeaderEventID))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse > 0 {
		r.refuse--
		http.Error(w, "not now", http.StatusServiceUnavailable)
		return
	}
	r.got = append(r.got, ev.ID)
}

func (r *receiver) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// rounds counts the rounds of deliveries the publisher finished: its
// notify is called once an event's deliveries of a round have answered.
type rounds chan struct{}

func (r rounds) notify() { r <- struct{}{} }

// wait waits for n rounds to finish.
func (r rounds) wait(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-r:
		case <-time.After(10 * time.Second):
			t.Fatalf("a round of deliveries did not finish")
		}
	}
}

func TestRetriesWithBackoffUntilEveryWebhookTakesIt(t *testing.T) {
	t.Parallel()
	clock := time.Unix(1_800_000_000, 0)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	flaky := &receiver{t: t, secret: "flaky-secret-value", now: now, refuse: 2}
	steady := &receiver{t: t, secret: "steady-secret-value", now: now}
	a, b := httptest.NewServer(flaky), httptest.NewServer(steady)
	defer a.Close()
	defer b.Close()
	var logs syncBuffer
	done := make(rounds, 10)
	p, err := webhooks.New(hooks{"org-1": {
		{WebhookID: "W1", OrganizationID: "org-1", URL: a.URL, Secret: flaky.secret},
		{WebhookID: "W2", OrganizationID: "org-1", URL: b.URL, Secret: steady.secret},
	}}, webhooks.WithClock(now), webhooks.WithBackoff(time.Second, time.Minute), webhooks.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		webhooks.WithNotify(done.notify))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ev := &cardflow.Published{ID: "X-000001", Type: cardflow.EventTypeStarted, OrganizationID: "org-1"}
	other := &cardflow.Published{ID: "Y-000001", Type: cardflow.EventTypeStarted, OrganizationID: "org-2"}

	// Publish queues the deliveries that are due and returns the events
	// every webhook took in rounds before.
	steps := []struct {
		advance       time.Duration
		wantPublished int
		wantRounds    int
		wantFlaky     int
	}{
		{0, 1, 1, 0},                       // refused once; org-2 has no webhook, so its event is done
		{500 * time.Millisecond, 0, 0, 0},  // not due yet: no request
		{600 * time.Millisecond, 0, 1, 0},  // due (1 s), refused again
		{time.Second, 0, 0, 0},             // the second retry waits about 2 s
		{1500 * time.Millisecond, 0, 1, 1}, // taken
		{0, 1, 0, 1},                       // every webhook took it: published
	}
	pendingEvents := []*cardflow.Published{ev, other}
	for i, s := range steps {
		mu.Lock()
		clock = clock.Add(s.advance)
		mu.Unlock()
		out, err := p.Publish(t.Context(), pendingEvents)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		done.wait(t, s.wantRounds)
		if len(out) != s.wantPublished {
			t.Errorf("step %d: got %d published, want %d", i, len(out), s.wantPublished)
		}
		if got := len(flaky.ids()); got != s.wantFlaky {
			t.Errorf("step %d: flaky receiver got %d, want %d", i, got, s.wantFlaky)
		}
		pendingEvents = []*cardflow.Published{ev}
	}
	if got := steady.ids(); len(got) != 1 {
		t.Errorf("steady receiver got %v, want the event once: a receiver that took it is not asked again", got)
	}
	for _, secret := range []string{flaky.secret, steady.secret} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds a webhook's secret: %s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), "W1") {
		t.Errorf("got log %q, want the failed webhook named", logs.String())
	}
}

// syncBuffer is a log buffer the delivery workers may write to at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSlowReceiverHoldsBackNoOtherOrganization: one organization's
// receiver holds every delivery; another organization's events are
// delivered and published meanwhile, and Publish never waits for the held
// ones. Once the held receiver answers, its events are published too.
func TestSlowReceiverHoldsBackNoOtherOrganization(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var held sync.WaitGroup
	held.Add(1)
	var once sync.Once
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(held.Done)
		<-release
	}))
	defer slow.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	fast := &receiver{t: t, secret: "fast-secret-value", now: time.Now}
	srv := httptest.NewServer(fast)
	defer srv.Close()
	done := make(rounds, 100)
	// No client timeout: only the receiver ends a delivery.
	p, err := webhooks.New(hooks{
		"slow-org": {{WebhookID: "W1", OrganizationID: "slow-org", URL: slow.URL, Secret: "slow-secret-value"}},
		"fast-org": {{WebhookID: "W2", OrganizationID: "fast-org", URL: srv.URL, Secret: fast.secret}},
	}, webhooks.WithHTTPClient(&http.Client{}), webhooks.WithNotify(done.notify), webhooks.WithParallel(2))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var slowEvents []*cardflow.Published
	for i := range 5 {
		slowEvents = append(slowEvents, &cardflow.Published{ID: fmt.Sprintf("S-%06d", i), Type: cardflow.EventTypeStarted, OrganizationID: "slow-org"})
	}
	if out, err := p.Publish(t.Context(), slowEvents); err != nil || len(out) != 0 {
		t.Fatalf("publish the slow organization's events: got %d published (%v), want none yet", len(out), err)
	}
	held.Wait()
	fastEvent := &cardflow.Published{ID: "F-000001", Type: cardflow.EventTypeStarted, OrganizationID: "fast-org"}
	pending := append(slices.Clone(slowEvents), fastEvent)
	if out, err := p.Publish(t.Context(), pending); err != nil || len(out) != 0 {
		t.Fatalf("publish while held: got %d published (%v), want none yet", len(out), err)
	}
	done.wait(t, 1)
	if got := fast.ids(); !slices.Equal(got, []string{fastEvent.ID}) {
		t.Errorf("while the slow receiver holds its deliveries: the other organization's receiver got %v, want %s", got, fastEvent.ID)
	}
	out, err := p.Publish(t.Context(), pending)
	if err != nil || len(out) != 1 || out[0].ID != fastEvent.ID {
		t.Errorf("publish while held: got %v (%v), want the other organization's event alone", out, err)
	}

	close(release)
	done.wait(t, len(slowEvents))
	if out, err := p.Publish(t.Context(), slowEvents); err != nil || len(out) != len(slowEvents) {
		t.Errorf("after the slow receiver answered: got %d published (%v), want %d", len(out), err, len(slowEvents))
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"X-000001"}`)
	sig, err := webhooks.Sign([]string{"whsec_a2V5LW9uZQ==", "whsec_a2V5LXR3bw=="}, "X-000001", now, body)
	if err != nil {
		t.Fatal(err)
	}
	good := http.Header{}
	good.Set(webhooks.HeaderEventID, "X-000001")
	good.Set(webhooks.HeaderTimestamp, "1800000000")
	good.Set(webhooks.HeaderSignature, sig)
	otherID := good.Clone()
	otherID.Set(webhooks.HeaderEventID, "X-000002")
	tests := []struct {
		name   string
		secret string
		header http.Header
		body   []byte
		now    time.Time
		ok     bool
	}{
		{"valid", "whsec_a2V5LW9uZQ==", good, body, now, true},
		{"the other signature", "whsec_a2V5LXR3bw==", good, body, now, true},
		{"another secret", "whsec_a2V5LXRocmVl", good, body, now, false},
		{"another body", "whsec_a2V5LW9uZQ==", good, []byte(`{"id":"X-000002"}`), now, false},
		{"another id", "whsec_a2V5LW9uZQ==", otherID, body, now, false},
		{"replayed later", "whsec_a2V5LW9uZQ==", good, body, now.Add(time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhooks.Verify(tt.secret, tt.header, tt.body, tt.now, 5*time.Minute)
			if got := err == nil; got != tt.ok {
				t.Errorf("got ok %v (%v), want %v", got, err, tt.ok)
			}
		})
	}
}

// TestSignMatchesTheSpecification: the signature of the Standard Webhooks
// libraries' test vector.
func TestSignMatchesTheSpecification(t *testing.T) {
	got, err := webhooks.Sign([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; err != nil || got != want {
		t.Errorf("got %q (%v), want %q", got, err, want)
	}
}

// TestKey: secrets in the specification's form, in the URL-safe form
// cardflow made before, and in no form at all.
func TestKey(t *testing.T) {
	for _, tt := range []struct {
		secret string
		want   []byte
	}{
		{"whsec_+/8=", []byte{0xfb, 0xff}},
		{"whsec_-_8", []byte{0xfb, 0xff}},
		{"whsec_not base64", []byte("whsec_not base64")},
		{"plain", []byte("plain")},
	} {
		if got := webhooks.Key(tt.secret); !bytes.Equal(got, tt.want) {
			t.Errorf("Key(%q) = %x, want %x", tt.secret, got, tt.want)
		}
	}
}

// TestDeliveriesVerifyWithTheStandardWebhooksLibrary: a receiver that
// verifies with the specification's own Go library takes deliveries under
// the current secret, and under the previous one while the rotation lets
// it sign, and refuses them under the previous one after.
func TestDeliveriesVerifyWithTheStandardWebhooksLibrary(t *testing.T) {
	const current, previous = "whsec_Y3VycmVudC1zZWNyZXQta2V5LWJ5dGVzLTEyMzQ1Ng==", "whsec_cHJldmlvdXMtc2VjcmV0LWtleS1ieXRlcy0xMjM0NTY="
	for _, tt := range []struct {
		name      string
		until     time.Duration // from now, when the previous secret stops signing
		secret    string        // the receiver's
		wantTaken bool
	}{
		{"current", time.Hour, current, true},
		{"previous during the rotation", time.Hour, previous, true},
		{"previous after the rotation", -time.Second, previous, false},
		{"current after the rotation", -time.Second, current, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wh, err := standardwebhooks.NewWebhook(tt.secret)
			if err != nil {
				t.Fatal(err)
			}
			taken := make(chan bool, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				err := wh.Verify(body, r.Header)
				taken <- err == nil
				if err != nil {
					http.Error(w, err.Error(), http.StatusUnauthorized)
				}
			}))
			defer srv.Close()
			done := make(rounds, 1)
			p, err := webhooks.New(hooks{"org-1": {{WebhookID: "W1", OrganizationID: "org-1", URL: srv.URL, Secret: current,
				PreviousSecret: previous, PreviousSecretUntil: time.Now().Add(tt.until).UnixMilli()}}},
				webhooks.WithNotify(done.notify), webhooks.WithBackoff(time.Hour, time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			ev := &cardflow.Published{ID: "X-000001", Type: cardflow.EventTypeStarted, OrganizationID: "org-1"}
			if _, err := p.Publish(t.Context(), []*cardflow.Published{ev}); err != nil {
				t.Fatal(err)
			}
			done.wait(t, 1)
			if got, want := <-taken, tt.wantTaken; got != want {
				t.Errorf("got taken %v, want %v", got, want)
			}
		})
	}
}
