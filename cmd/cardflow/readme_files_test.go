package main

import "regexp"

// checkFiles: apply creates and publishes, then finds nothing to change,
// the dry run shows the change, the input contract refuses amount 0 and
// takes 120, the approval waits on ann, and export writes the files.
func checkFiles(r *readmeRun) {
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Card "Expense card": created, published \(\w+ version 1\)`),
		regexp.MustCompile(`Workflow "Expense approval": created, published \(\w+ version 1\)`),
		regexp.MustCompile(`Card "Expense card": unchanged \(\w+ version 1\)`),
		regexp.MustCompile(`Card "Expense card": would save a new version \(\w+ version 2\)`),
		regexp.MustCompile(`string\("Approve \$\{amount\} EUR now\?"\)`),
		regexp.MustCompile(`/amount breaks minimum`),
		regexp.MustCompile(`(?m)^\S+\s+Ask\s+first\s+ann@example.com`),
		regexp.MustCompile(`Workflow "Expense approval": \S+/export/workflow-expense-approval.yaml`),
	} {
		if !want.MatchString(r.out) {
			r.t.Errorf("output lacks %s:\n%s", want, r.out)
		}
	}
}
