package httpapi

import (
	"net/http"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

func (s *Server) setDelegation(w http.ResponseWriter, r *http.Request) error {
	var in app.SetDelegationInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	out, err := s.svc.SetDelegation(r.Context(), in)
	if err != nil {
		return err
	}
	return okItem(w, out)
}

func (s *Server) getDelegations(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	in := app.GetDelegationsInput{Approver: q.person("approver")}
	if err := q.done(); err != nil {
		return err
	}
	l, err := s.svc.GetDelegations(r.Context(), in)
	if err != nil {
		return err
	}
	return okList[cardflow.Delegation, struct{}](w, l, nil)
}

func (s *Server) removeDelegation(w http.ResponseWriter, r *http.Request) error {
	var in app.RemoveDelegationInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	d, err := s.svc.RemoveDelegation(r.Context(), in)
	if err != nil {
		return err
	}
	return okItem(w, d)
}
