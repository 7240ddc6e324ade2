package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
)

// shellBlock is a ```sh block of the README.
type shellBlock struct {
	// heading is the heading the block is under, n its number there from 1.
	heading string
	n       int
	text    string
}

func (b shellBlock) name() string { return fmt.Sprintf("%s #%d", b.heading, b.n) }

// readmeShellBlocks returns the README's shell blocks in order.
func readmeShellBlocks(t *testing.T) []shellBlock {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []shellBlock
	var heading string
	var block *strings.Builder
	fence := false
	count := map[string]int{}
	for line := range strings.Lines(string(readme)) {
		switch {
		case strings.HasPrefix(line, "```"):
			if !fence && strings.TrimSpace(line) == "```sh" {
				block = new(strings.Builder)
			}
			if fence && block != nil {
				count[heading]++
				blocks = append(blocks, shellBlock{heading: heading, n: count[heading], text: block.String()})
				block = nil
			}
			fence = !fence
		case fence && block != nil:
			block.WriteString(line)
		case !fence && strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(line)
		}
	}
	return blocks
}

// readmeRun is what a block's check sees: the block's output and the
// server it ran against.
type readmeRun struct {
	t    *testing.T
	base string
	key  string // the demo key
	env  map[string]string
	out  string
}

// answers returns the lines of the output that are JSON objects, the
// answers of the block's curl commands in order.
func (r *readmeRun) answers() []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(r.out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var body map[string]any
		if json.Unmarshal(sc.Bytes(), &body) == nil {
			out = append(out, body)
		}
	}
	return out
}

// successes returns the answers, failing unless there are n, each a
// success.
func (r *readmeRun) successes(n int) []map[string]any {
	r.t.Helper()
	got := r.answers()
	for _, a := range got {
		if a["message"] != "success" {
			r.t.Errorf("an answer is not a success: %v", a)
		}
	}
	if len(got) != n {
		r.t.Fatalf("got %d answers, want %d:\n%s", len(got), n, r.out)
	}
	return got
}

// get reads an endpoint with the demo key.
func (r *readmeRun) get(path string, query ...string) map[string]any {
	r.t.Helper()
	q := url.Values{}
	for i := 0; i+1 < len(query); i += 2 {
		q.Set(query[i], query[i+1])
	}
	status, out := api(r.t, "GET", r.base+path+"?"+q.Encode(), r.key, nil)
	if status != 200 {
		r.t.Fatalf("GET %s %v: got %d %v", path, query, status, out)
	}
	return out
}

// execution polls an execution until it has the status.
func (r *readmeRun) execution(workflowID, id, status string) map[string]any {
	r.t.Helper()
	var item map[string]any
	testenv.WaitFor(r.t, "execution "+id+" to be "+status, func() bool {
		item = r.get("/v1/workflows/getWorkflowExecutionById", "workflow_id", workflowID, "workflow_execution_id", id)["item"].(map[string]any)
		return item["status"] == status
	})
	return item
}

// item returns an answer's item.
func item(answer map[string]any) map[string]any {
	it, _ := answer["item"].(map[string]any)
	return it
}

// readmeBlocks says, for every shell block of the README, how TestReadme
// runs and checks it, or why it does not run it.
var readmeBlocks = map[string]struct {
	skip string
	// inRepo runs the block in the repository's root (for go run), not in
	// the directory that holds .cardflow.
	inRepo bool
	// before makes what the block's text assumes.
	before func(r *readmeRun)
	check  func(r *readmeRun)
}{
	"## Two commands #1":                        {skip: "make run is the server this test starts (cardflow serve on a free port); make test runs this test"},
	"## Try it #1":                              {check: checkTryIt},
	"## Try it #2":                              {check: checkPaging},
	"## Run a workflow #1":                      {check: checkApprovalRun},
	"## Run a workflow #2":                      {check: checkWaitForExecution},
	"## Run a workflow #3":                      {check: checkWithdrawnOrder},
	"### A Teams Workflows webhook #1":          {skip: "needs a Teams Workflows webhook of your own and serves in the foreground on port 3000; TestServeTeams starts cardflow serve with the Teams flags"},
	"### A Teams Workflows webhook #2":          {skip: "needs a response link that a Teams Workflows webhook delivery made; pkg/httpapi's TestTeamsResponseLinks opens one by GET and HEAD and confirms it by POST"},
	"### A bot #1":                              {skip: "needs an Azure Bot of your own and serves in the foreground on port 3000; TestServeTeams starts cardflow serve with the Teams flags"},
	"### A bot #2":                              {check: checkTeamsConversations},
	"### Delegation #1":                         {check: checkDelegations},
	"## SAP #1":                                 {skip: "starts SAP CAP from the repository's tools/sapcap in the background; internal/sapcaptest starts the same server for TestCAPReads, TestCAPPaging, TestCAPChanges, TestCAPErrors and TestERPAgainstCAP"},
	"## SAP #2":                                 {before: waitForSAP, check: checkSAPResume},
	"## Secrets #1":                             {skip: "serves in the foreground on port 3000 and writes ~/.cardflow-secrets; pkg/secrets reads secrets from the environment and from files in its tests"},
	"## API keys #1":                            {inRepo: true, check: checkKeys},
	"### Events #1":                             {inRepo: true, check: checkWebhooks},
	"## DynamoDB #1":                            {skip: "DynamoDB Local and a server, each in the foreground in a terminal of its own; TestLocalModeDynamoDB serves on DynamoDB Local"},
	"## DynamoDB #2":                            {skip: "needs DynamoDB Local on port 8000, then an AWS account; TestTablesCreate creates the tables in DynamoDB Local"},
	"## Step Functions runner #1":               {skip: "runs handlers of your own (advance.sh, park.sh); pkg/sfnrunner runs the definition on aws-local-stepfunctions with the real handlers"},
	"## Benchmarks, load tests and profiles #1": {skip: "takes about five minutes and rewrites BENCHMARKS.md"},
	"## Benchmarks, load tests and profiles #2": {skip: "serves on port 3000 and loads it for 10 s; cmd/cardflow-load's tests run the load generator against a local server"},
	"## Deploy to AWS #1":                       {skip: "needs an AWS account"},
	"## Deploy to AWS #2":                       {skip: "needs an AWS account and a deployed stack"},
	"### Microsoft Teams on AWS #1":             {skip: "needs an AWS account"},
	"### `sam local` with DynamoDB Local #1":    {skip: "needs Docker and SAM CLI; cmd/cardflow-samevents/internal/samlocal feeds every sample event to its function, in process and under the Lambda Runtime Interface Emulator, on DynamoDB Local"},
	"### `sam local` with DynamoDB Local #2":    {skip: "needs sam local start-api in Docker on port 3000; TestTablesCreate and the API keys block create keys"},
	"## Robustness #1":                          {skip: "the longer checks CI runs after make test (.ci/run)"},
	"## Approvals #1":                           {skip: "needs a waiting approval's id; pkg/httpapi TestApprovalThroughTheAPI runs these requests end to end"},
	"## Approvals #2":                           {skip: "needs a waiting approval's id and an admin key; pkg/httpapi TestOverrideApproval runs this request end to end"},
	"### Approval statistics #1":                {check: checkApprovalStats},
	"### Two approvers, step by step #1":        {check: checkTwoApprovers},
	"### Search #1":                             {check: checkSearch},
	"### Workflows as files #1":                 {check: checkFiles},
	"### Bulk operations #1":                    {check: checkBulk},
	"### Redrive #1":                            {before: needPython, check: checkRedrive},
	"### Limits #1":                             {skip: "serves in the foreground on port 3000; pkg/httpapi's TestRateLimitPerOrganization and TestOpenExecutionCap serve with default limits"},
	"### Limits #2":                             {inRepo: true, check: checkLimits},
	"### Metrics and traces #1":                 {check: checkMetrics},
}

// TestReadme runs every shell block of the README that can run on one
// machine, as printed, against a fresh `cardflow serve`, in the order a
// reader meets them, and checks what each says it does. A block runs in the
// reader's second terminal: demo.env sourced, BASE set and the cardflow
// command on the PATH, as the first lines of "Try it" and "Run a workflow"
// leave it; the README's localhost:3000 is the server's address. Every
// block is either run or named in readmeBlocks with the reason it is not.
func TestReadme(t *testing.T) {
	testenv.Short(t, "a server for the README's blocks")
	for _, tool := range []string{"curl", "sed", "grep"} {
		testenv.Command(t, tool)
	}
	bin := binary(t)
	// Outbound calls may reach this machine, as the blocks that call a
	// service of their own ask the reader to allow.
	t.Setenv("CARDFLOW_OUTBOUND_ALLOW", "127.0.0.1")
	work := t.TempDir()
	dataDir := filepath.Join(work, ".cardflow")
	port := freePort(t)
	srv := startServer(t, bin, dataDir, port)
	key, err := os.ReadFile(filepath.Join(dataDir, "demo-key"))
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	terminal := fmt.Sprintf(". %q\nBASE=%s\n", filepath.Join(dataDir, "demo.env"), srv.base)

	blocks := readmeShellBlocks(t)
	seen := map[string]bool{}
	for _, b := range blocks {
		seen[b.name()] = true
		spec, ok := readmeBlocks[b.name()]
		if !ok {
			t.Errorf("README block %s is neither run nor skipped with a reason in readmeBlocks:\n%s", b.name(), b.text)
			continue
		}
		if spec.skip != "" {
			t.Logf("not run: %s: %s", b.name(), spec.skip)
			continue
		}
		t.Run(b.name(), func(t *testing.T) {
			r := &readmeRun{t: t, base: srv.base, key: strings.TrimSpace(string(key))}
			if spec.before != nil {
				spec.before(r)
			}
			script := terminal + strings.ReplaceAll(b.text, "http://localhost:3000", srv.base)
			cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
			cmd.Dir = work
			if spec.inRepo {
				cmd.Dir = repo
			}
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
				"CARDFLOW_URL="+srv.base, "CARDFLOW_DATA_DIR="+dataDir)
			out, err := cmd.CombinedOutput()
			r.out = string(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			spec.check(r)
		})
	}
	for name := range readmeBlocks {
		if !seen[name] {
			t.Errorf("readmeBlocks names %s, which the README does not have", name)
		}
	}
}

// checkTryIt: the reads answer the sample records, the sample execution
// is a finished run, and the new card and workflow are saved, published
// and run with each other's ids.
func checkTryIt(r *readmeRun) {
	t := r.t
	a := r.successes(12)
	if ex := item(a[3]); ex["status"] != "SUCCEEDED" || ex["workflow_current_state"] != "Approved" {
		t.Errorf("the sample execution: got %v in %v, want SUCCEEDED in Approved", ex["status"], ex["workflow_current_state"])
	}
	if c := item(a[7]); c["card_version"] != float64(2) || c["latest"] != "true" {
		t.Errorf("getLatestActiveCard: got version %v latest %v, want 2, the sample's latest", c["card_version"], c["latest"])
	}
	card, wf := item(a[9]), item(a[10])
	if card["card_name"] != "Leave request" || card["card_version"] != float64(1) || card["status"] != "ACTIVE" || card["latest"] != "true" {
		t.Errorf("publishCard: got %v, want the new card's version 1 ACTIVE and latest", card)
	}
	if wf["workflow_name"] != "Leave request" || wf["workflow_version"] != float64(1) || wf["workflow_status"] != "ACTIVE" {
		t.Errorf("publishWorkflow: got %v, want the new workflow's version 1 ACTIVE", wf)
	}
	steps, _ := wf["workflow_steps"].([]any)
	if len(steps) != 3 || steps[1].(map[string]any)["config"].(map[string]any)["card_id"] != card["card_id"] {
		t.Errorf("the new workflow's card step: got %v, want it to name the new card %v", steps, card["card_id"])
	}
	id, _ := a[11]["service_execution_id"].(string)
	ex := r.execution(wf["workflow_id"].(string), id, "WAITING")
	if ex["workflow_current_state"] != "Manager approval" {
		t.Errorf("the new workflow's execution waits in %v, want Manager approval", ex["workflow_current_state"])
	}
	// The execution is recorded WAITING before its card goes out.
	var sent map[string]any
	testenv.WaitFor(t, "the card in the outbox", func() bool {
		for _, d := range r.get("/v1/adaptive-cards/outbox", "limit", "30")["items"].([]any) {
			if d := d.(map[string]any); d["workflow_execution_id"] == id {
				sent = d
			}
		}
		return sent != nil
	})
	if sent == nil || sent["card_id"] != card["card_id"] || !strings.Contains(jsonText(sent["card_payload"]), "Ann asks for 3 days off") {
		t.Errorf("outbox: got %v, want the new card saying \"Ann asks for 3 days off\"", jsonText(sent))
	}
}

// checkPaging: the second request answers the page after the first.
func checkPaging(r *readmeRun) {
	a := r.successes(2)
	if _, ok := a[0]["lastKey"].(map[string]any); !ok {
		r.t.Fatalf("the first page has no lastKey: %v", a[0])
	}
	key := func(it any) string {
		m := it.(map[string]any)
		return fmt.Sprintf("%s/%03.0f", m["workflow_id"], m["workflow_version"])
	}
	var first, next []string
	for _, it := range a[0]["items"].([]any) {
		first = append(first, key(it))
	}
	for _, it := range a[1]["items"].([]any) {
		next = append(next, key(it))
	}
	// Lists are newest first: the next page goes on below the first.
	if len(first) != 2 || len(next) == 0 || next[0] >= first[len(first)-1] {
		r.t.Errorf("pages: got %v then %v, want the second to follow the first", first, next)
	}
}

// checkApprovalRun: the card went out expanded, the resume answered the
// execution after it (RUNNING), and the execution ended approved.
func checkApprovalRun(r *readmeRun) {
	for _, want := range []string{"PO-4711", `"value":"4800 EUR"`, "Resumed  Manager approval (approve)", "\nSUCCEEDED\n", `"status":"SUCCEEDED"`, `"decision":"approve"`} {
		if !strings.Contains(r.out, want) {
			r.t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
	var resumes int
	for _, a := range r.answers() {
		if _, ok := a["resumed"]; ok {
			resumes++
			if a["resumed"] != true || a["status"] != "RUNNING" || a["workflow_current_state"] != "Manager approval" {
				r.t.Errorf("resume: got %v, want resumed, RUNNING in Manager approval", a)
			}
		}
	}
	if resumes != 1 {
		r.t.Errorf("got %d resume answers, want 1:\n%s", resumes, r.out)
	}
}

// checkWaitForExecution: timeout=0 answers the open execution at once, and
// after the resume until=final answers it SUCCEEDED.
func checkWaitForExecution(r *readmeRun) {
	a := r.successes(2)
	if s := item(a[0])["status"]; s != "RUNNING" && s != "WAITING" {
		r.t.Errorf("timeout=0: got status %v, want the execution open", s)
	}
	if s := item(a[1])["status"]; s != "SUCCEEDED" {
		r.t.Errorf("until=final: got status %v, want SUCCEEDED", s)
	}
}

// checkWithdrawnOrder: the trigger left an execution waiting for PO-4712,
// the cancel ended that one, and the schedule is paused.
func checkWithdrawnOrder(r *readmeRun) {
	a := r.successes(3)
	waiting, cancelled := item(a[0]), item(a[1])
	if waiting["status"] != "WAITING" || waiting["workflow_current_state"] != "Manager approval" || waiting["workflow_version"] != float64(2) {
		r.t.Errorf("after the trigger: got %v of version %v in %v, want WAITING of version 2 in Manager approval", waiting["status"], waiting["workflow_version"], waiting["workflow_current_state"])
	}
	if !strings.Contains(jsonText(waiting["workflow_event_log"]), "process id PO-4712") {
		r.t.Errorf("the execution does not wait for PO-4712: %s", jsonText(waiting["workflow_event_log"]))
	}
	if cancelled["status"] != "CANCELLED" || cancelled["workflow_execution_id"] != waiting["workflow_execution_id"] || cancelled["modified_by"] != "demo-admin" {
		r.t.Errorf("cancel: got %v of %v by %v, want CANCELLED of %v by demo-admin", cancelled["status"], cancelled["workflow_execution_id"], cancelled["modified_by"], waiting["workflow_execution_id"])
	}
	if a[2]["status"] != "PAUSED" {
		r.t.Errorf("toggleScheduledWorkflow: got %v, want PAUSED", a[2])
	}
}

// sapWorkflow is the workflow the SAP block's text assumes: it waits for
// SAP to release a purchase order.
const sapWorkflow = `{"workflow_name": "Purchase order release", "workflow_steps": [
	{"id": "start", "name": "Order created", "type": "trigger", "config": {"kind": "REQUEST"}},
	{"id": "release", "name": "Wait for the release in SAP", "type": "wait", "config": {"timeout": "P7D"}},
	{"id": "done", "name": "Released", "type": "end", "config": {"output": "{{ steps.release.output }}"}}],
	"workflow_connections": [{"from": "start", "to": "release"}, {"from": "release", "to": "done"}]}`

// waitForSAP triggers a workflow with the business key as the process id,
// as the SAP section says, and waits until it waits.
func waitForSAP(r *readmeRun) {
	var def map[string]any
	json.Unmarshal([]byte(sapWorkflow), &def)
	status, out := api(r.t, "POST", r.base+"/v1/workflows/saveWorkflow", r.key, def)
	if status != 200 {
		r.t.Fatalf("saveWorkflow: got %d %v", status, out)
	}
	wf := item(out)["workflow_id"].(string)
	if status, out := api(r.t, "POST", r.base+"/v1/workflows/publishWorkflow", r.key, map[string]any{"workflow_id": wf, "workflow_version": 1}); status != 200 {
		r.t.Fatalf("publishWorkflow: got %d %v", status, out)
	}
	status, out = api(r.t, "POST", r.base+"/v1/workflows/triggerworkflow/"+wf+"?process_id=4500000001", r.key, map[string]any{"po": "4500000001"})
	if status != 200 {
		r.t.Fatalf("trigger: got %d %v", status, out)
	}
	r.env = map[string]string{"workflow": wf, "execution": out["service_execution_id"].(string)}
	r.execution(wf, r.env["execution"], "WAITING")
}

// checkSAPResume: the wait took the body as its output, and the execution
// ended with it.
func checkSAPResume(r *readmeRun) {
	a := r.successes(1)
	if a[0]["resumed"] != true || a[0]["status"] != "RUNNING" || a[0]["service_execution_id"] != r.env["execution"] {
		r.t.Errorf("resume: got %v, want execution %s resumed and RUNNING", a[0], r.env["execution"])
	}
	done := r.execution(r.env["workflow"], r.env["execution"], "SUCCEEDED")
	if out := done["workflow_output_payload"].(map[string]any); out["PurchaseOrder"] != "4500000001" || out["source"] != "SAP" {
		r.t.Errorf("output: got %v, want the SAP event", out)
	}
}

// checkKeys: the key was created and shown, listed without its secret, and
// revoked, so the API refuses it.
// checkLimits sees the limits set through the running server, shown, and
// cleared.
func checkLimits(r *readmeRun) {
	for _, want := range []string{"organization acme", "rate         200 requests/s", "burst        default", "max open     5000 executions", "acme has no limits of its own now"} {
		if !strings.Contains(r.out, want) {
			r.t.Errorf("limits: want %q in the output:\n%s", want, r.out)
		}
	}
}

// checkTeamsConversations sees the conversation registered, listed as
// the admin registered it, and removed.
func checkTeamsConversations(r *readmeRun) {
	for _, want := range []string{"registered 19:0f3c2a@thread.tacv2 for ", "19:0f3c2a@thread.tacv2  72f988bf-86f1-41af-91ab-2d7cd011db47  -     admin", "removed 19:0f3c2a@thread.tacv2"} {
		if !strings.Contains(r.out, want) {
			r.t.Errorf("teams conversations: want %q in the output:\n%s", want, r.out)
		}
	}
}

// checkDelegations sees the delegation set, listed, and removed.
func checkDelegations(r *readmeRun) {
	for _, want := range []string{"ann@example.com's approvals go to dan@example.com from 2099-07-01T00:00:00Z to 2099-07-15T00:00:00Z",
		"ann@example.com  dan@example.com  2099-07-01T00:00:00Z  2099-07-15T00:00:00Z", "removed delegation "} {
		if !strings.Contains(r.out, want) {
			r.t.Errorf("delegations: want %q in the output:\n%s", want, r.out)
		}
	}
}

// checkMetrics sees the executions the README ran counted at /metrics.
func checkMetrics(r *readmeRun) {
	for _, want := range []string{`cardflow_executions_started_total{trigger_type="REQUEST"}`, "cardflow_step_duration_seconds_count"} {
		if !strings.Contains(r.out, want) {
			r.t.Errorf("/metrics: want %q in the output:\n%s", want, r.out)
		}
	}
}

// checkApprovalStats: both calls answer statistics, the second of the
// days it names.
func checkApprovalStats(r *readmeRun) {
	dec := json.NewDecoder(strings.NewReader(r.out))
	var days []string
	for dec.More() {
		var got struct {
			Item struct {
				From  string `json:"from"`
				To    string `json:"to"`
				ByDay []any  `json:"by_day"`
			} `json:"item"`
		}
		if err := dec.Decode(&got); err != nil {
			r.t.Fatalf("not statistics: %v\n%s", err, r.out)
		}
		days = append(days, fmt.Sprintf("%s..%s %d", got.Item.From, got.Item.To, len(got.Item.ByDay)))
	}
	if len(days) != 2 || !strings.HasSuffix(days[0], " 30") || days[1] != "2026-11-01..2026-11-30 30" {
		r.t.Errorf("getApprovalStats: got %q, want the last 30 days, then November 2026:\n%s", days, r.out)
	}
}

func checkKeys(r *readmeRun) {
	var key string
	for line := range strings.Lines(r.out) {
		if strings.HasPrefix(line, "cfk_") {
			key = strings.TrimSpace(line)
		}
	}
	parts := strings.SplitN(key, "_", 3)
	if len(parts) != 3 {
		r.t.Fatalf("the block showed no key:\n%s", r.out)
	}
	keyID := parts[1]
	var listed bool
	for line := range strings.Lines(r.out) {
		fields := strings.Fields(line)
		listed = listed || slices.Equal(fields[:min(len(fields), 5)], []string{keyID, "acme", "finance", "read,execute", "billing-bot"})
	}
	if !listed || strings.Count(r.out, parts[2]) != 1 {
		r.t.Errorf("keys list: want key %s of acme/finance, read,execute, billing-bot listed and its secret shown once:\n%s", keyID, r.out)
	}
	if !strings.Contains(r.out, "revoked key "+keyID+" of acme") {
		r.t.Errorf("keys revoke: want key %s revoked:\n%s", keyID, r.out)
	}
	if status, _ := api(r.t, "GET", r.base+"/v1/workflows/getOrganizationWorkflows", key, nil); status != 401 {
		r.t.Errorf("the revoked key: got %d, want 401", status)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(bytes.TrimSpace(b))
}

// checkTwoApprovers: the outbox names each approver's copy and shows no
// link; the admin's links act is recorded; ann's API answer leaves the
// approval pending, dan's confirmed link decides it, and the audit trail
// and the record show both.
func checkTwoApprovers(r *readmeRun) {
	t := r.t
	if n := strings.Count(r.out, "/v1/teams/respond?token="); n != 0 {
		t.Errorf("output shows %d links, want none (the links act's go into $LINK):\n%s", n, r.out)
	}
	for _, want := range []string{
		"outbox   ann@example.com  DELIVERED",
		"outbox   dan@example.com  DELIVERED",
		"Nothing is recorded until you confirm.",
		`"type":"ApprovalLinksIssued","step_id":"approve","step":"Two approvals","actor":"`,
		`"message":"personal links of dan@example.com given to `,
		"Your answer (approve) is recorded; the approval is approved.",
		`"type":"ApprovalOpened"`,
		`"type":"ApprovalAnswered","step_id":"approve","step":"Two approvals","actor":"ann@example.com","message":"approve through api: fine by me"`,
		`"type":"ApprovalAnswered","step_id":"approve","step":"Two approvals","actor":"dan@example.com","message":"approve through link"`,
		`"type":"ApprovalDecided"`,
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %s:\n%s", want, r.out)
		}
	}
	a := r.answers()
	if len(a) != 2 {
		t.Fatalf("got %d JSON answers, want ann's answer and the approval:\n%s", len(a), r.out)
	}
	if it := item(a[0]); it["status"] != "PENDING" {
		t.Errorf("ann's answer: got %v, want the approval PENDING", a[0])
	}
	it := item(a[1])
	answers, _ := it["answers"].([]any)
	if it["status"] != "APPROVED" || len(answers) != 2 || answers[1].(map[string]any)["channel"] != "link" {
		t.Errorf("the approval: got %v, want APPROVED with ann's and dan's answers, dan's through his link", it)
	}
}
