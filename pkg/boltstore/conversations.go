package boltstore

import (
	"bytes"
	"context"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

var (
	// bConversations is keyed by conversation id alone, so a conversation
	// belongs to one organization at most.
	bConversations    = []byte("teams_conversations")     // conversation_id -> TeamsConversation
	bOrgConversations = []byte("org_teams_conversations") // org 0 conversation_id -> ""
)

func (s *Store) RegisterConversation(_ context.Context, c *cardflow.TeamsConversation) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if !validParts(c.OrganizationID, c.ConversationID) {
		return cardflow.Errorf(cardflow.EINVALID, "a conversation needs an organization and an id")
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bConversations)
		if v := b.Get([]byte(c.ConversationID)); v != nil {
			cur, err := decode[cardflow.TeamsConversation](v)
			if err != nil {
				return err
			}
			if cur.OrganizationID != c.OrganizationID {
				return cardflow.ConversationTaken(c.ConversationID)
			}
		}
		if err := tx.Bucket(bOrgConversations).Put(under(prefix(c.OrganizationID), c.ConversationID), nil); err != nil {
			return err
		}
		return put(b, []byte(c.ConversationID), c)
	})
}

func (s *Store) GetConversation(ctx context.Context, org, conversationID string) (*cardflow.TeamsConversation, error) {
	c, err := s.FindConversation(ctx, conversationID)
	if err == nil && c.OrganizationID != org {
		return nil, cardflow.ConversationNotFound(conversationID)
	}
	return c, err
}

func (s *Store) FindConversation(_ context.Context, conversationID string) (*cardflow.TeamsConversation, error) {
	var k []byte
	if cardflow.ValidConversationID(conversationID) {
		k = []byte(conversationID)
	}
	return getJSON[cardflow.TeamsConversation](s.db, bConversations, k, func() error { return cardflow.ConversationNotFound(conversationID) })
}

func (s *Store) ListConversations(_ context.Context, org string) ([]*cardflow.TeamsConversation, error) {
	out := []*cardflow.TeamsConversation{}
	if !validParts(org) {
		return out, nil
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		p := prefix(org)
		convs := tx.Bucket(bConversations)
		c := tx.Bucket(bOrgConversations).Cursor()
		for k, _ := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, _ = c.Next() {
			v := convs.Get(k[len(p):])
			if v == nil {
				continue
			}
			rec, err := decode[cardflow.TeamsConversation](v)
			if err != nil {
				return err
			}
			out = append(out, rec)
		}
		return nil
	})
	return out, err
}

func (s *Store) DeleteConversation(_ context.Context, org, conversationID string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		var v []byte
		if validParts(org) && cardflow.ValidConversationID(conversationID) {
			v = tx.Bucket(bConversations).Get([]byte(conversationID))
		}
		if v == nil {
			return cardflow.ConversationNotFound(conversationID)
		}
		cur, err := decode[cardflow.TeamsConversation](v)
		if err != nil {
			return err
		}
		if cur.OrganizationID != org {
			return cardflow.ConversationNotFound(conversationID)
		}
		if err := tx.Bucket(bOrgConversations).Delete(under(prefix(org), conversationID)); err != nil {
			return err
		}
		return tx.Bucket(bConversations).Delete([]byte(conversationID))
	})
}
