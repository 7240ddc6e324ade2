package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/schemas"
)

// kindSpec names the API fields of one kind of apply document.
type kindSpec struct {
	kind, idField, nameField, versionField string
	list, get, save, publish               string
	fields                                 []string // the body fields a document carries
}

var (
	cardKind = kindSpec{
		kind: "Card", idField: "card_id", nameField: "card_name", versionField: "card_version",
		list: "/v1/adaptive-cards/getOrganizationCards", get: "/v1/adaptive-cards/getCardById",
		save: "/v1/adaptive-cards/saveCard", publish: "/v1/adaptive-cards/publishCard",
		fields: []string{"card_payload"},
	}
	workflowKind = kindSpec{
		kind: "Workflow", idField: "workflow_id", nameField: "workflow_name", versionField: "workflow_version",
		list: "/v1/workflows/getOrganizationWorkflows", get: "/v1/workflows/getWorkflowById",
		save: "/v1/workflows/saveWorkflow", publish: "/v1/workflows/publishWorkflow",
		fields: []string{"workflow_steps", "workflow_connections", "workflow_integrations", "workflow_schema"},
	}
)

// document is one YAML or JSON document of an apply file.
type document struct {
	file  string
	node  *yaml.Node // the document's value, for line numbers
	value map[string]any
	spec  kindSpec
	name  string
	id    string
}

// where names a place of the document for a person: file, line and JSON
// pointer.
func (d *document) where(pointer string) string {
	return fmt.Sprintf("%s:%d: %s", d.file, lineOf(d.node, pointer), displayPointer(pointer))
}

func displayPointer(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// lineOf returns the line of the deepest node that the JSON pointer
// reaches in n.
func lineOf(n *yaml.Node, pointer string) int {
	line := n.Line
	if pointer == "" {
		return line
	}
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == tok {
					next = n.Content[i+1]
					line = n.Content[i].Line
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

// readDocuments reads every document of the files and directories.
func readDocuments(paths []string) ([]*document, []string, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch strings.ToLower(filepath.Ext(path)) {
			case ".yaml", ".yml", ".json":
				if !d.IsDir() {
					files = append(files, path)
				}
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	var docs []*document
	var problems []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var root yaml.Node
			err := dec.Decode(&root)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", f, err))
				break
			}
			if len(root.Content) == 0 || root.Content[0].Tag == "!!null" {
				continue
			}
			n := root.Content[0]
			var v any
			if err := n.Decode(&v); err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: %v", f, n.Line, err))
				continue
			}
			m, ok := v.(map[string]any)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s:%d: /: a document is a mapping with kind: Card or kind: Workflow", f, n.Line))
				continue
			}
			docs = append(docs, &document{file: f, node: n, value: m})
		}
	}
	return docs, problems, nil
}

// kindSchemas compiles the schema of each kind of document, once, so that
// a document's errors are those of its kind, not of every kind.
var kindSchemas = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas.Cardflow))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("cardflow.schema.json", doc); err != nil {
		return nil, err
	}
	out := map[string]*jsonschema.Schema{}
	for _, kind := range []string{cardKind.kind, workflowKind.kind} {
		if out[kind], err = c.Compile("cardflow.schema.json#/$defs/" + kind); err != nil {
			return nil, err
		}
	}
	return out, nil
})

// check validates a document against the schema of its kind and returns
// one line per error.
func (d *document) check() []string {
	kind, _ := d.value["kind"].(string)
	switch kind {
	case "Card":
		d.spec = cardKind
	case "Workflow":
		d.spec = workflowKind
	default:
		return []string{d.where("/kind") + ": kind must be Card or Workflow"}
	}
	d.name, _ = d.value["name"].(string)
	d.id, _ = d.value["id"].(string)
	all, err := kindSchemas()
	if err != nil {
		return []string{err.Error()}
	}
	s := all[kind]
	b, err := json.Marshal(d.value)
	if err != nil {
		return []string{d.where("") + ": " + err.Error()}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return []string{d.where("") + ": " + err.Error()}
	}
	var ve *jsonschema.ValidationError
	if err := s.Validate(v); errors.As(err, &ve) {
		var out []string
		p := message.NewPrinter(language.English)
		var leaves func(e *jsonschema.ValidationError)
		leaves = func(e *jsonschema.ValidationError) {
			if len(e.Causes) == 0 {
				ptr := ""
				for _, t := range e.InstanceLocation {
					ptr += "/" + strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
				}
				out = append(out, d.where(ptr)+": "+e.ErrorKind.LocalizedString(p))
			}
			for _, c := range e.Causes {
				leaves(c)
			}
		}
		leaves(ve)
		return slices.Compact(out)
	} else if err != nil {
		return []string{d.where("") + ": " + err.Error()}
	}
	return nil
}

// record is a card or workflow of the organization: its id, name and
// highest version.
type record struct {
	id, name, status string
	version          int
}

// listRecords reads every version of every card or workflow of the
// organization and returns each record at its highest version.
func listRecords(ctx context.Context, api *apiClient, spec kindSpec) (map[string]*record, error) {
	out := map[string]*record{}
	q := url.Values{"limit": {"30"}}
	for {
		var page struct {
			Items   []map[string]any `json:"items"`
			LastKey map[string]any   `json:"lastKey"`
		}
		if err := api.call(ctx, "GET", spec.list+"?"+q.Encode(), nil, nil, &page); err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			id, _ := it[spec.idField].(string)
			name, _ := it[spec.nameField].(string)
			v := itemVersion(it, spec)
			status, _ := it[statusField(spec)].(string)
			if r, ok := out[id]; !ok || v > r.version {
				out[id] = &record{id: id, name: name, status: status, version: v}
			}
		}
		if len(page.LastKey) == 0 || len(page.Items) == 0 {
			return out, nil
		}
		q = url.Values{"limit": {"30"}}
		for k, v := range page.LastKey {
			q.Set(k, fmt.Sprint(v))
		}
	}
}

// itemVersion reads a list item's version: card items carry it, workflow
// items only in workflow_status_version (STATUS_N).
func itemVersion(it map[string]any, spec kindSpec) int {
	if f, ok := it[spec.versionField].(float64); ok {
		return int(f)
	}
	sv, _ := it["workflow_status_version"].(string)
	n, _ := strconv.Atoi(sv[strings.LastIndex(sv, "_")+1:])
	return n
}

// getVersion reads one version of a record.
func getVersion(ctx context.Context, api *apiClient, spec kindSpec, id string, version int) (map[string]any, error) {
	var out struct {
		Item map[string]any `json:"item"`
	}
	q := url.Values{spec.idField: {id}, spec.versionField: {strconv.Itoa(version)}}
	if err := api.call(ctx, "GET", spec.get+"?"+q.Encode(), nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Item, nil
}

// byName returns the records of each name.
func byName(records map[string]*record) map[string][]*record {
	out := map[string][]*record{}
	for _, r := range records {
		out[r.name] = append(out[r.name], r)
	}
	return out
}

// comparable returns the body fields of a document or a stored version as
// the service stores them, so that equal definitions compare equal.
func comparable(spec kindSpec, v map[string]any) (map[string]any, error) {
	fields := map[string]any{}
	for _, f := range spec.fields {
		if x, ok := v[f]; ok && x != nil {
			fields[f] = x
		}
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if spec.kind == "Workflow" {
		var w struct {
			Integrations map[string]any        `json:"workflow_integrations"`
			Steps        []cardflow.Step       `json:"workflow_steps"`
			Connections  []cardflow.Connection `json:"workflow_connections"`
			Schema       map[string]any        `json:"workflow_schema"`
		}
		if err := json.Unmarshal(b, &w); err != nil {
			return nil, err
		}
		if w.Integrations == nil {
			w.Integrations = map[string]any{}
		}
		if w.Schema == nil {
			w.Schema = map[string]any{}
		}
		if w.Connections == nil {
			w.Connections = []cardflow.Connection{}
		}
		if w.Steps == nil {
			w.Steps = []cardflow.Step{}
		}
		for i := range w.Steps {
			if w.Steps[i].Config == nil {
				w.Steps[i].Config = map[string]any{}
			}
		}
		if b, err = json.Marshal(w); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// plan is what apply does with one document.
type plan struct {
	doc     *document
	target  *record        // the record it changes; nil creates one
	current map[string]any // the target's highest version, comparable
}

func applyCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("apply", "", `Saves the cards and workflows of YAML or JSON files on a running service.
-f names a file or a directory (of .yaml, .yml and .json files) and may be
given several times; a file may hold several documents separated by ---.
A document is kind: Card or kind: Workflow, its name, an optional id, and
the fields of saveCard or saveWorkflow (`+"`cardflow schema`"+` prints the schema).
In a card or approval step, card: NAME stands for card_id and card_version
of the card of that name, at the version apply leaves it.

A document finds its record by id, else by name; a document equal to the
record's highest version writes nothing, a changed one saves a new version
(DRAFT, or ACTIVE with --publish). Every document is checked first, against
the schema and then by the service (saveCard and saveWorkflow with dry_run);
when any is invalid nothing is written, and each error is printed with its
file, line and JSON pointer.
`, stdout)
	client := clientFlags(c)
	var files stringList
	c.Var(&files, "f", "a file or directory to apply (repeatable)")
	publish := c.Bool("publish", false, "publish what apply saves (and unchanged DRAFT versions)")
	dryRun := c.Bool("dry-run", false, "print what would change, with a diff per document, and write nothing")
	if _, err := c.parse(args, 0); err != nil {
		return err
	}
	if len(files) == 0 {
		return misuse("apply", "apply needs -f PATH")
	}
	api, err := client()
	if err != nil {
		return err
	}
	docs, problems, err := readDocuments(files)
	if err != nil {
		return err
	}
	for _, d := range docs {
		problems = append(problems, d.check()...)
	}
	if len(problems) > 0 {
		return invalid(stderr, problems)
	}
	plans, problems, err := planApply(ctx, api, docs)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return invalid(stderr, problems)
	}
	if problems, err = serverCheck(ctx, api, plans); err != nil {
		return err
	}
	if len(problems) > 0 {
		return invalid(stderr, problems)
	}
	if *dryRun {
		return printPlans(ctx, api, plans, stdout)
	}
	return execute(ctx, api, plans, *publish, stdout)
}

// invalid prints the problems and returns the error that ends apply.
func invalid(stderr io.Writer, problems []string) error {
	for _, p := range problems {
		fmt.Fprintln(stderr, p)
	}
	return fmt.Errorf("%d error(s); nothing was written", len(problems))
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// planApply finds each document's record and compares them, cards first.
func planApply(ctx context.Context, api *apiClient, docs []*document) ([]*plan, []string, error) {
	sort.SliceStable(docs, func(i, j int) bool { return docs[i].spec.kind == "Card" && docs[j].spec.kind != "Card" })
	records := map[string]map[string]*record{}
	for _, spec := range []kindSpec{cardKind, workflowKind} {
		r, err := listRecords(ctx, api, spec)
		if err != nil {
			return nil, nil, err
		}
		records[spec.kind] = r
	}
	var problems []string
	var plans []*plan
	seen := map[string]*document{}
	for _, d := range docs {
		recs := records[d.spec.kind]
		p := &plan{doc: d}
		if r, ok := recs[d.id]; ok && d.id != "" {
			p.target = r
		} else {
			switch named := byName(recs)[d.name]; len(named) {
			case 0:
			case 1:
				p.target = named[0]
			default:
				ids := make([]string, len(named))
				for i, r := range named {
					ids[i] = r.id
				}
				sort.Strings(ids)
				problems = append(problems, fmt.Sprintf("%s: the organization has %d %ss named %q (%s): give the document the id of one", d.where("/name"), len(named), strings.ToLower(d.spec.kind), d.name, strings.Join(ids, ", ")))
				continue
			}
		}
		key := d.spec.kind + "\x00name\x00" + d.name
		if p.target != nil {
			key = d.spec.kind + "\x00id\x00" + p.target.id
		}
		if prev, ok := seen[key]; ok {
			problems = append(problems, fmt.Sprintf("%s: the %s %q is also in %s:%d", d.where("/name"), strings.ToLower(d.spec.kind), d.name, prev.file, prev.node.Line))
			continue
		}
		seen[key] = d
		if p.target != nil {
			cur, err := getVersion(ctx, api, d.spec, p.target.id, p.target.version)
			if err != nil {
				return nil, nil, err
			}
			if p.current, err = comparable(d.spec, cur); err != nil {
				return nil, nil, err
			}
		}
		plans = append(plans, p)
	}
	// A card: name is a card of these files, else one of the organization.
	fileCards := map[string]bool{}
	for _, p := range plans {
		if p.doc.spec.kind == "Card" {
			fileCards[p.doc.name] = true
		}
	}
	cardNames := byName(records["Card"])
	for _, p := range plans {
		if p.doc.spec.kind != "Workflow" {
			continue
		}
		steps, _ := p.doc.value["workflow_steps"].([]any)
		for i, s := range steps {
			cfg, _ := s.(map[string]any)["config"].(map[string]any)
			name, ok := cfg["card"].(string)
			if !ok || fileCards[name] {
				continue
			}
			switch n := len(cardNames[name]); {
			case n == 0:
				problems = append(problems, fmt.Sprintf("%s: no card named %q in these files or the organization", p.doc.where(fmt.Sprintf("/workflow_steps/%d/config/card", i)), name))
			case n > 1:
				problems = append(problems, fmt.Sprintf("%s: the organization has %d cards named %q: use card_id and card_version", p.doc.where(fmt.Sprintf("/workflow_steps/%d/config/card", i)), n, name))
			}
		}
	}
	return plans, problems, nil
}

// serverCheck sends each document to the service with dry_run, which
// checks what only the service knows (the graph, expressions, records it
// names) and stores nothing. A card: NAME of a card these files would
// create has no id yet: its workflow is checked when it is saved.
func serverCheck(ctx context.Context, api *apiClient, plans []*plan) ([]string, error) {
	orgCards, err := listRecords(ctx, api, cardKind)
	if err != nil {
		return nil, err
	}
	existing := map[string]*record{}
	created := map[string]bool{}
	for _, p := range plans {
		if p.doc.spec.kind != "Card" {
			continue
		}
		if p.target != nil {
			existing[p.doc.name] = p.target
		} else {
			created[p.doc.name] = true
		}
	}
	var problems []string
	for _, p := range plans {
		d := p.doc
		value := d.value
		if d.spec.kind == "Workflow" {
			if namesAny(value, created) {
				continue
			}
			value = resolveCards(value, existing, byName(orgCards))
		}
		body, err := comparable(d.spec, value)
		if err != nil {
			return nil, err
		}
		body[d.spec.nameField] = d.name
		if p.target != nil {
			body[d.spec.idField] = p.target.id
		}
		body["dry_run"] = true
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		var out map[string]any
		if err := api.call(ctx, "POST", d.spec.save, b, nil, &out); err != nil {
			problems = append(problems, d.where(serverPointer(err.Error()))+": "+err.Error())
		}
	}
	return problems, nil
}

// namesAny reports whether a workflow document's steps name one of the
// cards by card: NAME.
func namesAny(value map[string]any, cards map[string]bool) bool {
	steps, _ := value["workflow_steps"].([]any)
	for _, s := range steps {
		cfg, _ := s.(map[string]any)["config"].(map[string]any)
		if name, ok := cfg["card"].(string); ok && cards[name] {
			return true
		}
	}
	return false
}

// serverPlace finds the step or connection a service message names, as in
// "workflow_steps[2] (id "ask"): ...".
var serverPlace = regexp.MustCompile(`\b(workflow_steps|workflow_connections)\[(\d+)\]`)

// serverPointer returns the JSON pointer of the place a service message
// names, or the document's root.
func serverPointer(msg string) string {
	if m := serverPlace.FindStringSubmatch(msg); m != nil {
		return "/" + m[1] + "/" + m[2]
	}
	return ""
}

// resolveCards replaces each card: NAME of a workflow document with the
// card's id and version: a card of these files at the version apply left
// it, else the organization's card at its highest version.
func resolveCards(value map[string]any, applied map[string]*record, org map[string][]*record) map[string]any {
	out := map[string]any{}
	for k, v := range value {
		out[k] = v
	}
	steps, _ := value["workflow_steps"].([]any)
	resolved := make([]any, len(steps))
	for i, s := range steps {
		step, _ := s.(map[string]any)
		cfg, _ := step["config"].(map[string]any)
		name, ok := cfg["card"].(string)
		if !ok {
			resolved[i] = s
			continue
		}
		r := applied[name]
		if r == nil && len(org[name]) == 1 {
			r = org[name][0]
		}
		ns := map[string]any{}
		for k, v := range step {
			ns[k] = v
		}
		nc := map[string]any{}
		for k, v := range cfg {
			if k != "card" {
				nc[k] = v
			}
		}
		if r != nil {
			nc["card_id"], nc["card_version"] = r.id, r.version
		}
		ns["config"] = nc
		resolved[i] = ns
	}
	if steps != nil {
		out["workflow_steps"] = resolved
	}
	return out
}

// execute saves the changed documents, cards first, and prints one line
// per document.
func execute(ctx context.Context, api *apiClient, plans []*plan, publish bool, stdout io.Writer) error {
	applied := map[string]*record{}
	orgCards, err := listRecords(ctx, api, cardKind)
	if err != nil {
		return err
	}
	for _, p := range plans {
		d := p.doc
		value := d.value
		if d.spec.kind == "Workflow" {
			value = resolveCards(value, applied, byName(orgCards))
		}
		body, err := comparable(d.spec, value)
		if err != nil {
			return err
		}
		id, version, status := "", 0, ""
		switch {
		case p.target != nil && reflect.DeepEqual(body, p.current):
			id, version, status = p.target.id, p.target.version, "unchanged"
			if publish && p.target.status != "ACTIVE" {
				if err := publishVersion(ctx, api, d.spec, id, version); err != nil {
					return fmt.Errorf("%s: %w", d.where(""), err)
				}
				status = "unchanged, published"
			}
		default:
			body[d.spec.nameField] = d.name
			if p.target != nil {
				body[d.spec.idField] = p.target.id
			}
			b, err := json.Marshal(body)
			if err != nil {
				return err
			}
			var out struct {
				Item map[string]any `json:"item"`
			}
			if err := api.call(ctx, "POST", d.spec.save, b, nil, &out); err != nil {
				return fmt.Errorf("%s: %w", d.where(""), err)
			}
			id, _ = out.Item[d.spec.idField].(string)
			v, _ := out.Item[d.spec.versionField].(float64)
			version = int(v)
			status = "created"
			if p.target != nil {
				status = "new version"
			}
			if publish {
				if err := publishVersion(ctx, api, d.spec, id, version); err != nil {
					return fmt.Errorf("%s: %w", d.where(""), err)
				}
				status += ", published"
			}
		}
		if d.spec.kind == "Card" {
			applied[d.name] = &record{id: id, name: d.name, version: version}
		}
		fmt.Fprintf(stdout, "%s %q: %s (%s version %d)\n", d.spec.kind, d.name, status, id, version)
	}
	return nil
}

func statusField(spec kindSpec) string {
	if spec.kind == "Card" {
		return "status"
	}
	return "workflow_status"
}

func publishVersion(ctx context.Context, api *apiClient, spec kindSpec, id string, version int) error {
	b, err := json.Marshal(map[string]any{spec.idField: id, spec.versionField: version})
	if err != nil {
		return err
	}
	var out map[string]any
	return api.call(ctx, "POST", spec.publish, b, nil, &out)
}

// printPlans prints what apply would do, with a diff of each changed
// document against its record's highest version. A card this apply would
// save shows, in the workflows that name it, as the version it would get.
func printPlans(ctx context.Context, api *apiClient, plans []*plan, stdout io.Writer) error {
	orgCards, err := listRecords(ctx, api, cardKind)
	if err != nil {
		return err
	}
	applied := map[string]*record{}
	for _, p := range plans {
		d := p.doc
		value := d.value
		if d.spec.kind == "Workflow" {
			value = resolveCards(value, applied, byName(orgCards))
		}
		body, err := comparable(d.spec, value)
		if err != nil {
			return err
		}
		id, version := "(new)", 1
		var line string
		switch {
		case p.target != nil && reflect.DeepEqual(body, p.current):
			id, version = p.target.id, p.target.version
			line = "unchanged"
		case p.target != nil:
			id, version = p.target.id, p.target.version+1
			line = "would save a new version"
		default:
			line = "would create"
		}
		if d.spec.kind == "Card" {
			applied[d.name] = &record{id: id, name: d.name, version: version}
		}
		fmt.Fprintf(stdout, "%s %q: %s (%s version %d)\n", d.spec.kind, d.name, line, id, version)
		if p.target == nil || !reflect.DeepEqual(body, p.current) {
			fmt.Fprint(stdout, indent(cmp.Diff(p.current, body)))
		}
	}
	return nil
}

// indent sets the diff off from the lines that name the documents.
func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString("    " + l)
		}
	}
	return b.String()
}
