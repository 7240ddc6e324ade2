package sap_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/cardflow/cardflow/internal/sapcaptest"
	"github.com/cardflow/cardflow/pkg/outbound"
	"github.com/cardflow/cardflow/pkg/sap"
)

// The suite against SAP CAP (sapcaptest.Start): SAP's own OData server,
// V4 natively and V2 through SAP's community adapter. The fake in
// internal/fakes/saptest stays for faults CAP cannot be made to show.

// capClient is a client for CAP's mocked user (tools/sapcap/package.json).
func capClient(t *testing.T, base, version, password string) *sap.Client {
	t.Helper()
	// sap-client goes with every call, as to S/4; CAP ignores it.
	p, err := sap.ParseProfile(obj{"type": "SAP", "base_url": base, "client": "100", "odata_version": version, "auth": obj{"type": "basic", "secret": "sap-cap"}})
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := outbound.ParseAllow("127.0.0.1")
	hc, err := outbound.New(outbound.Config{Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	c, err := sap.New(p, hc, secretMap{"sap-cap": sapcaptest.User + ":" + password})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func capService(version string) string {
	if version == sap.V2 {
		return sapcaptest.ServiceV2
	}
	return sapcaptest.ServiceV4
}

func ids(t *testing.T, result any) string {
	t.Helper()
	list, ok := result.([]any)
	if !ok {
		t.Fatalf("got %s, want a collection", toJSON(result))
	}
	var out []string
	for _, e := range list {
		out = append(out, fmt.Sprint(e.(obj)["ID"]))
	}
	return strings.Join(out, " ")
}

func TestCAPReads(t *testing.T) {
	base := sapcaptest.Start(t, true)
	for _, version := range []string{sap.V4, sap.V2} {
		t.Run(version, func(t *testing.T) {
			c := capClient(t, base, version, sapcaptest.Password)
			svc := capService(version)
			ctx := context.Background()
			tests := []struct {
				name   string
				entity string
				query  url.Values
				want   string
			}{
				{name: "filter", entity: "PurchaseOrders", query: url.Values{"$filter": {"amount gt 1000 and currency eq 'EUR'"}, "$orderby": {"ID"}}, want: "4500000003 4500000005"},
				{name: "filter on text", entity: "PurchaseOrders", query: url.Values{"$filter": {"supplier eq 'Contoso' and status eq 'Open'"}}, want: "4500000005"},
				{name: "top and skip", entity: "PurchaseOrders", query: url.Values{"$orderby": {"ID"}, "$top": {"2"}, "$skip": {"1"}}, want: "4500000002 4500000003"},
				{name: "nothing found", entity: "PurchaseOrders", query: url.Values{"$filter": {"supplier eq 'Nobody'"}}, want: ""},
			}
			for _, tt := range tests {
				resp, err := c.Do(ctx, sap.Request{Service: svc, Entity: tt.entity, Query: tt.query})
				if err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
				if got := ids(t, resp.Result); got != tt.want {
					t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
				}
			}

			// One entity, with its items expanded: V4 gives them as an
			// array, V2 as {"results": [...]}.
			resp, err := c.Do(ctx, sap.Request{Service: svc, Entity: "PurchaseOrders('4500000002')", Query: url.Values{"$expand": {"items"}}})
			if err != nil {
				t.Fatal(err)
			}
			po := resp.Result.(obj)
			if got, want := po["supplier"], "Acme Tools"; got != want {
				t.Errorf("entity: got supplier %v, want %v", got, want)
			}
			items := po["items"]
			if version == sap.V2 {
				items = items.(obj)["results"]
			}
			if list, _ := items.([]any); len(list) != 2 || list[1].(obj)["material"] != "Screws" {
				t.Errorf("$expand=items: got %s, want the hammer and the screws", toJSON(po["items"]))
			}
		})
	}
}

func TestCAPPaging(t *testing.T) {
	base := sapcaptest.Start(t, true)
	for _, version := range []string{sap.V4, sap.V2} {
		t.Run(version, func(t *testing.T) {
			c := capClient(t, base, version, sapcaptest.Password)
			ctx := context.Background()
			req := sap.Request{Service: capService(version), Entity: "PagedPurchaseOrders", Query: url.Values{"$filter": {"ID lt '4600000000'"}}}

			// CAP cuts the collection at @cds.query.limit (3) and links the next page.
			resp, err := c.Do(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := ids(t, resp.Result), "4500000001 4500000002 4500000003"; got != want {
				t.Errorf("first page: got %q, want %q", got, want)
			}

			resp, err = c.DoAll(ctx, req, 10)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := ids(t, resp.Result), "4500000001 4500000002 4500000003 4500000004 4500000005 4500000006 4500000007"; got != want {
				t.Errorf("every page: got %q, want %q", got, want)
			}
			if got, want := resp.Pages, 3; got != want {
				t.Errorf("every page: got %d pages, want %d", got, want)
			}

			_, err = c.DoAll(ctx, req, 2)
			if got, want := fmt.Sprint(err), "SAP has more than 2 pages of results; narrow the query with $filter or $top"; !strings.Contains(got, want) {
				t.Errorf("too many pages: got %q, want it to contain %q", got, want)
			}

			// A $top within the limit is one page.
			req.Query.Set("$top", "2")
			resp, err = c.DoAll(ctx, req, 10)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprintf("%s in %d", ids(t, resp.Result), resp.Pages), "4500000001 4500000002 in 1"; got != want {
				t.Errorf("$top=2: got %q, want %q", got, want)
			}
		})
	}
}

func TestCAPChanges(t *testing.T) {
	for _, csrf := range []bool{true, false} {
		base := sapcaptest.Start(t, csrf)
		for i, version := range []string{sap.V4, sap.V2} {
			t.Run(fmt.Sprintf("%s/csrf=%v", version, csrf), func(t *testing.T) {
				c := capClient(t, base, version, sapcaptest.Password)
				svc := capService(version)
				ctx := context.Background()
				id := fmt.Sprintf("460000000%d", i)

				if csrf {
					// Without the token the check refuses, so the client's
					// changes below went through the handshake.
					req, _ := http.NewRequest("POST", base+svc+"/PurchaseOrders", strings.NewReader(`{"ID": "4699999999", "supplier": "x"}`))
					req.SetBasicAuth(sapcaptest.User, sapcaptest.Password)
					req.Header.Set("Content-Type", "application/json")
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if got, want := fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("X-Csrf-Token")), "403 Required"; got != want {
						t.Errorf("POST without a token: got %q, want %q", got, want)
					}
				}

				// A deep create: the order with its items.
				body := obj{"ID": id, "supplier": "Tailspin", "amount": 300, "currency": "EUR", "status": "Open",
					"items": []any{obj{"itemNo": 10, "material": "Paint", "quantity": 12, "price": 25}}}
				resp, err := c.Do(ctx, sap.Request{Method: "POST", Service: svc, Entity: "PurchaseOrders", Body: body})
				if err != nil {
					t.Fatal(err)
				}
				if got, want := fmt.Sprintf("%d %v", resp.Status, resp.Result.(obj)["supplier"]), "201 Tailspin"; got != want {
					t.Errorf("create: got %q, want %q", got, want)
				}

				entity := "PurchaseOrders('" + id + "')"
				if _, err := c.Do(ctx, sap.Request{Method: "PATCH", Service: svc, Entity: entity, Body: obj{"status": "Approved"}}); err != nil {
					t.Fatal(err)
				}
				resp, err = c.Do(ctx, sap.Request{Service: svc, Entity: entity, Query: url.Values{"$expand": {"items"}}})
				if err != nil {
					t.Fatal(err)
				}
				po := resp.Result.(obj)
				items := po["items"]
				if version == sap.V2 {
					items = items.(obj)["results"]
				}
				if got, want := fmt.Sprintf("%v %d", po["status"], len(items.([]any))), "Approved 1"; got != want {
					t.Errorf("after the update: got %q, want %q", got, want)
				}

				if _, err := c.Do(ctx, sap.Request{Method: "DELETE", Service: svc, Entity: entity}); err != nil {
					t.Fatal(err)
				}
				_, err = c.Do(ctx, sap.Request{Service: svc, Entity: entity})
				var se *sap.Error
				if !errors.As(err, &se) || se.Status != 404 {
					t.Errorf("read after delete: got %v, want a 404", err)
				}
			})
		}
	}
}

func TestCAPErrors(t *testing.T) {
	base := sapcaptest.Start(t, true)
	for _, version := range []string{sap.V4, sap.V2} {
		t.Run(version, func(t *testing.T) {
			svc := capService(version)
			ctx := context.Background()
			tests := []struct {
				name     string
				password string
				req      sap.Request
				status   int
				want     string
			}{
				{name: "no such order", password: sapcaptest.Password, req: sap.Request{Service: svc, Entity: "PurchaseOrders('4599999999')"}, status: 404, want: "SAP answered 404 Not Found: Not Found (404)"},
				{name: "no such entity set", password: sapcaptest.Password, req: sap.Request{Service: svc, Entity: "SalesOrders"}, status: 404, want: "SAP answered 404 Not Found"},
				{name: "bad filter", password: sapcaptest.Password, req: sap.Request{Service: svc, Entity: "PurchaseOrders", Query: url.Values{"$filter": {"amount gtt 5"}}}, status: 400, want: "SAP answered 400 Bad Request"},
				{name: "missing value", password: sapcaptest.Password, req: sap.Request{Method: "POST", Service: svc, Entity: "PurchaseOrders", Body: obj{"ID": "4700000001", "amount": 5}},
					status: 400, want: "SAP answered 400 Bad Request: supplier: Provide the missing value. (ASSERT_MANDATORY)"},
				{name: "out of range", password: sapcaptest.Password, req: sap.Request{Method: "POST", Service: svc, Entity: "PurchaseOrders", Body: obj{"ID": "4700000002", "supplier": "x", "amount": -5}},
					status: 400, want: "SAP answered 400 Bad Request: amount: Enter a value between 0 and 1000000. (ASSERT_RANGE)"},
				{name: "wrong password", password: "wrong", req: sap.Request{Service: svc, Entity: "PurchaseOrders"}, status: 401, want: "SAP answered 401 Unauthorized"},
			}
			for _, tt := range tests {
				c := capClient(t, base, version, tt.password)
				resp, err := c.Do(ctx, tt.req)
				var se *sap.Error
				if !errors.As(err, &se) {
					t.Fatalf("%s: got %v, want an *sap.Error", tt.name, err)
				}
				if resp == nil || resp.Status != tt.status || se.Status != tt.status {
					t.Errorf("%s: got status %d, want %d", tt.name, se.Status, tt.status)
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: got %q, want it to contain %q", tt.name, err, tt.want)
				}
				if strings.Contains(err.Error(), sapcaptest.Password) {
					t.Errorf("%s: the error %q holds the password", tt.name, err)
				}
			}
		})
	}
}

// TestNextLinks: faults CAP does not show. A next link to another host is
// not followed, since the credentials would go with it; one without
// sap-client gets it; DoAll is for collections read with a GET.
func TestNextLinks(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("$skiptoken") {
		case "":
			fmt.Fprint(w, `{"value": [{"ID": "1"}], "@odata.nextLink": "Orders?$skiptoken=1"}`)
		case "1":
			fmt.Fprint(w, `{"value": [{"ID": "2"}], "@odata.nextLink": "http://sap.example.net/odata/Orders?$skiptoken=2"}`)
		}
	}))
	t.Cleanup(srv.Close)
	p, err := sap.ParseProfile(obj{"type": "SAP", "base_url": srv.URL, "client": "100", "odata_version": "V4", "auth": obj{"type": "basic", "secret": "s"}})
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := outbound.ParseAllow("127.0.0.1")
	hc, err := outbound.New(outbound.Config{Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	c, err := sap.New(p, hc, secretMap{"s": "u:p"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.DoAll(context.Background(), sap.Request{Service: "/odata", Entity: "Orders"}, 5)
	if got, want := fmt.Sprint(err), "SAP's next page link leads to http://sap.example.net, away from "+srv.URL+"; the client does not send its credentials there"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if got, want := strings.Join(seen, " "), "sap-client=100 %24skiptoken=1&sap-client=100"; got != want {
		t.Errorf("got queries %q, want %q", got, want)
	}
	for _, tc := range []struct {
		method string
		pages  int
		want   string
	}{
		{"POST", 5, "only a GET reads pages, not POST"},
		{"GET", 0, "maxPages must be at least 1, not 0"},
	} {
		if _, err := c.DoAll(context.Background(), sap.Request{Method: tc.method, Service: "/odata", Entity: "Orders"}, tc.pages); fmt.Sprint(err) != tc.want {
			t.Errorf("%s with %d pages: got %v, want %q", tc.method, tc.pages, err, tc.want)
		}
	}
}
