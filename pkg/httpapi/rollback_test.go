package httpapi_test

import (
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
)

// TestCardRollback checks that publishing an older card version rolls the
// card back as it rolls a workflow back: getLatestActiveCard answers it and
// card steps without card_version send it.
func TestCardRollback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin")
	run := e.key("org-a", "read", "execute")
	wf, card := e.publishedApproval(admin)
	if r := e.do("POST", "/v1/adaptive-cards/saveCard", admin, map[string]any{"card_id": card, "card_name": "Approval", "card_payload": minimalCard("Version 2: approve ${amount}?")}); r.status != 200 {
		t.Fatalf("saveCard: got %d %s", r.status, r.raw)
	}
	for i, publish := range []int{2, 1, 2} {
		if r := e.do("POST", "/v1/adaptive-cards/publishCard", admin, map[string]any{"card_id": card, "card_version": publish}); r.status != 200 {
			t.Fatalf("publishCard %d: got %d %s", publish, r.status, r.raw)
		}
		r := e.get("/v1/adaptive-cards/getLatestActiveCard", run, "card_id", card)
		if got := r.body["item"].(map[string]any); got["card_version"] != float64(publish) || got["latest"] != "true" || got["status"] != "ACTIVE" {
			t.Errorf("after publishing version %d: getLatestActiveCard got %s, want version %d, latest and ACTIVE", publish, r.raw, publish)
		}
		id := str(e.trigger(run, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 5000}).body["service_execution_id"])
		e.awaitStatus(run, wf, id, "WAITING")
		var sent map[string]any
		testenv.WaitFor(t, "the card in the outbox", func() bool {
			for _, d := range items(e.get("/v1/adaptive-cards/outbox", run)) {
				if d["workflow_execution_id"] == id {
					sent = d
				}
			}
			return sent != nil
		})
		if sent == nil || sent["card_version"] != float64(publish) {
			t.Errorf("run %d after publishing version %d: the card step sent %v, want version %d", i, publish, jsonOf(sent), publish)
		}
	}
}
