package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPreviewCard(t *testing.T) {
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
