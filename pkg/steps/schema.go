package steps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Schema is the JSON Schema (draft 2020-12) of a step kind's config, as Go
// data: it refuses the keys the kind does not read, and documents the
// others (schemas/cardflow.schema.json is made of these).
type Schema = map[string]any

// object is the schema of a config object: its keys, those it requires,
// and no others.
func object(description string, required []string, properties map[string]Schema) Schema {
	s := Schema{"type": "object", "additionalProperties": false, "properties": properties}
	if description != "" {
		s["description"] = description
	}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// typed is the schema of a value of one JSON type, described.
func typed(typ, description string) Schema {
	return Schema{"type": typ, "description": description}
}

// anyValue is the schema of a value of any type: a template value, whose
// strings may hold {{ }} expressions.
func anyValue(description string) Schema {
	return Schema{"description": description}
}

// enum is the schema of a string that is one of values.
func enum(description string, values ...string) Schema {
	return Schema{"type": "string", "enum": values, "description": description}
}

// list is the schema of a list of items.
func list(description string, items Schema) Schema {
	return Schema{"type": "array", "items": items, "description": description}
}

// checker validates configs against a kind's schema with the JSON Schema
// validator.
type checker struct {
	schema Schema
	// compiled is the schema compiled; nil until compile.
	compiled *jsonschema.Schema
}

// compile compiles the schema of kind name.
func (c *checker) compile(name string) error {
	doc, err := jsonDoc(c.schema)
	if err != nil {
		return fmt.Errorf("steps: the config schema of kind %q: %v", name, err)
	}
	url := "cardflow:steps/" + name + ".json"
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	if err := comp.AddResource(url, doc); err != nil {
		return fmt.Errorf("steps: the config schema of kind %q: %v", name, err)
	}
	if c.compiled, err = comp.Compile(url); err != nil {
		return fmt.Errorf("steps: the config schema of kind %q: %v", name, err)
	}
	return nil
}

// jsonDoc turns Go data into what the validator reads: the values
// encoding/json decodes to, with json.Number for numbers.
func jsonDoc(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// unknownKeys reports, of the violations of a config, the first key its
// schema does not know, with the keys it does: a misspelt key would
// otherwise be dropped without a word. top is true for the config's own keys, false for the
// keys of the objects in it (the kind's decoding may name those better).
// Only unknown keys are refused this way; the kind's Validate and Check
// say the rest in their words.
func (c *checker) unknownKeys(kindName string, violations []*jsonschema.ValidationError, top bool) error {
	for _, e := range violations {
		ap, ok := e.ErrorKind.(*kind.AdditionalProperties)
		if !ok || len(ap.Properties) == 0 || (len(e.InstanceLocation) == 0) != top {
			continue
		}
		key := strings.Join(append(slices.Clone(e.InstanceLocation), slices.Min(ap.Properties)), ".")
		known := c.known(e.InstanceLocation)
		if len(known) == 0 {
			return fmt.Errorf("unknown config key %q (a %s step has no config)", key, kindName)
		}
		return fmt.Errorf("unknown config key %q (known: %s)", key, strings.Join(known, ", "))
	}
	return nil
}

// violations validates config and returns the errors at the leaves. A
// null stands for an absent key, as decoding reads it.
func (c *checker) violations(config map[string]any) []*jsonschema.ValidationError {
	doc, err := jsonDoc(withoutNulls(config))
	if err != nil {
		return nil // decoding the config says what is wrong with it
	}
	err = c.compiled.Validate(doc)
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return nil
	}
	var leaves []*jsonschema.ValidationError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
		}
		for _, cause := range e.Causes {
			walk(cause)
		}
	}
	walk(ve)
	return leaves
}

// known lists the keys the object at path may hold, sorted.
func (c *checker) known(path []string) []string {
	s := c.schema
	for _, key := range path {
		props, _ := s["properties"].(map[string]Schema)
		next, ok := props[key]
		if !ok {
			return nil
		}
		s = next
	}
	props, _ := s["properties"].(map[string]Schema)
	return slices.Sorted(maps.Keys(props))
}

// withoutNulls returns v without the object keys whose value is null, at
// any depth.
func withoutNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, item := range v {
			if item != nil {
				out[k] = withoutNulls(item)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = withoutNulls(item)
		}
		return out
	}
	return v
}
