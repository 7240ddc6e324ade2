package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

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

func TestRetriesWithBackoffUntilEveryWebhookTakesIt(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	now := func() time.Time { return clock }
	flaky := &receiver{t: t, secret: "flaky-secret-value", now: now, refuse: 2}
	steady := &receiver{t: t, secret: "steady-secret-value", now: now}
	a, b := httptest.NewServer(flaky), httptest.NewServer(steady)
	defer a.Close()
	defer b.Close()
	var logs bytes.Buffer
	p, err := webhooks.New(hooks{"org-1": {
		{WebhookID: "W1", OrganizationID: "org-1", URL: a.URL, Secret: flaky.secret},
		{WebhookID: "W2", OrganizationID: "org-1", URL: b.URL, Secret: steady.secret},
	}}, webhooks.WithClock(now), webhooks.WithBackoff(time.Second, time.Minute), webhooks.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ev := &cardflow.Published{ID: "X-000001", Type: cardflow.EventTypeStarted, OrganizationID: "org-1"}
	other := &cardflow.Published{ID: "Y-000001", Type: cardflow.EventTypeStarted, OrganizationID: "org-2"}

	steps := []struct {
		advance       time.Duration
		wantPublished int
		wantFlaky     int
	}{
		{0, 1, 0},                       // refused once; org-2 has no webhook, so its event is done
		{500 * time.Millisecond, 0, 0},  // not due yet: no request
		{600 * time.Millisecond, 0, 0},  // due (1 s), refused again
		{time.Second, 0, 0},             // the second retry waits about 2 s
		{1500 * time.Millisecond, 1, 1}, // taken
	}
	pendingEvents := []*cardflow.Published{ev, other}
	for i, s := range steps {
		clock = clock.Add(s.advance)
		out, err := p.Publish(t.Context(), pendingEvents)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
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

func TestVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"X-000001"}`)
	good := http.Header{}
	good.Set(webhooks.HeaderTimestamp, "1800000000")
	good.Set(webhooks.HeaderSignature, webhooks.Sign("k", 1_800_000_000, body))
	tests := []struct {
		name   string
		secret string
		body   []byte
		now    time.Time
		ok     bool
	}{
		{"valid", "k", body, now, true},
		{"another secret", "k2", body, now, false},
		{"another body", "k", []byte(`{"id":"X-000002"}`), now, false},
		{"replayed later", "k", body, now.Add(time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhooks.Verify(tt.secret, good, tt.body, tt.now, 5*time.Minute)
			if got := err == nil; got != tt.ok {
				t.Errorf("got ok %v (%v), want %v", got, err, tt.ok)
			}
		})
	}
}
