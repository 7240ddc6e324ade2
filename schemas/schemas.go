// Package schemas holds the JSON Schemas cardflow publishes:
// cardflow.schema.json, the schema of an apply document (a card or a
// workflow as a file), generated from the step kinds of pkg/steps with
// `go generate ./schemas`. The API serves it, so editors can validate and
// complete such files; package schemacheck validates documents with it.
// This package links nothing but the file, for the console function.
package schemas

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
)

//go:generate go run ./gen -o cardflow.schema.json

// Cardflow is cardflow.schema.json.
//
//go:embed cardflow.schema.json
var Cardflow []byte

// Path is where the API serves Cardflow. It needs no API key: it says
// nothing about any organization.
const Path = "/v1/schemas/cardflow.schema.json"

// Handler serves Cardflow.
func Handler() http.Handler {
	sum := sha256.Sum256(Cardflow)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/schema+json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("ETag", etag)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write(Cardflow)
	})
}
