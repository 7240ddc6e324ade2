package steps

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/outbound"
	"github.com/cardflow/cardflow/pkg/sap"
)

// ERP calls an OData service through the workflow's SAP profile
// (workflow_integrations.erp); its output is {status, headers, body} with
// the OData envelope taken off, and an error leaves by the error exit.
var ERP = Define[erpConfig]("erp", cardflow.StepTraits{Exits: []string{cardflow.ExitError}}, erpSchema)

var erpMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

type erpConfig struct {
	callConfig
	Service *string `json:"service"`
	Entity  *string `json:"entity"`
	// Auth is refused: an erp step signs in with its profile.
	Auth any `json:"auth"`
	// Pages, with a GET, follows SAP's next-page links up to this many pages.
	Pages *int `json:"pages"`
}

// maxERPPages bounds pages: each page is a call within the step's one
// timeout, and a list that long belongs in a narrower query.
const maxERPPages = 100

func (c *erpConfig) Validate() error {
	if err := c.checkMethod(erpMethods); err != nil {
		return err
	}
	if err := required("erp", "service", c.Service); err != nil {
		return err
	}
	if s := *c.Service; !strings.HasPrefix(s, "/") || strings.ContainsAny(s, "?#{} ") {
		return fmt.Errorf("config.service %q must be the OData service path, such as /sap/opu/odata/sap/API_PURCHASEORDER_PROCESS_SRV", s)
	}
	if err := required("erp", "entity", c.Entity); err != nil {
		return err
	}
	if c.Pages != nil {
		if n := *c.Pages; n < 1 || n > maxERPPages {
			return fmt.Errorf("config.pages must be between 1 and %d, not %d", maxERPPages, n)
		}
		if m := strings.ToUpper(c.method()); m != "" && m != http.MethodGet {
			return fmt.Errorf("config.pages reads a collection's pages with a GET, not with %s", m)
		}
	}
	return c.readTimeout()
}

func (c *erpConfig) Check(env *expr.Env) (Step, error) {
	if c.Auth != nil {
		return nil, fmt.Errorf("config.auth: an erp step authenticates with workflow_integrations.erp.auth")
	}
	target, err := compileEntity(env, *c.Entity)
	if err != nil {
		return nil, err
	}
	options, err := c.odataOptions(env)
	if err != nil {
		return nil, err
	}
	k, err := c.check(env, target)
	if err != nil {
		return nil, err
	}
	step := &erpStep{call: k, service: *c.Service, options: options}
	if c.Pages != nil {
		step.pages = *c.Pages
	}
	return step, nil
}

// odataOptions takes the OData system query options written as strings
// ($filter, $orderby, ...) out of the query and compiles them as OData
// text, whose values are quoted for where they stand; the rest of the
// query stays plain query values.
func (c *erpConfig) odataOptions(env *expr.Env) (map[string]*urlTemplate, error) {
	query, ok := c.Query.(map[string]any)
	if !ok {
		return nil, nil
	}
	var options map[string]*urlTemplate
	rest := map[string]any{}
	for name, v := range query {
		src, isText := v.(string)
		if !strings.HasPrefix(name, "$") || !isText {
			rest[name] = v
			continue
		}
		u, err := compileODataOption(env, name, src)
		if err != nil {
			return nil, err
		}
		if options == nil {
			options = map[string]*urlTemplate{}
		}
		options[name] = u
	}
	c.Query = rest
	return options, nil
}

type erpStep struct {
	call    *call
	service string
	// options are the query's OData system query options.
	options map[string]*urlTemplate
	// pages is how many pages a GET may follow; 0 reads one, unwrapped as it comes.
	pages int
}

func (s *erpStep) Run(ctx context.Context, r *Run) Outcome {
	c := &callRun{call: s.call, run: r}
	return c.redacted(s.do(ctx, c))
}

func (s *erpStep) do(ctx context.Context, c *callRun) Outcome {
	profile, err := sap.ParseProfile(c.run.Execution.State.Integrations["erp"])
	if err != nil {
		return Outcome{Reason: err.Error()}
	}
	p, err := s.call.render(ctx, c.run.Vars)
	if err != nil {
		return Outcome{Reason: err.Error()}
	}
	for name, u := range s.options {
		v, err := u.render(ctx, c.run.Vars)
		if err != nil {
			return Outcome{Reason: err.Error()}
		}
		p.query.Set(name, v)
	}
	req := sap.Request{Method: p.method, Service: s.service, Entity: p.target, Query: p.query, Header: http.Header{}, Body: p.body}
	for k, v := range p.headers {
		req.Header.Set(k, v)
	}
	if key := c.idempotencyKey(); key != "" {
		req.Header.Set(outbound.IdempotencyKeyHeader, key)
	}
	ctx, cancel := c.context(ctx)
	defer cancel()
	client, err := sap.New(profile, c.run.Client, c, sap.WithSensitive(c.sensitive))
	if err != nil {
		return Outcome{Reason: err.Error()}
	}
	q := &request{method: req.Method, headers: p.headers, body: p.body}
	if q.url, err = client.URL(req); err != nil {
		return Outcome{Input: q.view(), Reason: err.Error()}
	}
	var resp *sap.Response
	if s.pages > 0 {
		resp, err = client.DoAll(ctx, req, s.pages)
	} else {
		resp, err = client.Do(ctx, req)
	}
	if resp == nil {
		reason := err.Error()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = c.failure(ctx, q.method+" "+q.url+": ", err)
		}
		return Outcome{Input: q.view(), Reason: reason}
	}
	out := Outcome{Input: q.view(), Output: map[string]any{"status": resp.Status, "headers": headerView(resp.Header), "body": resp.Body}}
	if err != nil {
		out.Reason = err.Error()
		return out
	}
	out.Output.(map[string]any)["body"] = resp.Result
	return out
}

var erpSchema = object("Calls an OData service through the workflow's SAP profile (workflow_integrations.erp).", []string{"service", "entity"}, withCall(map[string]Schema{
	"service": typed("string", "The OData service path, such as /sap/opu/odata/sap/API_PURCHASEORDER_PROCESS_SRV."),
	"entity":  typed("string", "The entity set or entity, such as PurchaseOrder('{{ input.po }}')."),
	"auth":    anyValue("Refused: an erp step signs in with workflow_integrations.erp.auth."),
	"pages":   Schema{"type": "integer", "minimum": 1, "maximum": maxERPPages, "description": "With a GET of a collection: follow SAP's next-page links, reading at most this many pages; the body is every page's entries, and a longer collection fails the step."},
}))

// Integrations: an erp step calls through the SAP profile; the profile
// itself is checked once for the workflow (engine.Check).
func (c *erpConfig) Integrations() []string { return []string{"erp"} }

// MissingIntegration says what the SAP profile is for.
func (c *erpConfig) MissingIntegration(string) error {
	return errors.New("an erp step needs workflow_integrations.erp, the SAP profile it calls")
}
