package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// exportDoc is an apply document in the order a person reads it.
type exportDoc struct {
	Kind                 string             `yaml:"kind"`
	Name                 string             `yaml:"name"`
	ID                   string             `yaml:"id"`
	CardPayload          map[string]any     `yaml:"card_payload,omitempty"`
	WorkflowSteps        []exportStep       `yaml:"workflow_steps,omitempty"`
	WorkflowConnections  []exportConnection `yaml:"workflow_connections,omitempty"`
	WorkflowIntegrations map[string]any     `yaml:"workflow_integrations,omitempty"`
	WorkflowSchema       map[string]any     `yaml:"workflow_schema,omitempty"`
}

type exportStep struct {
	ID     string         `yaml:"id"`
	Name   string         `yaml:"name"`
	Type   string         `yaml:"type"`
	Config map[string]any `yaml:"config,omitempty"`
}

type exportConnection struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
	When string `yaml:"when,omitempty"`
	On   string `yaml:"on,omitempty"`
}

func exportCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("export", "", `Writes the highest version of every card and workflow of the organization
on a running service into DIR, one YAML file each, as `+"`cardflow apply`"+` reads
them: with its id, and card: NAME in the steps that send a card at its
highest version. Applying DIR into another organization reproduces them.
`, stdout)
	client := clientFlags(c)
	dir := c.String("dir", "", "the directory to write (created if missing)")
	if _, err := c.parse(args, 0); err != nil {
		return err
	}
	if *dir == "" {
		return misuse("export", "export needs --dir DIR")
	}
	api, err := client()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	cards, err := listRecords(ctx, api, cardKind)
	if err != nil {
		return err
	}
	workflows, err := listRecords(ctx, api, workflowKind)
	if err != nil {
		return err
	}
	names := byName(cards)
	used := map[string]bool{}
	for _, r := range sorted(cards) {
		v, err := getVersion(ctx, api, cardKind, r.id, r.version)
		if err != nil {
			return err
		}
		if err := writeDoc(*dir, "card", asDocument(v, cardKind, nil, nil), used, stdout); err != nil {
			return err
		}
	}
	for _, r := range sorted(workflows) {
		v, err := getVersion(ctx, api, workflowKind, r.id, r.version)
		if err != nil {
			return err
		}
		if err := writeDoc(*dir, "workflow", asDocument(v, workflowKind, cards, names), used, stdout); err != nil {
			return err
		}
	}
	return nil
}

// asDocument turns a stored version into an apply document; with cards,
// the steps that send one of them at its highest version name it.
func asDocument(v map[string]any, spec kindSpec, cards map[string]*record, names map[string][]*record) exportDoc {
	doc := exportDoc{Kind: spec.kind}
	doc.Name, _ = v[spec.nameField].(string)
	doc.ID, _ = v[spec.idField].(string)
	if spec.kind == "Card" {
		doc.CardPayload, _ = v["card_payload"].(map[string]any)
		return doc
	}
	doc.WorkflowIntegrations, _ = v["workflow_integrations"].(map[string]any)
	doc.WorkflowSchema, _ = v["workflow_schema"].(map[string]any)
	steps, _ := v["workflow_steps"].([]any)
	for _, s := range steps {
		m, _ := s.(map[string]any)
		st := exportStep{}
		st.ID, _ = m["id"].(string)
		st.Name, _ = m["name"].(string)
		st.Type, _ = m["type"].(string)
		st.Config, _ = m["config"].(map[string]any)
		st.Config = cardByName(st.Config, cards, names)
		doc.WorkflowSteps = append(doc.WorkflowSteps, st)
	}
	conns, _ := v["workflow_connections"].([]any)
	for _, c := range conns {
		m, _ := c.(map[string]any)
		var ec exportConnection
		ec.From, _ = m["from"].(string)
		ec.To, _ = m["to"].(string)
		ec.When, _ = m["when"].(string)
		ec.On, _ = m["on"].(string)
		doc.WorkflowConnections = append(doc.WorkflowConnections, ec)
	}
	return doc
}

// printDocument prints a stored version as an apply document.
func printDocument(v map[string]any, spec kindSpec, w io.Writer) error {
	b, err := marshalYAML(asDocument(v, spec, nil, nil))
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// cardByName writes card: NAME for a step that sends a card at its highest
// version, when no other card has that name: so the file applies into an
// organization where the card has another id.
func cardByName(cfg map[string]any, cards map[string]*record, names map[string][]*record) map[string]any {
	id, _ := cfg["card_id"].(string)
	v, _ := cfg["card_version"].(float64)
	r, ok := cards[id]
	if !ok || int(v) != r.version || len(names[r.name]) != 1 {
		return cfg
	}
	out := map[string]any{"card": r.name}
	for k, x := range cfg {
		if k != "card_id" && k != "card_version" {
			out[k] = x
		}
	}
	return out
}

func sorted(records map[string]*record) []*record {
	out := make([]*record, 0, len(records))
	for _, r := range records {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// writeDoc writes one document to DIR/PREFIX-NAME.yaml, with the id in
// the file name when another record has taken that name.
func writeDoc(dir, prefix string, doc exportDoc, used map[string]bool, stdout io.Writer) error {
	slug := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return '-'
	}, doc.Name)
	file := prefix + "-" + strings.Trim(slug, "-") + ".yaml"
	if used[file] {
		file = prefix + "-" + strings.Trim(slug, "-") + "-" + strings.ToLower(doc.ID) + ".yaml"
	}
	used[file] = true
	b, err := marshalYAML(doc)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %q: %s\n", doc.Kind, doc.Name, path)
	return nil
}

// marshalYAML writes YAML indented by two spaces, as people write it.
func marshalYAML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
