// Package schemacheck validates apply documents against
// schemas/cardflow.schema.json with the JSON Schema validator.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cardflow/cardflow/schemas"
)

// compiled is the schema compiled, once.
var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas.Cardflow))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("cardflow.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("cardflow.schema.json")
})

// Validate checks an apply document, as encoding/json would encode it,
// against the schema. The error is a *jsonschema.ValidationError, whose
// causes name the JSON pointer of each mismatch.
func Validate(doc any) error {
	s, err := compiled()
	if err != nil {
		return err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return s.Validate(v)
}
