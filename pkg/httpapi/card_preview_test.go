package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func TestPreviewCard(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := loadSample(t, e, "org-a")
	reader := e.key("org-a", "read")
	other := e.key("org-b", "read")
	data := map[string]any{"requester": "Ann Example", "item": "Laptop", "amount": 1840}
	for _, c := range []struct {
		name   string
		key    string
		body   any
		status int
		want   string // in the answer
	}{
		{"expanded as a card step would", reader, map[string]any{"card_id": ids.ApprovalCardID, "card_version": 2, "data": data}, 200, "Purchase request for Ann Example"},
		{"no data is an empty object", reader, map[string]any{"card_id": ids.ApprovalCardID, "card_version": 2}, 200, `"type":"AdaptiveCard"`},
		{"no version", reader, map[string]any{"card_id": ids.ApprovalCardID}, 400, "card_version"},
		{"no such version", reader, map[string]any{"card_id": ids.ApprovalCardID, "card_version": 99, "data": data}, 404, ""},
		{"another organization's card", other, map[string]any{"card_id": ids.ApprovalCardID, "card_version": 2, "data": data}, 404, ""},
		{"no key", "", map[string]any{"card_id": ids.ApprovalCardID, "card_version": 2}, 401, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/v1/adaptive-cards/previewCard", c.key, c.body)
			if r.status != c.status {
				t.Fatalf("got %d %v, want %d", r.status, r.body, c.status)
			}
			got, _ := json.Marshal(r.body)
			if !strings.Contains(string(got), c.want) {
				t.Errorf("got %s, want it to hold %s", got, c.want)
			}
		})
	}
}

// TestPreviewCardIsBoundedAndRateLimited: with a card whose $data repeats
// a whole-object binding, a 40 KB previewCard request answered 400 MB,
// with a read key as with an admin key. The answer is now a 400 naming
// the limit, and each preview counts against the organization's rate.
func TestPreviewCardIsBoundedAndRateLimited(t *testing.T) {
	t.Parallel()
	// A token every 100 s: nothing refills while the test runs.
	e := newLimitedEnv(t, cardflow.Limits{RatePerSecond: 0.01, Burst: 4})
	admin, reader := e.key("org-a", "read", "admin"), e.key("org-a", "read")
	card := map[string]any{"type": "AdaptiveCard", "version": "1.5", "body": []any{
		map[string]any{"$data": "${$root.items}", "type": "FactSet", "facts": "${$root.facts}"},
	}}
	r := e.do("POST", "/v1/adaptive-cards/saveCard", admin, map[string]any{"card_name": "Repeat", "card_payload": card})
	if r.status != 200 {
		t.Fatalf("saveCard: got %d %s", r.status, r.raw)
	}
	cardID := str(r.body["item"].(map[string]any)["card_id"])
	facts := make([]any, 100)
	for i := range facts {
		facts[i] = map[string]any{"title": "t", "value": strings.Repeat("v", 350)}
	}
	items := make([]any, 2500)
	for i := range items {
		items[i] = i
	}
	body := map[string]any{"card_id": cardID, "card_version": 1, "data": map[string]any{"facts": facts, "items": items}}
	for _, c := range []struct{ name, key string }{{"admin", admin}, {"read", reader}, {"read again", reader}} {
		r := e.do("POST", "/v1/adaptive-cards/previewCard", c.key, body)
		if r.status != 400 || r.code() != cardflow.EINVALID || !strings.Contains(r.msg(), "an expanded card may hold at most 256 KB") {
			t.Fatalf("%s key: got %d %.300s, want 400 naming the limit", c.name, r.status, r.raw)
		}
		if len(r.raw) > 4<<10 {
			t.Errorf("%s key: the answer is %d bytes, want a short error", c.name, len(r.raw))
		}
	}
	wantThrottled(t, "a read key's preview past the burst", e.do("POST", "/v1/adaptive-cards/previewCard", reader, body), 1)
}
