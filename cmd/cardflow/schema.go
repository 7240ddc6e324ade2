package main

import (
	"io"

	"github.com/cardflow/cardflow/schemas"
)

// schemaCommand prints the JSON Schema of apply documents, for editors
// that read it from a file.
func schemaCommand(args []string, stdout io.Writer) error {
	c := newCommand("schema", "", "Prints the JSON Schema of a workflow or card as a file (kind: Workflow or kind: Card):\n"+
		"schemas/cardflow.schema.json, which the API also serves at "+schemas.Path+".\n", stdout)
	if _, err := c.parse(args, 0); err != nil {
		return err
	}
	_, err := stdout.Write(schemas.Cardflow)
	return err
}
