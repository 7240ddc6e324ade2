package engine

import (
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/sap"
)

// checkIntegrations checks workflow_integrations.erp, the SAP profile, when
// the workflow has one; an erp step checks that it has.
func checkIntegrations(w *cardflow.Workflow) error {
	erp, has := w.WorkflowIntegrations["erp"]
	if !has {
		return nil
	}
	_, err := sap.ParseProfile(erp)
	return err
}
