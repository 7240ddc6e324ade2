package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/cardflow/cardflow/internal/testenv"
)

// The console in a real browser (Debian's chromium, driven over the
// DevTools protocol): the journey of issue 18 against `cardflow serve`,
// with axe-core's accessibility rules on every page and no console error
// allowed. CARDFLOW_CONSOLE_SCREENSHOTS=docs writes the screenshots the
// README shows; they go to a temporary directory otherwise.

// axeTags are the rules axe-core runs: WCAG 2.1 A and AA, which hold
// keyboard access, names and labels, and contrast.
const axeTags = `["wcag2a","wcag2aa","wcag21a","wcag21aa"]`

// browserOrSkip returns chromium's path and axe-core's source, or skips
// the test where they are missing (testenv).
func browserOrSkip(t *testing.T) (chrome, axe string) {
	t.Helper()
	const need = "a browser with axe-core"
	testenv.Short(t, need)
	unavailable := func(format string, args ...any) {
		t.Helper()
		testenv.Skip(t, need, fmt.Sprintf(format, args...))
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chrome = p
			break
		}
	}
	if chrome == "" {
		unavailable("no chromium on PATH: install it (apt-get install chromium) to test the console in a browser")
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "console", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		unavailable("axe-core is not installed (make console installs it): %v", err)
	}
	return chrome, string(b)
}

// page drives one tab of the console.
type page struct {
	t    *testing.T
	ctx  context.Context
	axe  string
	shot string // screenshot directory
	mu   *sync.Mutex
	errs *[]string
}

func newPage(t *testing.T, parent context.Context, axe, shots string) *page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(parent)
	t.Cleanup(cancel)
	p := &page{t: t, ctx: ctx, axe: axe, shot: shots, mu: &sync.Mutex{}, errs: &[]string{}}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				p.mu.Lock()
				*p.errs = append(*p.errs, m.String())
				p.mu.Unlock()
			}
		}
	}()
	return p
}

func (p *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v\nconsole errors: %v", what, err, p.takeErrors())
	}
}

// wait polls a JavaScript condition until it holds.
func (p *page) wait(what, cond string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond)); err != nil {
		body, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.body.innerText`))
		p.t.Fatalf("%s: %v\npage text:\n%s\nconsole errors: %v", what, err, body, p.takeErrors())
	}
}

func (p *page) eval(expr string, opts ...chromedp.EvaluateOption) []byte {
	p.t.Helper()
	out, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]byte](expr, opts...))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return out
}

func (p *page) takeErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := *p.errs
	*p.errs = nil
	return out
}

// check audits the page as it is, then writes its screenshot.
func (p *page) check(name string) {
	p.t.Helper()
	p.audit(name)
	buf, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(p.shot, "console-"+name+".png"), buf, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// audit fails on the console errors logged so far and on axe-core's
// violations of the page as it is.
func (p *page) audit(name string) {
	p.t.Helper()
	if errs := p.takeErrors(); len(errs) > 0 {
		p.t.Errorf("page %s logged console errors:\n%s", name, strings.Join(errs, "\n"))
	}
	if string(p.eval(`typeof axe`)) != `"object"` {
		p.eval(p.axe)
	}
	raw := p.eval(`axe.run(document, {runOnly: {type: "tag", values: `+axeTags+`}}).then(r => r.violations.map(v => v.id + ": " + v.help + " — " + v.nodes.map(n => n.target.join(" ")).join(", ")))`, chromedp.EvalAwaitPromise)
	var violations []string
	if err := json.Unmarshal(raw, &violations); err != nil {
		p.t.Fatalf("axe result %s: %v", raw, err)
	}
	if len(violations) > 0 {
		p.t.Errorf("page %s: got %d accessibility violations, want none:\n%s", name, len(violations), strings.Join(violations, "\n"))
	}
}

// signIn enters key at the key prompt and waits for the console.
func (p *page) signIn(key string) {
	p.t.Helper()
	p.do("enter the key",
		chromedp.WaitVisible(chromedp.ID("api-key")),
		chromedp.SendKeys(chromedp.ID("api-key"), key),
		chromedp.Click(chromedp.CSS(".prompt button[type=submit]")),
	)
	p.wait("the console opens", `document.querySelector('nav[aria-label=Pages]') !== null`)
}

func (p *page) signOut() {
	p.t.Helper()
	p.do("sign out", chromedp.Click(`//button[normalize-space()='Sign out']`))
	p.wait("the key prompt", `document.getElementById('api-key') !== null`)
}

// clear empties a field; the typing that follows tells the page.
func (p *page) clear(id string) {
	p.t.Helper()
	p.do("clear "+id, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById(%q).value = ''`, id)))
}

// open goes to a page of the console by its route.
func (p *page) open(hash string) {
	p.t.Helper()
	p.do("open "+hash, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %q`, hash)))
}

func TestConsoleInBrowser(t *testing.T) {
	chrome, axe := browserOrSkip(t)
	shots := os.Getenv("CARDFLOW_CONSOLE_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if !filepath.IsAbs(shots) {
		shots = filepath.Join("..", "..", shots)
	}

	bin := binary(t)
	dataDir := t.TempDir()
	srv := startServer(t, bin, dataDir, freePort(t))
	env := demoEnv(t, dataDir)
	keyOf := func(person string) string {
		out, err := cli(t, bin, dataDir, "keys", "create", "--org", "demo-org", "--workspace", "demo-workspace", "--scopes", "read,execute", "--actor", person)
		if err != nil {
			t.Fatalf("keys create --actor %s: %v", person, err)
		}
		return strings.TrimSpace(out)
	}
	ann, dan, carol := keyOf("ann@example.com"), keyOf("dan@example.com"), keyOf("carol@example.com")

	alloc, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))...)
	defer cancel()
	browser, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	p := newPage(t, browser, axe, shots)
	console := srv.base + "/console/"

	// A wrong key leads back to the prompt with a plain message.
	p.do("open the console", chromedp.Navigate(console))
	p.wait("the key prompt", `document.getElementById('api-key') !== null`)
	p.do("enter a wrong key",
		chromedp.SendKeys(chromedp.ID("api-key"), "cfk_wrong_key"),
		chromedp.Click(chromedp.CSS(".prompt button[type=submit]")))
	p.wait("the wrong key is refused", `document.body.innerText.includes('wrong or has been revoked')`)
	// The browser logs the refused request (401) as an error; that one is expected.
	for _, e := range p.takeErrors() {
		if !strings.Contains(e, "401") {
			t.Errorf("wrong key: got console error %q, want only the refused request", e)
		}
	}
	p.check("key")
	if strings.Contains(string(p.eval(`location.href`)), "cfk_") {
		t.Error("the key is in the URL")
	}

	p.clear("api-key")
	p.signIn(env["KEY"])
	if got := string(p.eval(`sessionStorage.getItem('cardflow.apiKey')`)); got != `"`+env["KEY"]+`"` {
		t.Errorf("session storage: got %s, want the key entered", got)
	}

	// Workflows: the list, then the sample approval workflow as a graph.
	p.open("#/workflows")
	p.wait("the workflow list", `document.body.innerText.includes('Purchase request approval')`)
	p.check("workflows")
	p.open("#/workflows/" + env["WORKFLOW_ID"] + "/2")
	p.wait("the graph", `document.querySelector('[data-step=approve]') !== null`)
	for _, label := range []string{"when input.amount > 1000", "on timeout", "Manager approval"} {
		if !strings.Contains(string(p.eval(`document.querySelector('svg.graph').textContent`)), label) {
			t.Errorf("graph: got no %q", label)
		}
	}
	// A step is selected with the keyboard; its config shows.
	p.do("select a step with the keyboard", chromedp.Focus(chromedp.CSS("[data-step=approve]")), chromedp.KeyEvent("\r"))
	p.wait("the step's config", `document.querySelector('.config pre') && document.querySelector('.config pre').textContent.includes('card_id')`)
	p.check("workflow")

	// A draft is published from its page.
	p.open("#/workflows/" + env["ONBOARDING_WORKFLOW_ID"] + "/1")
	p.wait("the draft", `document.body.innerText.includes('Publish version 1')`)
	p.do("publish", chromedp.Click(`//button[normalize-space()='Publish version 1']`))
	p.wait("published", `document.querySelector('h1 .badge').textContent === 'ACTIVE' && document.getElementById('trigger-input') !== null`)

	// Trigger the two-approver workflow from its page; the execution page
	// shows it waiting at the approval step.
	p.open("#/workflows/" + env["TWO_APPROVER_WORKFLOW_ID"] + "/1")
	p.wait("the trigger form", `document.getElementById('trigger-input') !== null`)
	p.do("trigger",
		chromedp.SendKeys(chromedp.ID("trigger-pid"), "PO-CONSOLE-1"),
	)
	p.clear("trigger-input")
	p.do("trigger",
		chromedp.SendKeys(chromedp.ID("trigger-input"), `{"requester": "bob@example.com", "item": "Chair", "amount": 4200}`),
		chromedp.Click(`//form[@aria-label='Trigger an execution']//button[@type='submit']`))
	p.wait("the execution waits", `location.hash.startsWith('#/executions/') && document.querySelector('[data-step=approve].waiting') !== null`)
	execHash := strings.Trim(string(p.eval(`location.hash`)), `"`)

	// Ann answers from her inbox; the first load of the inbox is measured
	// with the cache off.
	p.signOut()
	p.signIn(ann)
	p.open("#/inbox")
	p.wait("ann's inbox", `document.querySelector('.approval .ac-host button') !== null`)
	measureInbox(t, p)
	p.wait("the inbox after reload", `document.querySelector('.approval .ac-host button') !== null`)
	p.check("inbox")
	p.do("phone size", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	p.wait("the inbox on a phone", `document.querySelector('.approval') !== null`)
	if wide := string(p.eval(`document.documentElement.scrollWidth > window.innerWidth`)); wide != "false" {
		t.Error("the inbox is wider than a phone's screen")
	}
	p.check("inbox-phone")
	p.do("desktop size", chromedp.EmulateViewport(1280, 900))
	p.do("approve as ann", chromedp.Click(`//div[contains(@class,'ac-host')]//button[normalize-space()='Approve']`))
	p.wait("ann's answer counted", `document.body.innerText.includes('Approved:')`)

	// Dan follows the execution in one tab and answers in another: the
	// first tab updates by itself to SUCCEEDED.
	p.signOut()
	p.signIn(dan)
	p.open(execHash)
	p.wait("the execution page", `document.getElementById('execution-status') !== null && document.body.innerText.includes('WAITING')`)
	q := newPage(t, browser, axe, shots)
	q.do("open the console in a second tab", chromedp.Navigate(console+"#/inbox"))
	q.signIn(dan)
	q.wait("dan's inbox", `document.querySelector('.approval .ac-host button') !== null`)
	q.do("approve as dan", chromedp.Click(`//div[contains(@class,'ac-host')]//button[normalize-space()='Approve']`))
	q.wait("dan's answer", `document.body.innerText.includes('Approved:')`)
	p.wait("the timeline reaches SUCCEEDED", `document.getElementById('execution-status').textContent.includes('SUCCEEDED') && document.body.innerText.includes('ExecutionSucceeded')`)
	p.check("execution")

	// More executions than a page holds: the list shows the first 30, and
	// More, from the keyboard, appends the rest, once however often it is
	// pressed while it reads.
	for i := range 35 {
		status, out := api(t, "POST", fmt.Sprintf("%s/v1/workflows/triggerworkflow/%s?process_id=PO-SMALL-%d", srv.base, env["WORKFLOW_ID"], i), env["KEY"],
			map[string]any{"requester": "bob@example.com", "item": "Pen", "amount": 12})
		if status != 200 {
			t.Fatalf("trigger %d: got %d %v, want 200", i, status, out)
		}
	}
	total := countExecutions(t, srv.base, env["KEY"])
	if total <= 30 {
		t.Fatalf("got %d executions, want more than a page of 30", total)
	}
	p.open("#/executions")
	p.wait("the first page of executions", `document.querySelectorAll('table.list tbody tr').length === 30 && document.querySelector('button[aria-label="More executions"]') !== null`)
	p.check("executions")
	p.do("More, from the keyboard", chromedp.Focus(chromedp.CSS(`button[aria-label="More executions"]`)), chromedp.KeyEvent("\r"), chromedp.KeyEvent("\r"))
	p.wait("the rest of the executions", fmt.Sprintf(`document.querySelectorAll('table.list tbody tr').length === %d && document.querySelector('button[aria-label="More executions"]') === null`, total))
	rows := string(p.eval(`new Set([...document.querySelectorAll('table.list tbody tr td:first-child')].map(td => td.textContent)).size`))
	if rows != fmt.Sprint(total) {
		t.Errorf("executions after More: got %s distinct, want %d", rows, total)
	}
	if got := string(p.eval(`document.activeElement.textContent`)); !strings.Contains(got, fmt.Sprintf("%d executions shown, all there are", total)) {
		t.Errorf("focus after the last page: got %s, want the line that says all are shown", got)
	}
	p.audit("executions-more")
	// Filtered by status and process id, through searchExecutions.
	p.do("choose a status", chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('f-status'); s.value = 'SUCCEEDED'; s.dispatchEvent(new Event('change', {bubbles: true})); })()`))
	p.do("filter",
		chromedp.SendKeys(chromedp.ID("f-pid"), "PO-CONSOLE-1"),
		chromedp.Click(`//form[@aria-label='Filter executions']//button[@type='submit']`))
	execID := execHash[strings.LastIndex(execHash, "/")+1:]
	p.wait("the filtered list", fmt.Sprintf(`document.querySelectorAll('table.list tbody tr').length === 1 && document.querySelector('table.list tbody').textContent.includes(%q)`, execID))
	p.check("executions-filtered")

	// Cards: a version previewed with sample data through the service's templating.
	p.open("#/cards")
	p.wait("the card list", `document.querySelectorAll('table.list tbody tr').length > 0`)
	p.open("#/cards/" + env["CARD_ID"] + "/2")
	p.wait("the card page", `document.getElementById('card-data') !== null`)
	p.do("preview", chromedp.Click(`//form[@aria-label='Preview with sample data']//button[@type='submit']`))
	p.wait("the preview", `document.querySelector('.preview .ac-host') && document.querySelector('.preview .ac-host').textContent.includes('Purchase request for Ann Example')`)
	p.check("card")

	// Schedules: pause the sample's weekday schedule.
	p.open("#/schedules")
	p.wait("the schedules", `document.body.innerText.includes('Overdue invoice digest') && document.querySelector('.schedule-state').textContent.includes('ACTIVE') && document.querySelectorAll('.runs li').length === 3`)
	p.do("pause", chromedp.Click(`//button[@aria-label='Pause Overdue invoice digest']`))
	p.wait("paused", `document.querySelector('.schedule-state').textContent.includes('PAUSED') && document.querySelector('button[aria-label="Play Overdue invoice digest"]') !== null`)
	p.check("schedules")

	// Ann hands her part of an approval on to carol from her inbox (the
	// sample step allows reassignment); it leaves hers, carol finds it in
	// hers and answers it in ann's place.
	if status, out := api(t, "POST", fmt.Sprintf("%s/v1/workflows/triggerworkflow/%s?process_id=PO-CONSOLE-2", srv.base, env["TWO_APPROVER_WORKFLOW_ID"]), env["KEY"],
		map[string]any{"requester": "bob@example.com", "item": "Desk", "amount": 2900}); status != 200 {
		t.Fatalf("trigger PO-CONSOLE-2: got %d %v, want 200", status, out)
	}
	const reassigned = `document.querySelectorAll('.approval').length === 1 && document.querySelector('.approval .meta').textContent.includes('PO-CONSOLE-2') && document.querySelector('.approval .meta').textContent.includes('all of carol@example.com, dan@example.com')`
	p.signOut()
	p.signIn(ann)
	p.open("#/inbox")
	p.wait("ann's inbox", `document.querySelectorAll('.approval').length === 1 && document.querySelector('.approval .meta').textContent.includes('PO-CONSOLE-2')`)
	p.do("open the reassign form", chromedp.Click(`//article[contains(@class,'approval')]//summary[normalize-space()='Reject with a comment, or reassign']`))
	p.do("reassign to carol",
		chromedp.SendKeys(chromedp.CSS(`.approval input[id^="r-"]`), "carol@example.com"),
		chromedp.Click(`//article[contains(@class,'approval')]//button[normalize-space()='Reassign']`))
	// It leaves ann's inbox: it no longer waits on her.
	p.wait("reassigned", `document.body.innerText.includes('Reassigned to carol@example.com: Two approvals') && document.querySelectorAll('.approval').length === 0`)
	p.audit("inbox-reassigned")
	p.signOut()
	p.signIn(carol)
	p.open("#/inbox")
	p.wait("carol's inbox", reassigned+` && document.querySelector('.approval .ac-host button') !== null`)
	p.audit("inbox-carol")
	p.do("approve as carol", chromedp.Click(`//div[contains(@class,'ac-host')]//button[normalize-space()='Approve']`))
	p.wait("carol's answer counted", `document.body.innerText.includes('Approved: Two approvals (PO-CONSOLE-2)')`)

	// Carol is away next year: she hands her approvals to erin from her
	// inbox, sees the delegation active, and removes it.
	p.do("open the delegation form", chromedp.Click(`//summary[normalize-space()='Away? Hand your approvals to someone']`))
	p.do("name the delegate", chromedp.SendKeys(chromedp.ID("d-delegate"), "erin@example.com"))
	// A datetime-local input takes keys as the browser's locale orders them:
	// its value is set, as the picker would.
	p.eval(`(() => { const e = document.getElementById('d-ends'); e.value = '2099-01-01T00:00'; e.dispatchEvent(new Event('input', { bubbles: true })); return true; })()`)
	p.do("set the delegation", chromedp.Click(`//button[normalize-space()='Set delegation']`))
	p.wait("delegation active", `(document.querySelector('.active-delegation')?.textContent || '').includes('approvals of carol@example.com go to erin@example.com')`)
	p.audit("inbox-delegation")
	p.do("remove the delegation", chromedp.Click(`//section[contains(@class,'delegation')]//button[normalize-space()='Remove']`))
	p.wait("delegation removed", `document.querySelector('.active-delegation') === null && document.querySelector('.delegation li') === null`)

	// The dashboard draws the approvals decided above; its chart library
	// is read only when the page opens.
	p.signOut()
	p.signIn(env["KEY"])
	const chartsRead = `performance.getEntriesByType('resource').some((r) => r.name.includes('/chunks/dashboard-'))`
	if got := string(p.eval(chartsRead)); got != "false" {
		t.Errorf("the dashboard's bundle was read before the dashboard opened: %s", got)
	}
	p.open("#/dashboard")
	p.wait("the dashboard", `document.querySelectorAll('.charts canvas').length >= 3 && document.querySelector('.tiles').textContent.includes('decided')`)
	if got := string(p.eval(chartsRead)); got != "true" {
		t.Errorf("the dashboard's bundle: got read %s, want true once it opened", got)
	}
	p.check("dashboard")

	// Dan's key is revoked while his tab is open: the next call leads back
	// to the key prompt with a plain message, and the key is forgotten.
	danID := strings.SplitN(strings.TrimPrefix(dan, "cfk_"), "_", 2)[0]
	if _, err := cli(t, bin, dataDir, "keys", "revoke", danID); err != nil {
		t.Fatalf("keys revoke: %v", err)
	}
	q.open("#/workflows")
	q.wait("the prompt after revocation", `document.getElementById('api-key') !== null && document.body.innerText.includes('no longer accepts this key')`)
	if got := string(q.eval(`sessionStorage.getItem('cardflow.apiKey')`)); got != "null" {
		t.Errorf("session storage after revocation: got %s, want no key", got)
	}
	for _, e := range q.takeErrors() {
		if !strings.Contains(e, "401") {
			t.Errorf("revoked key: got console error %q, want only the refused request", e)
		}
	}
}

// measureInbox reloads the inbox with the browser cache off and logs the
// bytes the load transferred and the time to its first render (the list of
// cards drawn), as BENCHMARKS.md records them.
func measureInbox(t *testing.T, p *page) {
	t.Helper()
	if _, err := chromedp.Call(p.ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(p.ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		t.Fatal(err)
	}
	p.do("reload", chromedp.Reload())
	p.wait("the inbox rendered", `performance.getEntriesByName('inbox-rendered').length > 0`)
	raw := p.eval(`(() => {
		const nav = performance.getEntriesByType('navigation')[0];
		const res = performance.getEntriesByType('resource');
		const bytes = nav.transferSize + res.reduce((n, r) => n + r.transferSize, 0);
		const fcp = performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint');
		return {bytes, requests: res.length + 1, render: performance.getEntriesByName('inbox-rendered')[0].startTime, fcp: fcp ? fcp.startTime : 0,
			assets: res.filter(r => r.initiatorType !== 'fetch').reduce((n, r) => n + r.transferSize, nav.transferSize)};
	})()`)
	var m struct {
		Bytes, Assets, Requests int
		Render, FCP             float64
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("measures %s: %v", raw, err)
	}
	fcp := "not reported"
	if m.FCP > 0 {
		fcp = fmt.Sprintf("%.0f ms", m.FCP)
	}
	t.Logf("console: inbox first load: %d bytes transferred in %d requests (%d of them the page and its assets), first contentful paint %s, inbox rendered %.0f ms after navigation start",
		m.Bytes, m.Requests, m.Assets, fcp, m.Render)
}

// countExecutions counts the organization's executions through the API,
// page by page.
func countExecutions(t *testing.T, base, key string) int {
	t.Helper()
	n, next := 0, ""
	for {
		status, out := api(t, "GET", base+"/v1/workflows/getOrganizationExecutions?limit=30"+next, key, nil)
		if status != 200 {
			t.Fatalf("getOrganizationExecutions: got %d %v, want 200", status, out)
		}
		items, _ := out["items"].([]any)
		n += len(items)
		last, ok := out["lastKey"].(map[string]any)
		if !ok {
			return n
		}
		next = fmt.Sprintf("&workflow_id=%s&workflow_execution_id=%s", last["workflow_id"], last["workflow_execution_id"])
	}
}

// demoEnv reads the demo.env the server wrote.
func demoEnv(t *testing.T, dataDir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "demo.env"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(k, "export") {
			env[k] = v
		}
	}
	return env
}
