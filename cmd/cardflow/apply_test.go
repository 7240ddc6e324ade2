package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const applyCard = `kind: Card
name: Expense card
card_payload:
  type: AdaptiveCard
  version: "1.5"
  body:
    - {type: TextBlock, text: "Approve ${amount}?"}
`

const applyWorkflow = `kind: Workflow
name: Expense approval
workflow_steps:
  - {id: start, name: Start, type: trigger, config: {kind: REQUEST}}
  - id: ask
    name: Ask
    type: approval
    config: {card: Expense card, approvers: [ann@example.com], policy: first}
  - {id: done, name: Done, type: end, config: {status: SUCCEEDED}}
workflow_connections:
  - {from: start, to: ask}
  - {from: ask, to: done}
`

// TestApply runs cardflow apply against a real cardflow serve: create,
// unchanged, dry run, new version, publish, invalid documents, duplicate
// names, and card: NAME resolved to the version apply wrote.
func TestApply(t *testing.T) {
	bin := binary(t)
	dataDir := t.TempDir()
	srv := startServer(t, bin, dataDir, freePort(t))
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	files := filepath.Join(dir, "files")
	if err := os.Mkdir(files, 0o755); err != nil {
		t.Fatal(err)
	}
	write("files/expense.yaml", applyCard+"---\n"+applyWorkflow)
	run := func(args ...string) (string, error) {
		t.Helper()
		return cli(t, bin, dataDir, append(args, "--url", srv.base)...)
	}
	id := regexp.MustCompile(`\(([0-9A-Z]{26}) version (\d+)\)`)
	ids := func(out string) []string {
		var got []string
		for _, m := range id.FindAllStringSubmatch(out, -1) {
			got = append(got, m[1]+" "+m[2])
		}
		return got
	}

	out, err := run("apply", "-f", files)
	if err != nil {
		t.Fatal(err)
	}
	first := ids(out)
	if len(first) != 2 || !strings.Contains(out, `Card "Expense card": created`) || !strings.Contains(out, `Workflow "Expense approval": created`) {
		t.Fatalf("first apply: got %q, want both created with ids", out)
	}
	cardID, workflowID := strings.Fields(first[0])[0], strings.Fields(first[1])[0]

	for _, tt := range []struct {
		name, want string
		args       []string
	}{
		{"unchanged", "unchanged", []string{"apply", "-f", files}},
		{"dry run of the same", "unchanged", []string{"apply", "-f", files, "--dry-run"}},
	} {
		out, err := run(tt.args...)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := strings.Count(out, tt.want); got != 2 {
			t.Errorf("%s: got %q, want both documents %s", tt.name, out, tt.want)
		}
	}

	// A changed card: the dry run shows the diff and writes nothing.
	write("files/expense.yaml", strings.Replace(applyCard, "Approve ${amount}?", "Approve ${amount} now?", 1)+"---\n"+applyWorkflow)
	out, err = run("apply", "-f", files, "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"would save a new version (" + cardID + " version 2)", `"text": string("Approve ${amount} now?")`, "would save a new version (" + workflowID + " version 2)"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run: got %q, want %q", out, want)
		}
	}
	out, err = run("workflows", "list")
	if err != nil || !regexp.MustCompile(workflowID+`\s+Expense approval\s+1\s`).MatchString(out) {
		t.Errorf("after the dry run: got %q, %v; want the workflow still at version 1", out, err)
	}

	// The change saves new versions, published, and the workflow sends
	// the card's new version.
	out, err = run("apply", "-f", files, "--publish")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Count(out, "new version, published"), 2; got != want {
		t.Errorf("apply --publish: got %q, want %d new published versions", out, want)
	}
	out, err = run("workflows", "show", workflowID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# version 2, ACTIVE", "card_id: " + cardID, "card_version: 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("workflows show: got %q, want %q", out, want)
		}
	}

	// An invalid document anywhere: exit 1, each error with file, line and
	// pointer, and nothing written for the valid ones.
	bad := write("bad.yaml", "kind: Workflow\nname: Bad\nworkflow_steps:\n  - id: start\n    type: trigger\n    config: {kind: REQUEST, bogus: 1}\nworkflow_connections: []\n")
	write("files/expense.yaml", strings.Replace(applyCard, "Approve", "Please approve", 1)+"---\n"+applyWorkflow)
	out, err = run("apply", "-f", files, "-f", bad)
	if err == nil {
		t.Fatalf("invalid document: got success %q, want exit status 1", out)
	}
	for _, want := range []string{bad + ":4: /workflow_steps/0: missing property 'name'", bad + ":6: /workflow_steps/0/config: additional properties 'bogus' not allowed", "nothing was written"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("invalid document: got %v, want %q", err, want)
		}
	}
	out, err = run("cards", "list")
	if err != nil || !regexp.MustCompile(cardID+`\s+Expense card\s+2\s`).MatchString(out) {
		t.Errorf("after the invalid apply: got %q, %v; want the card still at version 2", out, err)
	}

	// What only the service checks (here a step no path reaches) is
	// checked before anything is written, too.
	lost := write("lost.yaml", strings.Replace(strings.Replace(applyWorkflow, "Expense approval", "Lost approval", 1), "  - {id: done,", "  - {id: lost, name: Lost, type: end, config: {status: SUCCEEDED}}\n  - {id: done,", 1))
	if _, err := run("apply", "-f", files, "-f", lost); err == nil || !strings.Contains(err.Error(), lost+":9: /workflow_steps/2: workflow_steps[2] (id \"lost\"): not reachable") {
		t.Errorf("unreachable step: got %v, want the file, line and pointer of the step", err)
	}
	out, err = run("cards", "list")
	if err != nil || !regexp.MustCompile(cardID+`\s+Expense card\s+2\s`).MatchString(out) {
		t.Errorf("after the refused apply: got %q, %v; want the card still at version 2", out, err)
	}

	// A card: NAME that names no card is an error of the document.
	unknown := write("unknown.yaml", strings.Replace(applyWorkflow, "card: Expense card", "card: No such card", 1))
	if _, err := run("apply", "-f", unknown); err == nil || !strings.Contains(err.Error(), unknown+":8: /workflow_steps/1/config/card: no card named \"No such card\"") {
		t.Errorf("unknown card: got %v, want the pointer of the card name", err)
	}

	// JSON files apply as YAML ones; --publish publishes an unchanged
	// DRAFT version.
	jsonFile := write("card.json", `{"kind": "Card", "name": "Json card", "card_payload": {"type": "AdaptiveCard", "version": "1.5"}}`)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"apply", "-f", jsonFile}, `Card "Json card": created`},
		{[]string{"apply", "-f", jsonFile, "--publish"}, `Card "Json card": unchanged, published`},
		{[]string{"apply", "-f", jsonFile, "--publish"}, `Card "Json card": unchanged (`},
	} {
		if out, err := run(tt.args...); err != nil || !strings.Contains(out, tt.want) {
			t.Errorf("%s: got %q, %v; want %q", strings.Join(tt.args, " "), out, err, tt.want)
		}
	}

	// An id the organization does not have is looked up by name.
	twin := write("twin.yaml", strings.Replace(applyCard, "Expense card", "Twin", 1))
	withID := write("twin-id.yaml", strings.Replace(applyCard, "Expense card", "Twin", 1)+"id: 01AAAAAAAAAAAAAAAAAAAAAAAA\n")
	for _, f := range []string{twin, withID} {
		if _, err := run("apply", "-f", f); err != nil {
			t.Fatal(err)
		}
	}
	out, _ = run("cards", "list")
	if got := strings.Count(out, "Twin"); got != 1 {
		t.Errorf("cards named Twin: got %d, want 1", got)
	}

	// Two records of a name: apply refuses and says so.
	key, err := os.ReadFile(filepath.Join(dataDir, "demo-key"))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", srv.base+"/v1/adaptive-cards/saveCard", strings.NewReader(`{"card_name":"Twin","card_payload":{"type":"AdaptiveCard","version":"1.5"}}`))
	req.Header.Set("x-api-key", strings.TrimSpace(string(key)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := run("apply", "-f", twin); err == nil || !strings.Contains(err.Error(), twin+":2: /name: the organization has 2 cards named \"Twin\"") {
		t.Errorf("two cards of the name: got %v, want apply to refuse", err)
	}
}

// TestExportApplyRoundTrip: export one organization, apply into another,
// and export that: the same documents but for the ids.
func TestExportApplyRoundTrip(t *testing.T) {
	bin := binary(t)
	dataDir := t.TempDir()
	srv := startServer(t, bin, dataDir, freePort(t))
	files := filepath.Join(t.TempDir(), "expense.yaml")
	if err := os.WriteFile(files, []byte(applyCard+"---\n"+applyWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	keyOf := func(org string) string {
		t.Helper()
		out, err := cli(t, bin, dataDir, "keys", "create", "--org", org, "--workspace", "ws", "--scopes", "read,execute,admin")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	sourceKey, otherKey := keyOf("source-org"), keyOf("other-org")
	if _, err := cli(t, bin, dataDir, "apply", "-f", files, "--url", srv.base, "--key", sourceKey); err != nil {
		t.Fatal(err)
	}
	a, b := t.TempDir(), t.TempDir()
	if _, err := cli(t, bin, dataDir, "export", "--dir", a, "--url", srv.base, "--key", sourceKey); err != nil {
		t.Fatal(err)
	}
	out, err := cli(t, bin, dataDir, "apply", "-f", a, "--url", srv.base, "--key", otherKey)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "unchanged") || strings.Contains(out, "new version") {
		t.Errorf("apply into another organization: got %q, want every document created", out)
	}
	if _, err := cli(t, bin, dataDir, "export", "--dir", b, "--url", srv.base, "--key", otherKey); err != nil {
		t.Fatal(err)
	}
	read := func(dir string) map[string]string {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		docs := map[string]string{}
		for _, e := range entries {
			text, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			docs[e.Name()] = regexp.MustCompile(`(?m)^id: .*$`).ReplaceAllString(string(text), "id: ID")
		}
		return docs
	}
	got, want := read(b), read(a)
	if len(got) != len(want) {
		t.Fatalf("export of the other organization: got %d files, want %d", len(got), len(want))
	}
	for name, text := range want {
		if got[name] != text {
			t.Errorf("%s: got\n%s\nwant\n%s", name, got[name], text)
		}
	}
	if !strings.Contains(want["workflow-expense-approval.yaml"], "card: Expense card") {
		t.Errorf("export: got %q, want the step to name its card", want["workflow-expense-approval.yaml"])
	}
	// The demo organization's export, with its drafts and steps that send
	// older card versions, applies to itself as unchanged.
	demo := t.TempDir()
	if _, err := cli(t, bin, dataDir, "export", "--dir", demo, "--url", srv.base); err != nil {
		t.Fatal(err)
	}
	out, err = cli(t, bin, dataDir, "apply", "-f", demo, "--url", srv.base)
	if err != nil || strings.Contains(out, "created") || strings.Contains(out, "new version") {
		t.Errorf("the demo export applied to itself: got %q, %v; want every document unchanged", out, err)
	}
	// Applying the export again changes nothing.
	out, err = cli(t, bin, dataDir, "apply", "-f", a, "--url", srv.base, "--key", otherKey)
	if err != nil || strings.Count(out, "unchanged") != len(want) {
		t.Errorf("second apply: got %q, %v; want every document unchanged", out, err)
	}
}
