package httpapi

import (
	"net/http"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

type route struct {
	method, path string
	scope        string // Endpoint.scope
	handle       handlerFunc
}

func (s *Server) getExecution(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	wid, eid := q.str("workflow_id", true), q.str("workflow_execution_id", true)
	if err := q.done(); err != nil {
		return err
	}
	item, err := s.svc.GetExecutionJSON(r.Context(), wid, eid)
	if err != nil {
		return err
	}
	return okItemJSON(w, item)
}

// waitForExecution answers like getExecution once the execution has
// finished or changed, or its timeout has passed.
func (s *Server) waitForExecution(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	in := app.WaitInput{
		WorkflowID: q.str("workflow_id", true), WorkflowExecutionID: q.str("workflow_execution_id", true),
		Until: q.oneOf("until", app.UntilFinal, app.UntilFinal, app.UntilChange),
	}
	in.Since, in.HasSince = q.count("since", "a modified_on (epoch milliseconds)", 999_999_999_999_999_999)
	timeout, given := q.count("timeout", "a number of seconds", int64(app.MaxWait/time.Second))
	in.Timeout = app.MaxWait
	if given {
		in.Timeout = time.Duration(timeout) * time.Second
	}
	if err := q.done(); err != nil {
		return err
	}
	item, err := s.svc.WaitForExecutionJSON(r.Context(), in)
	if err != nil {
		return err
	}
	return okItemJSON(w, item)
}

func (s *Server) getExecutionHistory(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	wid := q.str("workflow_id", true)
	limit := q.limit()
	opt := cardflow.ListOptions[cardflow.ExecutionKey]{Limit: limit}
	if eid := q.pageID("workflow_execution_id"); eid != "" {
		opt.After = &cardflow.ExecutionKey{WorkflowID: wid, WorkflowExecutionID: eid}
	}
	if err := q.done(); err != nil {
		return err
	}
	page, err := s.svc.ListWorkflowExecutions(r.Context(), wid, opt)
	if err != nil {
		return err
	}
	return okList(w, summarize(page.Items, historyEvents), page.LastKey)
}

func (s *Server) getOrganizationExecutions(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	opt := cardflow.ListOptions[cardflow.ExecutionKey]{Limit: q.limit()}
	wid, eid := q.pageID("workflow_id"), q.pageID("workflow_execution_id")
	if (wid == "") != (eid == "") {
		q.fail("the page key needs both workflow_id and workflow_execution_id, as lastKey gave them")
	}
	if wid != "" {
		opt.After = &cardflow.ExecutionKey{WorkflowID: wid, WorkflowExecutionID: eid}
	}
	if err := q.done(); err != nil {
		return err
	}
	page, err := s.svc.ListExecutions(r.Context(), opt)
	if err != nil {
		return err
	}
	return okList(w, summarize(page.Items, 0), page.LastKey)
}

func (s *Server) getWorkflow(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	wid, v := q.str("workflow_id", true), q.version("workflow_version", true)
	if err := q.done(); err != nil {
		return err
	}
	wf, err := s.svc.GetWorkflow(r.Context(), wid, v)
	if err != nil {
		return err
	}
	return okItem(w, wf)
}

func (s *Server) getOrganizationWorkflows(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	opt := cardflow.ListOptions[cardflow.WorkflowKey]{Limit: q.limit()}
	if org, wid, v, ok := q.versionedPageKey(r, "workflow_id", "workflow_version"); ok {
		opt.After = &cardflow.WorkflowKey{OrganizationID: org, WorkflowID: wid, WorkflowVersion: v}
	}
	if err := q.done(); err != nil {
		return err
	}
	page, err := s.svc.ListWorkflows(r.Context(), opt)
	if err != nil {
		return err
	}
	items := make([]workflowListItem, len(page.Items))
	for i, wf := range page.Items {
		items[i] = workflowListItem{
			WorkflowID: wf.WorkflowID, ModifiedOn: wf.ModifiedOn, OrganizationID: wf.OrganizationID,
			WorkflowStatus: wf.WorkflowStatus, Latest: wf.Latest, WorkflowName: wf.WorkflowName,
			CreatedBy: wf.CreatedBy, WorkflowStatusVersion: wf.WorkflowStatusVersion,
			ModifiedBy: wf.ModifiedBy, WorkspaceID: wf.WorkspaceID, CreatedOn: wf.CreatedOn,
		}
	}
	return okList(w, items, page.LastKey)
}

func (s *Server) getSchema(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	wid, v := q.str("workflow_id", true), q.version("workflow_version", true)
	if err := q.done(); err != nil {
		return err
	}
	sc, err := s.svc.GetSchema(r.Context(), wid, v)
	if err != nil {
		return err
	}
	return okItem(w, sc)
}

func (s *Server) saveWorkflow(w http.ResponseWriter, r *http.Request) error {
	var in app.SaveWorkflowInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	wf, err := s.svc.SaveWorkflow(r.Context(), in)
	if err != nil {
		return err
	}
	if in.DryRun {
		return okDryRun(w)
	}
	return okItem(w, wf)
}

type publishWorkflowInput struct {
	WorkflowID      *string `json:"workflow_id"`
	WorkflowVersion *int    `json:"workflow_version"`
}

func (s *Server) publishWorkflow(w http.ResponseWriter, r *http.Request) error {
	var in publishWorkflowInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	if in.WorkflowID == nil || *in.WorkflowID == "" || in.WorkflowVersion == nil {
		return cardflow.Errorf(cardflow.EINVALID, "workflow_id (string) and workflow_version (number) are required")
	}
	wf, err := s.svc.PublishWorkflow(r.Context(), *in.WorkflowID, *in.WorkflowVersion)
	if err != nil {
		return err
	}
	return okItem(w, wf)
}

func (s *Server) getCard(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	id, v := q.str("card_id", true), q.version("card_version", true)
	if err := q.done(); err != nil {
		return err
	}
	c, err := s.svc.GetCard(r.Context(), id, v)
	if err != nil {
		return err
	}
	return okItem(w, c)
}

func (s *Server) getLatestActiveCard(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	id := q.str("card_id", true)
	if err := q.done(); err != nil {
		return err
	}
	c, err := s.svc.GetLatestActiveCard(r.Context(), id)
	if err != nil {
		return err
	}
	return okItem(w, c)
}

func (s *Server) getOrganizationCards(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	opt := cardflow.ListOptions[cardflow.CardKey]{Limit: q.limit()}
	if org, id, v, ok := q.versionedPageKey(r, "card_id", "card_version"); ok {
		opt.After = &cardflow.CardKey{OrganizationID: org, CardID: id, CardVersion: v}
	}
	if err := q.done(); err != nil {
		return err
	}
	page, err := s.svc.ListCards(r.Context(), opt)
	if err != nil {
		return err
	}
	items := make([]cardListItem, len(page.Items))
	for i, c := range page.Items {
		items[i] = cardListItem{
			CardName: c.CardName, StatusVersion: c.StatusVersion, OrganizationID: c.OrganizationID,
			Latest: c.Latest, CreatedBy: c.CreatedBy, Status: c.Status, CardVersion: c.CardVersion,
			CardID: c.CardID, WorkspaceID: c.WorkspaceID, CreatedOn: c.CreatedOn,
		}
	}
	return okList(w, items, page.LastKey)
}

func (s *Server) saveCard(w http.ResponseWriter, r *http.Request) error {
	var in app.SaveCardInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	c, err := s.svc.SaveCard(r.Context(), in)
	if err != nil {
		return err
	}
	if in.DryRun {
		return okDryRun(w)
	}
	return okItem(w, c)
}

type publishCardInput struct {
	CardID      *string `json:"card_id"`
	CardVersion *int    `json:"card_version"`
}

func (s *Server) publishCard(w http.ResponseWriter, r *http.Request) error {
	var in publishCardInput
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	if in.CardID == nil || *in.CardID == "" || in.CardVersion == nil {
		return cardflow.Errorf(cardflow.EINVALID, "card_id (string) and card_version (number) are required")
	}
	c, err := s.svc.PublishCard(r.Context(), *in.CardID, *in.CardVersion)
	if err != nil {
		return err
	}
	return okItem(w, c)
}
