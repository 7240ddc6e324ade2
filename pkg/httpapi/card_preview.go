package httpapi

import (
	"net/http"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// PreviewCard expands a card version with sample data, as a card step
// would; the console's card preview uses it.
var PreviewCard = Endpoint{"previewCard", []string{"POST /v1/adaptive-cards/previewCard"}, cardflow.ScopeRead, (*Server).previewCard}

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
