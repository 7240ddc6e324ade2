package cards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
)

// npmCommand installs Microsoft's parser for TestAgreesWithMicrosoftParser.
const npmCommand = "npm ci --prefix tools/adaptivecards"

// TestAgreesWithMicrosoftParser runs Microsoft's parser, the adaptivecards
// npm package, through tools/adaptivecards/check.js on every card of
// testdata/corpus, and fails on any card that Validate and the parser judge
// differently. It also checks that the parser accepts every card of
// goOnlyTests, whose problems only Validate sees, and that Validate rejects
// every mutant of the corpus (see mutants) that the parser rejects.
//
// check.js plays a host of Adaptive Cards 1.5 and says which of the parser's
// events reject a card. The classes of error the parser detects then are:
//
//   - a card type other than "AdaptiveCard", a version that is not a version
//     string or is newer than 1.5 (a card without either passes);
//   - an element or action type it does not know, or that is misplaced (a
//     TextBlock among TableRow cells), unless a fallback of the object or of
//     an enclosing one in the same card replaces it; in selectAction,
//     inlineAction, inlines and refresh it never falls back;
//   - Action.ShowCard in selectAction or inlineAction, and any action but
//     Action.Execute in refresh;
//   - a string outside its enumeration (case aside), and anything but a
//     string for height and the style, mode and similar value sets;
//   - malformed sizes: minHeight, Image width and height, column widths;
//   - a malformed version in requires, a userId that is not a string;
//   - properties that Adaptive Cards 1.6 added;
//   - an input without id, Input.ChoiceSet without choices or with a choice
//     lacking title or value, Action.OpenUrl without url, Action.ShowCard
//     without card or with a card of another type;
//   - an id used twice among the objects it renders.
//
// Validate detects each of these, and more: goOnlyTests. So the relation
// tested is: on the corpus, Validate accepts a card exactly when the parser
// does; on goOnlyTests, the parser accepts and Validate rejects; on the
// mutants, the parser rejects only what Validate rejects. That last holds
// in general but for properties outside the specification that the parser
// reads (ActionSet.orientation, a fallback on the card itself) and for lang,
// whose pattern in the parser keeps state between calls and so fails every
// other time: neither corpus nor mutants have lang.
func TestAgreesWithMicrosoftParser(t *testing.T) {
	t.Parallel()
	testenv.Short(t, microsoft)
	root := repoRoot(t)
	dir := filepath.Join(root, "tools", "adaptivecards")
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "adaptivecards")); err != nil {
		unavailable(t, "tools/adaptivecards/node_modules is missing")
	}

	type input struct {
		Name string          `json:"name"`
		Card json.RawMessage `json:"card"`
	}
	var inputs []input
	corpus := readCorpus(t)
	for _, c := range corpus {
		inputs = append(inputs, input{c.name, c.data})
	}
	for _, tt := range goOnlyTests {
		inputs = append(inputs, input{"go-only: " + tt.name, json.RawMessage(tt.card)})
	}
	mutated := mutants(t, corpus, 2000)
	for i, m := range mutated {
		inputs = append(inputs, input{fmt.Sprintf("mutant %d", i), m})
	}
	stdin, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(node, filepath.Join(dir, "check.js"))
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("check.js: %v\n%s", err, stderr.Bytes())
	}
	var results []struct {
		Name     string
		Accepted bool
		Errors   []string
	}
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("check.js output: %v", err)
	}
	if len(results) != len(inputs) {
		t.Fatalf("check.js judged %d cards, want %d", len(results), len(inputs))
	}

	for i, c := range corpus {
		r := results[i]
		err := Validate(decode(t, c.name, c.data))
		if (err == nil) != r.Accepted {
			t.Errorf("%s: Validate says %v; Microsoft's parser says %s", c.name, err, verdict(r.Accepted, r.Errors))
		}
	}
	for i, tt := range goOnlyTests {
		if r := results[len(corpus)+i]; !r.Accepted {
			t.Errorf("go-only %s: Microsoft's parser rejects it (%s): move it to the corpus",
				tt.name, strings.Join(r.Errors, "; "))
		}
	}
	for i, m := range mutated {
		r := results[len(corpus)+len(goOnlyTests)+i]
		if !r.Accepted && Validate(decode(t, r.Name, m)) == nil {
			t.Errorf("%s: Validate accepts it; Microsoft's parser says %s\n%s", r.Name, verdict(r.Accepted, r.Errors), m)
		}
	}
}

// Mutations: a property set to one of mutantValues, or deleted.
var (
	mutantKeys = []string{
		"type", "id", "text", "size", "weight", "color", "style", "height", "width", "minHeight", "spacing",
		"separator", "isVisible", "url", "items", "columns", "rows", "cells", "actions", "selectAction",
		"fallback", "requires", "card", "choices", "title", "value", "facts", "images", "inlines",
		"targetElements", "mode", "verb", "version", "backgroundImage", "horizontalAlignment",
		"verticalContentAlignment", "isRequired", "label", "maxLines", "wrap", "sources", "imageSize",
		"fillMode", "labelPosition", "role", "refresh", "userIds", "action", "elementId", "min", "max",
	}
	mutantValues = []string{
		`null`, `5`, `-1`, `2.5`, `true`, `""`, `"x"`, `"auto"`, `"stretch"`, `"50px"`, `"50"`, `"2*"`,
		`"drop"`, `"Default"`, `"bolder"`, `"1.5"`, `"1.6"`, `"*"`, `"Action.ShowCard"`, `"Column"`,
		`"TableCell"`, `"Foo"`, `[]`, `["a"]`, `[5]`, `{}`, `{"type": "TextBlock", "text": "t"}`,
		`{"type": "Foo"}`, `{"type": "Action.Submit"}`, `{"type": "Image"}`, `{"title": "a", "value": "b"}`,
		`{"type": "Action.ShowCard", "card": {"type": "AdaptiveCard"}}`,
	}
)

// mutants derives n cards from the valid cards of the corpus, each by one
// to four random mutations, always the same ones.
func mutants(t *testing.T, corpus []corpusCard, n int) []json.RawMessage {
	t.Helper()
	var valid []corpusCard
	for _, c := range corpus {
		if strings.HasPrefix(c.name, "valid-") {
			valid = append(valid, c)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]json.RawMessage, n)
	for i := range out {
		c := valid[rng.IntN(len(valid))]
		card := decode(t, c.name, c.data)
		for range 1 + rng.IntN(4) {
			objects := objectsIn(card, nil)
			obj := objects[rng.IntN(len(objects))]
			if keys := slices.Sorted(maps.Keys(obj)); rng.IntN(10) < 3 && len(keys) > 0 {
				delete(obj, keys[rng.IntN(len(keys))])
				continue
			}
			var val any
			if err := json.Unmarshal([]byte(mutantValues[rng.IntN(len(mutantValues))]), &val); err != nil {
				t.Fatal(err)
			}
			obj[mutantKeys[rng.IntN(len(mutantKeys))]] = val
		}
		data, err := json.Marshal(card)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = data
	}
	return out
}

// objectsIn appends to acc the objects in val, in a fixed order.
func objectsIn(val any, acc []map[string]any) []map[string]any {
	switch x := val.(type) {
	case map[string]any:
		acc = append(acc, x)
		for _, k := range slices.Sorted(maps.Keys(x)) {
			acc = objectsIn(x[k], acc)
		}
	case []any:
		for _, item := range x {
			acc = objectsIn(item, acc)
		}
	}
	return acc
}

func verdict(accepted bool, errors []string) string {
	if accepted {
		return "valid"
	}
	return strings.Join(errors, "; ")
}

// microsoft is what the differential tests need.
const microsoft = "Node.js with Microsoft's adaptivecards packages"

// unavailable skips the test (testenv).
func unavailable(t *testing.T, why string) {
	t.Helper()
	testenv.Skip(t, microsoft, fmt.Sprintf("%s; run %q in the repository root", why, npmCommand))
}

// repoRoot returns the directory that holds go.mod, above the test's.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
