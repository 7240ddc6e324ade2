package httpapi

import (
	"net/http"

	"github.com/cardflow/cardflow/pkg/app"
)

func (s *Server) redrive(w http.ResponseWriter, r *http.Request) error {
	var in app.RedriveInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	res, err := s.svc.RedriveExecution(r.Context(), in)
	if err != nil {
		return err
	}
	if res.Execution != nil {
		return okItem(w, res.Execution)
	}
	return okItem(w, res.ExecutionOutline)
}
