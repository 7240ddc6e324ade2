package httpapi

import (
	"net/http"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

func (s *Server) registerConversation(w http.ResponseWriter, r *http.Request) error {
	var in app.RegisterConversationInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	c, err := s.svc.RegisterConversation(r.Context(), in)
	if err != nil {
		return err
	}
	return okItem(w, c)
}

func (s *Server) listConversations(w http.ResponseWriter, r *http.Request) error {
	if err := newQuery(r).done(); err != nil {
		return err
	}
	l, err := s.svc.ListConversations(r.Context())
	if err != nil {
		return err
	}
	return okList[*cardflow.TeamsConversation, struct{}](w, l, nil)
}

type removeConversationInput struct {
	ConversationID string `json:"conversation_id"`
}

func (s *Server) removeConversation(w http.ResponseWriter, r *http.Request) error {
	var in removeConversationInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	if err := s.svc.RemoveConversation(r.Context(), in.ConversationID); err != nil {
		return err
	}
	return ok(w, map[string]string{"message": "success"})
}
