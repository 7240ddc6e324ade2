package main

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/cardflow/cardflow/schemas"
)

// TestServedSchema: `cardflow serve` answers the apply document's schema
// without a key, and nothing but GET reads it.
func TestServedSchema(t *testing.T) {
	s := startServer(t, binary(t), t.TempDir(), freePort(t))
	for _, tt := range []struct {
		method string
		want   int
	}{
		{"GET", http.StatusOK},
		{"POST", http.StatusMethodNotAllowed},
	} {
		req, err := http.NewRequest(tt.method, s.base+schemas.Path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tt.want {
			t.Fatalf("%s %s: got %d, want %d", tt.method, schemas.Path, resp.StatusCode, tt.want)
		}
		if tt.want != http.StatusOK {
			continue
		}
		if got, want := resp.Header.Get("Content-Type"), "application/schema+json"; got != want {
			t.Errorf("content type: got %q, want %q", got, want)
		}
		if !bytes.Equal(body, schemas.Cardflow) {
			t.Errorf("body: got %d bytes, want the %d bytes of schemas/cardflow.schema.json", len(body), len(schemas.Cardflow))
		}
	}
}

// TestSchemaCommand: cardflow schema prints the file the API serves.
func TestSchemaCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"schema"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout.Bytes(), schemas.Cardflow) {
		t.Errorf("got %d bytes, want the %d bytes of schemas/cardflow.schema.json", stdout.Len(), len(schemas.Cardflow))
	}
}
