package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	validator "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Compile compiles a schema given as decoded JSON, such as a workflow's
// workflow_schema. A schema without $schema is read as draft 2020-12.
func Compile(schema map[string]any) (*validator.Schema, error) {
	doc, err := decoded(schema)
	if err != nil {
		return nil, err
	}
	c := validator.NewCompiler()
	c.DefaultDraft(validator.Draft2020)
	if err := c.AddResource("workflow_schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("workflow_schema.json")
}

// Mismatch is the first way a value breaks a schema: the JSON pointer of
// the value and the rule it breaks.
type Mismatch struct {
	Pointer, Rule, Message string
}

func (m *Mismatch) Error() string {
	p := m.Pointer
	if p == "" {
		p = "/"
	}
	return fmt.Sprintf("%s breaks %s: %s", p, m.Rule, m.Message)
}

// Check validates v, as encoding/json decodes it, against s; a mismatch is
// a *Mismatch.
func Check(s *validator.Schema, v any) error {
	doc, err := decoded(v)
	if err != nil {
		return err
	}
	err = s.Validate(doc)
	var ve *validator.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	var ptr strings.Builder
	for _, t := range ve.InstanceLocation {
		ptr.WriteString("/" + strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	rule := strings.Join(ve.ErrorKind.KeywordPath(), "/")
	return &Mismatch{Pointer: ptr.String(), Rule: rule, Message: ve.ErrorKind.LocalizedString(message.NewPrinter(language.English))}
}

// decoded gives v as the validator reads JSON.
func decoded(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return validator.UnmarshalJSON(bytes.NewReader(b))
}
