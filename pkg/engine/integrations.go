package engine

import (
	"fmt"
	"regexp"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/sap"
	"github.com/cardflow/cardflow/pkg/secrets"
)

// checkIntegrations checks workflow_integrations.erp when the workflow has
// one or an erp step needs one.
func checkIntegrations(w *cardflow.Workflow) error {
	erp, has := w.WorkflowIntegrations["erp"]
	if !has {
		for i, s := range w.WorkflowSteps {
			if s.Type == cardflow.StepERP {
				return fmt.Errorf("workflow_steps[%d] (id %q): an erp step needs workflow_integrations.erp, the SAP profile it calls", i, s.ID)
			}
		}
		return nil
	}
	_, err := sap.ParseProfile(erp)
	return err
}

var headerName = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")

// checkCallConfig checks config.idempotency_key of an http or erp step, and
// an http step's config.auth: {"type": "basic" | "bearer" | "header",
// "secret": "<name>", "header": "<name>" for type header}.
func checkCallConfig(step cardflow.Step) error {
	if on, ok := step.Config["idempotency_key"]; ok {
		if _, isBool := on.(bool); !isBool {
			return fmt.Errorf("config.idempotency_key must be true or false")
		}
	}
	v, ok := step.Config["auth"]
	if !ok || v == nil {
		return nil
	}
	if step.Type == cardflow.StepERP {
		return fmt.Errorf("config.auth: an erp step authenticates with workflow_integrations.erp.auth")
	}
	a, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf(`config.auth must be an object such as {"type": "bearer", "secret": "<secret name>"}`)
	}
	for k := range a {
		if k != "type" && k != "secret" && k != "header" {
			return fmt.Errorf("config.auth.%s is not an auth field; use type, secret and header", k)
		}
	}
	name, _ := a["secret"].(string)
	if !secrets.ValidName(name) {
		return fmt.Errorf("config.auth.secret must name a secret (letters, digits and _ . @ + = / -), not hold one")
	}
	header, _ := a["header"].(string)
	switch a["type"] {
	case "basic", "bearer":
		if header != "" {
			return fmt.Errorf("config.auth.header belongs to type header")
		}
	case "header":
		if !headerName.MatchString(header) {
			return fmt.Errorf("config.auth.header must name the header that carries the secret, such as X-API-Key")
		}
	default:
		return fmt.Errorf("config.auth.type must be basic, bearer or header, not %v", a["type"])
	}
	return nil
}
