package steps_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/internal/sapcaptest"
	"github.com/cardflow/cardflow/pkg/steps"
)

// TestERPAgainstCAP runs erp steps against SAP CAP over V4 and V2: a
// filtered read with its items expanded, every page of a paged collection,
// a create through the CSRF check and SAP's 404.
func TestERPAgainstCAP(t *testing.T) {
	base := sapcaptest.Start(t, true)
	sec := secretMap{"sap-cap": sapcaptest.User + ":" + sapcaptest.Password}
	for _, tc := range []struct{ version, service, id string }{
		{"V4", sapcaptest.ServiceV4, "4800000004"},
		{"V2", sapcaptest.ServiceV2, "4800000002"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			profile := obj{"erp": obj{"type": "SAP", "base_url": base, "client": "100", "odata_version": tc.version, "auth": obj{"type": "basic", "secret": "sap-cap"}}}
			body := func(out steps.Outcome) any {
				t.Helper()
				if out.Reason != "" {
					t.Fatalf("got reason %q, want success", out.Reason)
				}
				return out.Output.(obj)["body"]
			}

			out := runCall(t, steps.ERP, obj{"service": tc.service, "entity": "PurchaseOrders",
				"query": obj{"$filter": "supplier eq '{{ input.supplier }}'", "$expand": "items", "$orderby": "ID"}}, obj{"supplier": "Contoso"}, profile, sec)
			list := body(out).([]any)
			var got []string
			for _, po := range list {
				items := po.(obj)["items"]
				if tc.version == "V2" {
					items = items.(obj)["results"]
				}
				got = append(got, fmt.Sprintf("%v:%d", po.(obj)["ID"], len(items.([]any))))
			}
			if got, want := strings.Join(got, " "), "4500000005:2 4500000006:0"; got != want {
				t.Errorf("filter and expand: got %q, want %q", got, want)
			}

			out = runCall(t, steps.ERP, obj{"service": tc.service, "entity": "PagedPurchaseOrders", "pages": 5,
				"query": obj{"$filter": "ID lt '4600000000'"}}, nil, profile, sec)
			if got, want := len(body(out).([]any)), 7; got != want {
				t.Errorf("pages: got %d orders, want %d", got, want)
			}
			out = runCall(t, steps.ERP, obj{"service": tc.service, "entity": "PagedPurchaseOrders", "pages": 2}, nil, profile, sec)
			if want := "SAP has more than 2 pages of results"; !strings.Contains(out.Reason, want) {
				t.Errorf("too many pages: got reason %q, want it to contain %q", out.Reason, want)
			}

			out = runCall(t, steps.ERP, obj{"method": "POST", "service": tc.service, "entity": "PurchaseOrders",
				"body": obj{"ID": tc.id, "supplier": "{{ input.supplier }}", "amount": 42, "currency": "EUR", "status": "Open"}}, obj{"supplier": "Litware"}, profile, sec)
			if got, want := fmt.Sprintf("%v %v", out.Output.(obj)["status"], body(out).(obj)["supplier"]), "201 Litware"; got != want {
				t.Errorf("create: got %q, want %q", got, want)
			}
			if strings.Contains(fmt.Sprint(out.Input, out.Output), sapcaptest.Password) {
				t.Errorf("the step's record holds the password: %v %v", out.Input, out.Output)
			}

			out = runCall(t, steps.ERP, obj{"service": tc.service, "entity": "PurchaseOrders('{{ input.po }}')"}, obj{"po": "4599999999"}, profile, sec)
			if got, want := fmt.Sprintf("%v %s", out.Output.(obj)["status"], out.Reason), "404 GET "+base+tc.service+"/PurchaseOrders('4599999999'): SAP answered 404 Not Found: Not Found (404)"; got != want {
				t.Errorf("missing order: got %q, want %q", got, want)
			}
		})
	}
}
