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
	q := newQuery(r)
	in := app.TriggerInput{
		WorkflowID: r.PathValue("workflow_id"),
		ProcessID:  q.str("process_id", false),
	}
	if q.values.Has("process_id") && in.ProcessID == "" {
		q.fail("process_id must not be empty when given")
	}
	if err := q.done(); err != nil {
		return err
	}
	if v := r.PathValue("workflow_version"); v != "" {
		n, err := strconv.Atoi(v)
		if !wholeNumber.MatchString(v) || err != nil || n > MaxVersion {
			return cardflow.Errorf(cardflow.EINVALID, "workflow_version must be a whole number from 1 to %d, not %q", MaxVersion, v)
		}
		in.Version = n
	}
	// A header sent empty is a key that breaks the rule, not no key.
	if keys := r.Header.Values("Idempotency-Key"); len(keys) > 0 {
		if len(keys) > 1 || keys[0] == "" {
			return cardflow.Errorf(cardflow.EINVALID, "the Idempotency-Key header must be given once, 1 to 255 visible ASCII characters")
		}
		in.IdempotencyKey = keys[0]
	}
	body, err := readJSON(w, r)
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
	body, err := readJSON(w, r)
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

// outboxItem is a delivery as the outbox shows it: where it went, to whom
// and when, with what resumes it. An approver's copy never carries their
// personal links (POST /v1/approvals/issueApprovalLinks gives them to an
// admin, on the record), and a delivery stored before that rule has them
// dropped here.
type outboxItem struct {
	*cardflow.Delivery
	Channel   string `json:"channel"`
	Recipient string `json:"recipient,omitempty"`
	Status    string `json:"status"`
}

// deliveredToOutbox is the status of every outbox item: the card is held
// there for whoever reads it.
const deliveredToOutbox = "DELIVERED"

type outboxKey struct {
	DeliveryID string `json:"delivery_id"`
}

func (s *Server) getOutbox(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	limit := q.limit()
	after := q.pageID("delivery_id")
	if err := q.done(); err != nil {
		return err
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
	out := make([]outboxItem, len(items))
	for i, d := range items {
		out[i] = outboxItem{Delivery: d, Channel: cardflow.DeliveryOutbox, Recipient: d.Approver, Status: deliveredToOutbox}
	}
	return okList(w, out, last)
}
