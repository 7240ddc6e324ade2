package cards

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// benchCase reads a case of testdata/templating.
func benchCase(b *testing.B, name string) templatingCase {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "templating", name+".json"))
	if err != nil {
		b.Fatal(err)
	}
	var c templatingCase
	if err := json.Unmarshal(data, &c); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkCompile parses the bindings of an approval card.
func BenchmarkCompile(b *testing.B) {
	c := benchCase(b, "approval-facts")
	var tmpl any
	if err := json.Unmarshal(c.Template, &tmpl); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(tmpl); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExpandCard is what a card step does: expand an approval card
// with its data and validate the result.
func BenchmarkExpandCard(b *testing.B) {
	c := benchCase(b, "approval-facts")
	var payload map[string]any
	var data any
	if err := json.Unmarshal(c.Template, &payload); err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(c.Data, &data); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ExpandCard(context.Background(), payload, data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExpandLineItems expands a compiled card that repeats a column
// set for each of 100 line items.
func BenchmarkExpandLineItems(b *testing.B) {
	c := benchCase(b, "line-items-repeated")
	tmpl, err := Compile(c.Template)
	if err != nil {
		b.Fatal(err)
	}
	var data map[string]any
	if err := json.Unmarshal(c.Data, &data); err != nil {
		b.Fatal(err)
	}
	lines := data["lines"].([]any)
	for len(lines) < 100 {
		lines = append(lines, lines[len(lines)%3])
	}
	data["lines"] = lines
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tmpl.Expand(context.Background(), data); err != nil {
			b.Fatal(err)
		}
	}
}
