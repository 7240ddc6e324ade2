package jsonschema

import (
	"errors"
	"testing"
)

func TestCheck(t *testing.T) {
	schema := map[string]any{
		"type":     "object",
		"required": []any{"amount"},
		"properties": map[string]any{
			"amount": map[string]any{"type": "number", "minimum": 1},
			"lines":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		},
	}
	s, err := Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name          string
		input         map[string]any
		pointer, rule string
	}{
		{"valid", map[string]any{"amount": 5}, "", ""},
		{"missing", map[string]any{}, "", "required"},
		{"too small", map[string]any{"amount": 0}, "/amount", "minimum"},
		{"wrong item", map[string]any{"amount": 2, "lines": []any{"a", 3}}, "/lines/1", "type"},
	} {
		err := Check(s, tt.input)
		var m *Mismatch
		switch {
		case tt.rule == "" && err != nil:
			t.Errorf("%s: got %v, want no mismatch", tt.name, err)
		case tt.rule == "":
		case !errors.As(err, &m):
			t.Errorf("%s: got %v, want a mismatch", tt.name, err)
		case m.Pointer != tt.pointer || m.Rule != tt.rule:
			t.Errorf("%s: got pointer %q rule %q, want %q %q", tt.name, m.Pointer, m.Rule, tt.pointer, tt.rule)
		}
	}
}

func TestCompileRefusesABrokenSchema(t *testing.T) {
	for _, schema := range []map[string]any{
		{"type": 12},
		{"minimum": "one"},
	} {
		if _, err := Compile(schema); err == nil {
			t.Errorf("Compile(%v): got no error, want one", schema)
		}
	}
}
