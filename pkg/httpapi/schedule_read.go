package httpapi

import "net/http"

func (s *Server) getWorkflowSchedule(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	wid := q.str("workflow_id", true)
	if err := q.done(); err != nil {
		return err
	}
	sc, err := s.svc.GetWorkflowSchedule(r.Context(), wid)
	if err != nil {
		return err
	}
	return okItem(w, sc)
}
