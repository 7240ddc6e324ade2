package httpapi

import (
	"net/http"

	"github.com/cardflow/cardflow/pkg/app"
)

func (s *Server) previewCard(w http.ResponseWriter, r *http.Request) error {
	var in app.PreviewCardInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	card, err := s.svc.PreviewCard(r.Context(), in)
	if err != nil {
		return err
	}
	return okItem(w, card)
}
