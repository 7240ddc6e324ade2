package main

import (
	"strings"

	"github.com/cardflow/cardflow/internal/testenv"
)

// needPython skips a block that runs a Python 3 service of its own.
func needPython(r *readmeRun) {
	testenv.Command(r.t, "python3")
}

// checkRedrive: the stock check failed while the service had no record,
// the redrive continued it in the same execution, which succeeded with
// the stock and a log that holds the failure and who redrove it, and a
// second redrive is refused.
func checkRedrive(r *readmeRun) {
	t := r.t
	for _, want := range []string{"ExecutionFailed  Check stock (check)", "\nFAILED\n", "ExecutionRedriven  Check stock (check)", "RUNNING in \"Check stock\"", "\nSUCCEEDED\n"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
	a := r.answers()
	if len(a) != 3 {
		t.Fatalf("got %d answers, want publish, the execution and the refused redrive:\n%s", len(a), r.out)
	}
	ex := item(a[1])
	if out, _ := ex["workflow_output_payload"].(map[string]any); ex["status"] != "SUCCEEDED" || out["in_stock"] != float64(3) {
		t.Errorf("the execution: got %v with %v, want SUCCEEDED with the stock", ex["status"], ex["workflow_output_payload"])
	}
	var redriven map[string]any
	for _, ev := range ex["workflow_event_log"].(map[string]any)["events"].([]any) {
		if ev := ev.(map[string]any); ev["type"] == "ExecutionRedriven" {
			redriven = ev
		}
	}
	if redriven == nil || redriven["actor"] != "demo-admin" {
		t.Errorf("ExecutionRedriven: got %v, want one by demo-admin", redriven)
	}
	if a[2]["code"] != "CONFLICT" || !strings.Contains(a[2]["message"].(string), "SUCCEEDED") {
		t.Errorf("second redrive: got %v, want CONFLICT saying it SUCCEEDED", a[2])
	}
}
