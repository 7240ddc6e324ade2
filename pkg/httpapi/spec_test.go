package httpapi_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestSpecAnyValue: payloads that openapi.yaml calls any JSON value accept
// every one, null and nulls inside included, as executions carry them.
func TestSpecAnyValue(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join("..", "..", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	anyValue := doc.Components.Schemas["AnyValue"].Value
	for _, v := range []any{nil, 1.5, "text", true, map[string]any{"a": nil}, []any{nil, 1.0, []any{nil, map[string]any{}}}} {
		if err := anyValue.VisitJSON(v); err != nil {
			t.Errorf("AnyValue %v: got %v, want it accepted", v, err)
		}
	}
}
