package boltstore

import (
	"bytes"
	"context"
	"encoding/json"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// The outbox of events and the webhooks. An execution's events are put in
// the transaction that writes the execution (putEvents), so none is lost
// when the process dies before publishing them.
var (
	bEvents   = []byte("pending_events") // event id -> cardflow.Published, until published
	bWebhooks = []byte("webhooks")       // org 0 webhook_id -> Webhook
)

// encodedEvent is an event encoded for the outbox.
type encodedEvent struct{ id, v []byte }

// encodeEvents encodes the events of an execution's write before it
// enters the committer.
func encodeEvents(events []*cardflow.Published) ([]encodedEvent, error) {
	out := make([]encodedEvent, len(events))
	for i, ev := range events {
		v, err := json.Marshal(ev)
		if err != nil {
			return nil, err
		}
		out[i] = encodedEvent{id: []byte(ev.ID), v: v}
	}
	return out, nil
}

// putEvents adds the events of an execution's write to the outbox.
func putEvents(tx *bolt.Tx, events []encodedEvent) error {
	b := tx.Bucket(bEvents)
	for _, ev := range events {
		if err := b.Put(ev.id, ev.v); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) ListPendingEvents(_ context.Context, after string, limit int) ([]*cardflow.Published, error) {
	out := []*cardflow.Published{}
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bEvents).Cursor()
		k, v := c.Seek([]byte(after))
		if k != nil && string(k) == after {
			k, v = c.Next()
		}
		for ; k != nil && len(out) < limit; k, v = c.Next() {
			ev, err := decode[cardflow.Published](v)
			if err != nil {
				return err
			}
			out = append(out, ev)
		}
		return nil
	})
	return out, err
}

func (s *Store) DeletePendingEvents(_ context.Context, events []*cardflow.Published) error {
	if len(events) == 0 {
		return nil
	}
	return s.commits.write(func(tx *bolt.Tx) error {
		b := tx.Bucket(bEvents)
		for _, ev := range events {
			if err := b.Delete([]byte(ev.ID)); err != nil {
				return err
			}
		}
		return nil
	})
}

func webhookNotFound(id string) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "webhook %s not found", id)
}

func (s *Store) CreateWebhook(_ context.Context, w *cardflow.Webhook) error {
	if !validParts(w.OrganizationID, w.WebhookID) || w.URL == "" {
		return cardflow.Errorf(cardflow.EINVALID, "a webhook needs an organization, an id and a URL")
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bWebhooks)
		k := under(prefix(w.OrganizationID), w.WebhookID)
		if b.Get(k) != nil {
			return cardflow.Errorf(cardflow.ECONFLICT, "webhook %s already exists", w.WebhookID)
		}
		return put(b, k, w)
	})
}

func (s *Store) ListWebhooks(_ context.Context, org string) ([]*cardflow.Webhook, error) {
	out := []*cardflow.Webhook{}
	var p []byte
	if org != "" {
		if !validParts(org) {
			return out, nil
		}
		p = prefix(org)
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bWebhooks).Cursor()
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
			var w cardflow.Webhook
			if err := json.Unmarshal(v, &w); err != nil {
				return &cardflow.UnreadableError{Err: err}
			}
			out = append(out, &w)
		}
		return nil
	})
	return out, err
}

func (s *Store) DeleteWebhook(_ context.Context, org, webhookID string) error {
	if !validParts(org, webhookID) {
		return webhookNotFound(webhookID)
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bWebhooks)
		k := under(prefix(org), webhookID)
		if b.Get(k) == nil {
			return webhookNotFound(webhookID)
		}
		return b.Delete(k)
	})
}

func (s *Store) RotateWebhookSecret(_ context.Context, org, webhookID, secret string, previousUntil int64) (*cardflow.Webhook, error) {
	if !validParts(org, webhookID) {
		return nil, webhookNotFound(webhookID)
	}
	var w cardflow.Webhook
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bWebhooks)
		k := under(prefix(org), webhookID)
		v := b.Get(k)
		if v == nil {
			return webhookNotFound(webhookID)
		}
		if err := json.Unmarshal(v, &w); err != nil {
			return &cardflow.UnreadableError{Err: err}
		}
		w.PreviousSecret, w.PreviousSecretUntil, w.Secret = w.Secret, previousUntil, secret
		return put(b, k, &w)
	})
	if err != nil {
		return nil, err
	}
	return &w, nil
}
