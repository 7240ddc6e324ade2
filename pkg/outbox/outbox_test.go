package outbox_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/outbox"
	"github.com/cardflow/cardflow/pkg/webhooks"
)

func openStore(t testing.TB) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// finished stores n executions of org that started and succeeded in one
// write: two events each.
func finished(t testing.TB, s cardflow.Store, org string, n int) {
	t.Helper()
	now := time.Now()
	// Written from several goroutines, so that the store commits them in
	// groups and the setup does not sync once per execution.
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for range n {
		ex := &cardflow.Execution{
			WorkflowExecutionID: cardflow.NewID(now), WorkflowID: "WF1", WorkflowVersion: 1, OrganizationID: org, WorkspaceID: "ws",
			Status: cardflow.ExecSucceeded, WorkflowEventLog: cardflow.EventLog{Events: []cardflow.Event{
				{At: now.UnixMilli(), Type: cardflow.EventStarted}, {At: now.UnixMilli(), Type: cardflow.EventSucceeded},
			}, Total: 2},
			CreatedOn: now.UnixMilli(), ModifiedOn: now.UnixMilli(),
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs <- s.CreateExecution(context.Background(), ex)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// refuseSome publishes every event but those of the executions it names.
type refuseSome map[string]bool

func (r refuseSome) Publish(_ context.Context, events []*cardflow.Published) ([]*cardflow.Published, error) {
	var done []*cardflow.Published
	for _, ev := range events {
		if !r[ev.ExecutionID] {
			done = append(done, ev)
		}
	}
	return done, nil
}

func TestRelayPublishesPastRefusedEvents(t *testing.T) {
	s := openStore(t)
	finished(t, s, "acme", 3)
	pending, err := s.ListPendingEvents(t.Context(), "", 10)
	if err != nil || len(pending) != 6 {
		t.Fatalf("got %d pending (%v), want 6", len(pending), err)
	}
	kept := pending[0].ExecutionID
	// A batch of two: the first holds only refused events, which must not
	// hold up the others.
	r, err := outbox.New(s, refuseSome{kept: true}, outbox.WithBatch(2))
	if err != nil {
		t.Fatal(err)
	}
	n, err := r.Drain(t.Context())
	if err != nil || n != 4 {
		t.Errorf("drain: got %d published (%v), want 4", n, err)
	}
	left, err := s.ListPendingEvents(t.Context(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range left {
		if ev.ExecutionID != kept {
			t.Errorf("got %s still pending, want only the refused execution's events", ev.ID)
		}
	}
	if len(left) != 2 {
		t.Errorf("got %d pending, want the 2 refused", len(left))
	}
}

// counter is a webhook receiver that verifies each delivery and counts
// distinct events.
type counter struct {
	secret string
	mu     sync.Mutex
	ids    map[string]bool
	bad    int
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if webhooks.Verify(c.secret, r.Header, body, time.Now(), time.Minute) != nil {
		c.bad++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ev cardflow.Published
	json.Unmarshal(body, &ev)
	c.ids[ev.ID] = true
}

// BenchmarkWebhookDelivery measures events delivered per second from the
// bbolt outbox to a local webhook receiver that verifies every signature,
// and fails when one is lost.
func BenchmarkWebhookDelivery(b *testing.B) {
	s := openStore(b)
	c := &counter{secret: "whsec_benchmark", ids: map[string]bool{}}
	srv := httptest.NewServer(c)
	defer srv.Close()
	if err := s.CreateWebhook(context.Background(), &cardflow.Webhook{WebhookID: "W1", OrganizationID: "acme", URL: srv.URL, Secret: c.secret}); err != nil {
		b.Fatal(err)
	}
	pub, err := webhooks.New(s, webhooks.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	r, err := outbox.New(s, pub, outbox.WithBatch(500))
	if err != nil {
		b.Fatal(err)
	}
	finished(b, s, "acme", (b.N+1)/2)
	want := 2 * ((b.N + 1) / 2)
	b.ResetTimer()
	start := time.Now()
	n, err := r.Drain(context.Background())
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil || n != want || len(c.ids) != want || c.bad != 0 {
		b.Fatalf("delivered %d (%v), the receiver has %d distinct with %d bad signatures; want %d", n, err, len(c.ids), c.bad, want)
	}
	if left, _ := s.ListPendingEvents(context.Background(), "", 1); len(left) != 0 {
		b.Fatalf("%d events still pending", len(left))
	}
	b.ReportMetric(float64(want)/elapsed.Seconds(), "events/s")
}
