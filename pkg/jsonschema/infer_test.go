package jsonschema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	validator "github.com/santhosh-tekuri/jsonschema/v6"
)

// decode reads JSON the way a request body is read.
func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

// check infers a schema from v and validates v against it, asserting
// formats, so that the schema is a valid 2020-12 schema and accepts its
// source.
func check(t *testing.T, v any) map[string]any {
	t.Helper()
	schema := Infer(v)
	sch := compile(t, schema)
	if err := sch.Validate(reread(t, v)); err != nil {
		t.Errorf("the schema inferred from %v rejects it: %v", v, err)
	}
	return schema
}

func compile(t *testing.T, schema map[string]any) *validator.Schema {
	t.Helper()
	c := validator.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("inferred.json", reread(t, schema)); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("inferred.json")
	if err != nil {
		t.Fatalf("compile %v: %v", schema, err)
	}
	return sch
}

// reread gives v as the validator reads JSON.
func reread(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := validator.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestInfer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, value, want string
	}{
		{"null", `null`, `{"type": "null"}`},
		{"boolean", `true`, `{"type": "boolean"}`},
		{"integer", `42`, `{"type": "integer"}`},
		{"integer written with a fraction", `42.0`, `{"type": "integer"}`},
		{"number", `4.2`, `{"type": "number"}`},
		{"string", `"hello world"`, `{"type": "string"}`},
		{"date-time", `"2024-05-01T08:00:00Z"`, `{"type": "string", "format": "date-time"}`},
		{"date-time with fraction and offset", `"2024-05-01T08:00:00.123+02:00"`, `{"type": "string", "format": "date-time"}`},
		{"date", `"2024-05-01"`, `{"type": "string", "format": "date"}`},
		{"time", `"08:30:00Z"`, `{"type": "string", "format": "time"}`},
		{"email", `"ada.lovelace+po@example.co.uk"`, `{"type": "string", "format": "email"}`},
		{"uri", `"https://erp.example.com/orders/42?view=full#lines"`, `{"type": "string", "format": "uri"}`},
		{"uri with escapes", `"https://example.com/a%20b"`, `{"type": "string", "format": "uri"}`},
		{"uuid", `"0f8fad5b-d9cb-469f-a165-70867728950e"`, `{"type": "string", "format": "uuid"}`},
		{"ipv4", `"192.168.0.1"`, `{"type": "string", "format": "ipv4"}`},
		{"ipv6", `"2001:db8::1"`, `{"type": "string", "format": "ipv6"}`},
		{"no month 13", `"2024-13-01"`, `{"type": "string"}`},
		{"no offset, no time", `"08:30:00"`, `{"type": "string"}`},
		{"date-time with a space", `"2024-05-01 08:00:00Z"`, `{"type": "string"}`},
		{"version number", `"1.2.3"`, `{"type": "string"}`},
		{"leading zero", `"192.168.0.01"`, `{"type": "string"}`},
		{"ipv6 zone", `"fe80::1%eth0"`, `{"type": "string"}`},
		{"local address", `"ada@localhost"`, `{"type": "string"}`},
		{"scheme without authority", `"note:hello"`, `{"type": "string"}`},
		{"uri with a space", `"https://example.com/a b"`, `{"type": "string"}`},
		{"empty object", `{}`, `{"type": "object"}`},
		{"empty array", `[]`, `{"type": "array"}`},
		{
			"object",
			`{"id": 7, "name": "Ada", "active": true, "score": 9.5, "note": null, "address": {"city": "Berlin", "zip": "10115"}}`,
			`{"type": "object",
			  "properties": {
			    "id": {"type": "integer"}, "name": {"type": "string"}, "active": {"type": "boolean"},
			    "score": {"type": "number"}, "note": {"type": "null"},
			    "address": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string"}}, "required": ["city", "zip"]}
			  },
			  "required": ["active", "address", "id", "name", "note", "score"]}`,
		},
		{
			"objects merge; required are the keys all have",
			`[{"sku": "A", "qty": 1, "discount": 0.1}, {"sku": "B", "qty": 2, "gift": true}, {"sku": "C", "qty": 3}]`,
			`{"type": "array", "items": {"type": "object",
			  "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}, "discount": {"type": "number"}, "gift": {"type": "boolean"}},
			  "required": ["qty", "sku"]}}`,
		},
		{"integers and numbers make number", `[1, 2.5, 3]`, `{"type": "array", "items": {"type": "number"}}`},
		{"string or null", `["a", null, "b"]`, `{"type": "array", "items": {"type": ["string", "null"]}}`},
		{"one format for all", `["2024-05-01", "2024-05-02"]`, `{"type": "array", "items": {"type": "string", "format": "date"}}`},
		{"formats differ", `["2024-05-01", "2024-05-01T08:00:00Z"]`, `{"type": "array", "items": {"type": "string"}}`},
		{"not all have the format", `["2024-05-01", "soon"]`, `{"type": "array", "items": {"type": "string"}}`},
		{
			"objects, strings and arrays",
			`[{"a": 1}, "x", [true], 2]`,
			`{"type": "array", "items": {"type": ["object", "array", "string", "integer"],
			  "properties": {"a": {"type": "integer"}}, "required": ["a"], "items": {"type": "boolean"}}}`,
		},
		{
			"arrays of arrays",
			`[[1, 2], [], [3.5]]`,
			`{"type": "array", "items": {"type": "array", "items": {"type": "number"}}}`,
		},
		{
			"nested arrays of objects merge all the way down",
			`{"orders": [{"lines": [{"sku": "A"}]}, {"lines": [{"sku": "B", "qty": 2}], "note": "x"}]}`,
			`{"type": "object", "required": ["orders"], "properties": {"orders": {"type": "array", "items": {
			  "type": "object", "required": ["lines"], "properties": {
			    "note": {"type": "string"},
			    "lines": {"type": "array", "items": {"type": "object", "required": ["sku"],
			      "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}}}}}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(t, decode(t, tt.value))
			want := decode(t, tt.want).(map[string]any)
			want["$schema"] = Draft
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("Infer(%s)\n got %s\nwant %s", tt.value, g, w)
			}
		})
	}
}

func TestInferGoValues(t *testing.T) {
	t.Parallel()
	type line struct {
		SKU string  `json:"sku"`
		Qty int     `json:"qty"`
		At  *string `json:"at"`
	}
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"ints", []any{1, int64(2), uint8(3)}, `{"type": "array", "items": {"type": "integer"}}`},
		{"json.Number", []any{json.Number("2"), json.Number("2.5")}, `{"type": "array", "items": {"type": "number"}}`},
		{"float32", float32(1.5), `{"type": "number"}`},
		{"struct", line{SKU: "A", Qty: 2}, `{"type": "object", "required": ["at", "qty", "sku"],
		  "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}, "at": {"type": "null"}}}`},
		{"typed map", map[string][]string{"tags": {"eu"}}, `{"type": "object", "required": ["tags"],
		  "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}`},
		{"not JSON", map[string]any{"f": func() {}}, `{"type": "object", "required": ["f"], "properties": {"f": {}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Infer(tt.value)
			compile(t, got)
			want := decode(t, tt.want).(map[string]any)
			want["$schema"] = Draft
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("Infer(%#v)\n got %s\nwant %s", tt.value, g, w)
			}
		})
	}
}

func TestInferIsDeterministic(t *testing.T) {
	t.Parallel()
	a := `{"k": "x", "n": 1, "m": null}`
	b := `{"z": [1], "k": "2024-05-01", "n": 2.5, "a": {"b": true}}`
	first, _ := json.Marshal(Infer(decode(t, "["+a+","+b+"]")))
	for range 20 {
		got, _ := json.Marshal(Infer(decode(t, "["+b+","+a+"]")))
		if string(got) != string(first) {
			t.Fatalf("the schema changed with the order of the items:\n got %s\nwant %s", got, first)
		}
	}
}

const purchaseOrder = `{
  "id": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
  "number": "PO-2024-0042",
  "status": "PENDING_APPROVAL",
  "created_at": "2024-05-01T08:15:30.250Z",
  "requested_delivery": "2024-05-20",
  "delivery_window": {"from": "08:00:00+02:00", "to": "16:00:00+02:00"},
  "company_code": "1000",
  "buyer": {"id": 4711, "name": "Ada Lovelace", "email": "ada.lovelace@example.com", "phone": null, "cost_center": "CC-200"},
  "vendor": {"id": "V-300104", "name": "ACME Office Supplies GmbH", "website": "https://acme.example.com/", "vat_id": "DE123456789"},
  "currency": "EUR",
  "lines": [
    {"line": 10, "sku": "PAP-A4-500", "description": "Copy paper A4, 500 sheets", "quantity": 40, "unit": "PK", "unit_price": 4.99, "tax_rate": 0.19},
    {"line": 20, "sku": "TON-HP-59A", "description": "Toner HP 59A", "quantity": 4, "unit": "EA", "unit_price": 89.0, "tax_rate": 0.19, "discount": 0.05},
    {"line": 30, "sku": "SRV-INSTALL", "description": "Installation", "quantity": 1, "unit": "H", "unit_price": 120, "tax_rate": 0.19, "notes": ["after 14:00", "call first"]}
  ],
  "totals": {"net": 675.8, "tax": 128.4, "gross": 804.2},
  "approvals": [],
  "attachments": [{"name": "quote.pdf", "url": "https://files.example.com/q/8812.pdf", "size": 18422}],
  "tags": ["office", "urgent"],
  "client_ip": "203.0.113.7",
  "metadata": {"source": "SAP", "trace": "2001:db8:85a3::8a2e:370:7334", "retries": 0, "dry_run": false}
}`

func TestInferPurchaseOrder(t *testing.T) {
	t.Parallel()
	value := decode(t, purchaseOrder)
	schema := check(t, value)

	at := func(path ...string) map[string]any {
		s := schema
		for _, p := range path {
			next, ok := s[p].(map[string]any)
			if !ok {
				t.Fatalf("no %v in the schema", path)
			}
			s = next
		}
		return s
	}
	lineItem := at("properties", "lines", "items")
	for _, tt := range []struct {
		name      string
		got, want any
	}{
		{"id format", at("properties", "id")["format"], "uuid"},
		{"created_at format", at("properties", "created_at")["format"], "date-time"},
		{"requested_delivery format", at("properties", "requested_delivery")["format"], "date"},
		{"delivery window format", at("properties", "delivery_window", "properties", "from")["format"], "time"},
		{"buyer email format", at("properties", "buyer", "properties", "email")["format"], "email"},
		{"buyer phone type", at("properties", "buyer", "properties", "phone")["type"], "null"},
		{"vendor website format", at("properties", "vendor", "properties", "website")["format"], "uri"},
		{"client_ip format", at("properties", "client_ip")["format"], "ipv4"},
		{"trace format", at("properties", "metadata", "properties", "trace")["format"], "ipv6"},
		{"line required", lineItem["required"], []any{"description", "line", "quantity", "sku", "tax_rate", "unit", "unit_price"}},
		{"quantity type", at("properties", "lines", "items", "properties", "quantity")["type"], "integer"},
		{"unit_price type", at("properties", "lines", "items", "properties", "unit_price")["type"], "number"},
		{"notes items", at("properties", "lines", "items", "properties", "notes", "items")["type"], "string"},
		{"approvals", at("properties", "approvals"), map[string]any{"type": "array"}},
	} {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.name, tt.got, tt.want)
		}
	}

	// The schema is not so loose that it accepts anything.
	sch := compile(t, schema)
	for _, change := range []struct {
		name   string
		modify func(po map[string]any)
	}{
		{"quantity as text", func(po map[string]any) {
			po["lines"].([]any)[0].(map[string]any)["quantity"] = "forty"
		}},
		{"no vendor", func(po map[string]any) { delete(po, "vendor") }},
		{"created_at not a date-time", func(po map[string]any) { po["created_at"] = "yesterday" }},
		{"a line without a sku", func(po map[string]any) {
			delete(po["lines"].([]any)[1].(map[string]any), "sku")
		}},
	} {
		po := decode(t, purchaseOrder).(map[string]any)
		change.modify(po)
		if err := sch.Validate(reread(t, po)); err == nil {
			t.Errorf("%s: the schema accepts it, want a rejection", change.name)
		}
	}
}
