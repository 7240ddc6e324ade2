package cards

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
)

// templatingCase is a file of testdata/templating: a template, the data it
// is expanded with and, optionally, host data.
type templatingCase struct {
	Name     string          `json:"name"`
	Template json.RawMessage `json:"template"`
	Data     json.RawMessage `json:"data"`
	Host     json.RawMessage `json:"host,omitempty"`
}

func readTemplatingCases(t *testing.T) []templatingCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "templating", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 60 {
		t.Fatalf("testdata/templating holds %d cases, want at least 60", len(files))
	}
	var cases []templatingCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c templatingCase
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if c.Template == nil {
			t.Fatalf("%s: no template", f)
		}
		c.Name = strings.TrimSuffix(filepath.Base(f), ".json")
		cases = append(cases, c)
	}
	return cases
}

// TestExpandAgreesWithMicrosoftTemplating expands every case of
// testdata/templating, 2,000 generated bindings (generatedCases), 2,000
// generated strings full of binding fragments (generatedTexts) and 1,000
// generated date formats and numbers (generatedFormats), with
// Microsoft's adaptivecards-templating package, through
// tools/adaptivecards/expand.js, and with Expand, and fails where the two
// differ: in the output, compared as JSON values, or in whether the
// expansion fails. node runs in UTC with the en-US locale, the only ones
// Expand knows.
func TestExpandAgreesWithMicrosoftTemplating(t *testing.T) {
	t.Parallel()
	testenv.Short(t, microsoft)
	dir := filepath.Join(repoRoot(t), "tools", "adaptivecards")
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "adaptivecards-templating")); err != nil {
		unavailable(t, "tools/adaptivecards/node_modules/adaptivecards-templating is missing")
	}
	cases := append(readTemplatingCases(t), generatedCases(2000)...)
	cases = append(cases, generatedTexts(2000)...)
	cases = append(cases, generatedFormats(1000)...)
	stdin, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(dir, "expand.js"))
	cmd.Env = append(os.Environ(), "TZ=UTC", "LC_ALL=en_US.UTF-8", "LANG=en_US.UTF-8")
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("expand.js: %v\n%s", err, stderr.Bytes())
	}
	var results []struct {
		Name   string
		OK     bool
		Output any
		Error  string
	}
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("expand.js output: %v", err)
	}
	if len(results) != len(cases) {
		t.Fatalf("expand.js expanded %d cases, want %d", len(results), len(cases))
	}
	failures := 0
	for i, c := range cases {
		want := results[i]
		got, err := expandCase(c)
		switch {
		case err != nil && want.OK:
			t.Errorf("%s: Expand fails: %v\nthe npm package gives %s", c.Name, err, jsonText(want.Output))
		case err == nil && !want.OK:
			t.Errorf("%s: Expand gives %s\nthe npm package fails: %s", c.Name, jsonText(got), want.Error)
		case err == nil && !reflect.DeepEqual(got, want.Output):
			t.Errorf("%s: Expand gives\n%s\nthe npm package gives\n%s", c.Name, jsonText(got), jsonText(want.Output))
		default:
			continue
		}
		failures++
	}
	if failures == 0 {
		for _, r := range results {
			if !r.OK {
				failures--
			}
		}
		t.Logf("%d cases agree, %d of them failing to expand in both", len(cases), -failures)
	}
}

func expandCase(c templatingCase) (any, error) {
	tmpl, err := Compile(c.Template)
	if err != nil {
		return nil, err
	}
	var data any = c.Data
	if c.Data == nil {
		data = nil
	}
	if c.Host != nil {
		return tmpl.ExpandHost(context.Background(), data, c.Host)
	}
	return tmpl.Expand(context.Background(), data)
}

func jsonText(v any) string {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(data)
}
