package steps_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/steps"
)

func TestERPConfig(t *testing.T) {
	t.Parallel()
	profile := obj{"erp": obj{"type": "SAP", "base_url": "https://sap.example.com", "client": "100", "auth": obj{"type": "basic", "secret": "sap-prod"}}}
	call := func(extra obj) obj {
		c := obj{"service": "/sap/opu/odata/sap/API_PURCHASEORDER_PROCESS_SRV", "entity": "A_PurchaseOrder('{{ input.po }}')"}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	testConfigs(t, steps.ERP, []configCase{
		{name: "read", config: call(nil), integrations: profile},
		{name: "post", config: call(obj{"method": "POST", "body": obj{"NoteText": "{{ input.note }}"}, "timeout": "PT1M"}), integrations: profile},
		{name: "unknown method", config: call(obj{"method": "MERGE"}), integrations: profile, want: `config.method "MERGE" is not one of GET, POST, PUT, PATCH, DELETE`},
		{name: "no service", config: obj{"entity": "A"}, integrations: profile, want: "config.service is required for a erp step"},
		{name: "a URL as service", config: call(obj{"service": "https://sap/x"}), integrations: profile, want: `config.service "https://sap/x" must be the OData service path`},
		{name: "a template in service", config: call(obj{"service": "/sap/{{ input.srv }}"}), integrations: profile, want: "must be the OData service path"},
		{name: "no entity", config: obj{"service": "/sap/opu/odata/sap/X_SRV"}, integrations: profile, want: "config.entity is required for a erp step"},
		{name: "headers not an object", config: call(obj{"headers": "x"}), integrations: profile, want: "config.headers must be an object"},
		{name: "bad timeout", config: call(obj{"timeout": "P1Y"}), integrations: profile, want: `config.timeout: "P1Y" is not an ISO 8601 duration`},
		{name: "timeout over the cap", config: call(obj{"timeout": "PT3M"}), integrations: profile, want: "config.timeout PT3M is longer than 2 minutes, the longest a call may wait"},
		{name: "entity that is a placeholder", config: call(obj{"entity": "{{ input.set }}"}), integrations: profile},
		{name: "no profile", config: call(nil), want: "an erp step needs workflow_integrations.erp, the SAP profile it calls", by: saving},
		{name: "auth of its own", config: call(obj{"auth": obj{"type": "basic", "secret": "s"}}), integrations: profile, want: "config.auth: an erp step authenticates with workflow_integrations.erp.auth", by: checking},
		{name: "pages", config: call(obj{"entity": "A_PurchaseOrder", "pages": 5}), integrations: profile},
		{name: "pages with an explicit GET", config: call(obj{"entity": "A_PurchaseOrder", "method": "get", "pages": 1}), integrations: profile},
		{name: "no pages", config: call(obj{"pages": 0}), integrations: profile, want: "config.pages"},
		{name: "too many pages", config: call(obj{"pages": 101}), integrations: profile, want: "config.pages"},
		{name: "pages of a POST", config: call(obj{"method": "POST", "pages": 2}), integrations: profile, want: "config.pages reads a collection's pages with a GET, not with POST"},
		{name: "bad entity template", config: call(obj{"entity": "A('{{ input.po ')"}), integrations: profile, want: "config.entity: ", by: checking},
	})
}
