package sap_test

import (
	"context"
	"testing"

	"github.com/cardflow/cardflow/pkg/sap"
)

// BenchmarkStepCall measures one erp step's call as the engine makes it: a
// new client (no CSRF token, no session yet) over the shared outbound
// client, against the fake SAP on loopback.
func BenchmarkStepCall(b *testing.B) {
	for _, bc := range []struct {
		name, version, auth, method string
	}{
		{"read/V2/basic", sap.V2, sap.AuthBasic, "GET"},
		{"read/V4/oauth2", sap.V4, sap.AuthOAuth2, "GET"},
		{"change/V2/basic", sap.V2, sap.AuthBasic, "PATCH"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := newSetup(b, bc.version, bc.auth)
			req := sap.Request{Method: bc.method, Service: s.srv.Service(), Entity: "A_PurchaseOrder('4500000001')"}
			if bc.method != "GET" {
				req.Body = obj{"DocumentCurrency": "EUR"}
			}
			b.ReportAllocs()
			for b.Loop() {
				c, err := sap.New(s.profile, s.hc, s.secrets)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Do(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
