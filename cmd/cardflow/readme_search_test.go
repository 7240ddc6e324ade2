package main

import "strings"

// checkSearch: the sample workflow's search finds succeeded executions
// only, the leave request of "Try it" is found by its process id, and the
// CLI prints a table.
func checkSearch(r *readmeRun) {
	t := r.t
	a := r.successes(3)
	succeeded, _ := a[0]["items"].([]any)
	if len(succeeded) == 0 {
		t.Errorf("search by workflow and status: got no executions, want the sample's succeeded ones")
	}
	for _, it := range succeeded {
		if it.(map[string]any)["status"] != "SUCCEEDED" {
			t.Errorf("search by workflow and status: got %v", it)
		}
	}
	if leave, _ := a[1]["items"].([]any); len(leave) != 1 {
		t.Errorf("search by process id LEAVE-17: got %d executions, want the leave request", len(leave))
	}
	if !strings.Contains(r.out, "EXECUTION") {
		t.Errorf("cardflow executions --status: got %q, want a table", r.out)
	}
}
