package main

import (
	"strings"
)

// checkWebhooks: the block added a webhook, listed it without its secret
// (which went to $SECRET only), rotated its secret (into $NEW_SECRET only),
// and removed it.
func checkWebhooks(r *readmeRun) {
	var id string
	for line := range strings.Lines(r.out) {
		if fields := strings.Fields(line); len(fields) >= 3 && fields[1] == "acme" && fields[2] == "https://hooks.example.com/cardflow" {
			id = fields[0]
		}
	}
	if id == "" || !strings.Contains(r.out, "added webhook "+id+" of acme") {
		r.t.Fatalf("webhooks add and list: want the webhook of acme added and listed:\n%s", r.out)
	}
	if strings.Contains(r.out, "whsec_") {
		r.t.Errorf("a secret was shown besides the one add printed into $SECRET:\n%s", r.out)
	}
	if !strings.Contains(r.out, "rotated the secret of webhook "+id+" of acme") {
		r.t.Errorf("webhooks rotate: want the secret of webhook %s rotated:\n%s", id, r.out)
	}
	if !strings.Contains(r.out, "removed webhook "+id+" of acme") {
		r.t.Errorf("webhooks remove: want webhook %s removed:\n%s", id, r.out)
	}
}
