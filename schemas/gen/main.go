// Command gen writes cardflow.schema.json from the step kinds:
// go generate ./schemas.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/cardflow/cardflow/pkg/steps"
)

func main() {
	out := flag.String("o", "cardflow.schema.json", "file to write")
	flag.Parse()
	b, err := steps.Kinds.DocumentSchemaJSON()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		log.Fatal(err)
	}
}
