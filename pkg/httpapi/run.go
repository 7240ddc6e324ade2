package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

type triggerResponse struct {
	Message            string `json:"message"`
	ServiceExecutionID string `json:"service_execution_id"`
}

func (s *Server) trigger(w http.ResponseWriter, r *http.Request) error {
	in := app.TriggerInput{
		WorkflowID:     r.PathValue("workflow_id"),
		ProcessID:      r.URL.Query().Get("process_id"),
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
	}
	if v := r.PathValue("workflow_version"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return cardflow.Errorf(cardflow.EINVALID, "workflow_version must be a positive whole number, not %q", v)
		}
		in.Version = n
	}
	if _, ok := r.URL.Query()["process_id"]; ok && in.ProcessID == "" {
		return cardflow.Errorf(cardflow.EINVALID, "process_id must not be empty when given")
	}
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	in.Body = body
	out, err := s.svc.Trigger(r.Context(), in)
	if err != nil {
		return err
	}
	if out.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	return ok(w, triggerResponse{Message: "success", ServiceExecutionID: out.ExecutionID})
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request) error {
	if action := r.PathValue("action"); action != "resumeworkflow" {
		return cardflow.Errorf(cardflow.EINVALID, "unknown action %q; the available actions are: %s", action, strings.Join(app.ResumeActions, ", "))
	}
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	out, err := s.svc.Resume(r.Context(), r.PathValue("process_id"), body)
	if err != nil {
		return err
	}
	return ok(w, out)
}

func (s *Server) toggle(w http.ResponseWriter, r *http.Request) error {
	var in app.ToggleInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	out, err := s.svc.Toggle(r.Context(), in)
	if err != nil {
		return err
	}
	return ok(w, out)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request) error {
	var in app.CancelInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	res, err := s.svc.Cancel(r.Context(), in)
	if err != nil {
		return err
	}
	if res.Execution != nil {
		return okItem(w, res.Execution)
	}
	return okItem(w, res.ExecutionOutline)
}

// Outbox lists the cards card steps sent, for local mode.
type Outbox interface {
	ListDeliveries(ctx context.Context, org string, limit int, after string) ([]*cardflow.Delivery, bool, error)
}

type outboxKey struct {
	DeliveryID string `json:"delivery_id"`
}

func (s *Server) getOutbox(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	limit := q.limit()
	after := q.str("delivery_id", false)
	if q.err != nil {
		return q.err
	}
	p := cardflow.PrincipalFromContext(r.Context())
	items, more, err := s.outbox.ListDeliveries(r.Context(), p.OrganizationID, limit, after)
	if err != nil {
		return err
	}
	var last *outboxKey
	if more {
		last = &outboxKey{DeliveryID: items[len(items)-1].DeliveryID}
	}
	return okList(w, items, last)
}
