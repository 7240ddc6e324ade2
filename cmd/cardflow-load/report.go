package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/loadgen"
)

// report collects the figures of a load run.
type report struct {
	conns    int
	duration time.Duration
	runs     []loadgen.Result
	rss      []int64

	triggered        int
	triggeredOutcome loadgen.Outcome
	listItems        int

	approvals    *loadgen.EngineResult
	approvalsRSS int64
	timeout      string

	roundTrips []loadgen.RoundTripResult
}

func (r *report) add(w io.Writer, res loadgen.Result, rss int64) {
	r.runs = append(r.runs, res)
	r.rss = append(r.rss, rss)
	fmt.Fprintln(w, res)
}

// problems counts failed requests and executions that did not end as the
// run expects: resumed approvals SUCCEEDED, the others timed out.
func (r *report) problems() int {
	n := 0
	for _, res := range r.runs {
		n += res.Errors()
	}
	o := r.triggeredOutcome
	n += o.Open + o.Lost
	if a := r.approvals; a != nil {
		n += a.Triggers.Errors() + a.Resumes.Errors()
		n += a.ResumedOutcome.Open + a.ResumedOutcome.Lost + a.ResumedOutcome.Finished() - a.ResumedOutcome.Statuses[cardflow.ExecSucceeded]
		n += a.TimedOutOutcome.Open + a.TimedOutOutcome.Lost + a.TimedOutOutcome.Statuses[cardflow.ExecSucceeded]
	}
	for _, rt := range r.roundTrips {
		o := rt.Outcome
		n += rt.Approvals.Errors() + o.Open + o.Lost + o.Finished() - o.Statuses[cardflow.ExecSucceeded]
	}
	return n
}

func (r *report) markdown() string {
	var b strings.Builder
	if len(r.runs) > 0 {
		fmt.Fprintf(&b, "%d connections, %s per run.\n\n", r.conns, r.duration)
		b.WriteString("| run | requests | requests/s | p50 ms | p99 ms | max ms | non-2xx | transport errors | server peak RSS |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for i, res := range r.runs {
			fmt.Fprintf(&b, "| %s | %d | %.0f | %.2f | %.2f | %.2f | %d | %d | %s |\n", res.Name, res.Requests, res.PerSecond(),
				msf(res.P50), msf(res.P99), msf(res.Max), res.Failed, res.Transport, mib(r.rss[i]))
		}
		b.WriteString("\n")
	}
	if r.triggered > 0 {
		fmt.Fprintf(&b, "Executions started by triggerworkflow: %d; %s.\n", r.triggered, outcome(r.triggeredOutcome))
	}
	if r.listItems > 0 {
		fmt.Fprintf(&b, "getOrganizationExecutions answered pages of %d executions.\n", r.listItems)
	}
	if a := r.approvals; a != nil {
		timedOut := a.Executions - a.Resumed
		fmt.Fprintf(&b, "\nApproval workflow (card step, timeout %s in version %d): %d executions, %d resumed through the API, %d left to time out.\n\n",
			r.timeout, a.Version, a.Executions, a.Resumed, timedOut)
		b.WriteString("| half | final states | still open | lost |\n|---|---|---:|---:|\n")
		fmt.Fprintf(&b, "| resumed | %s | %d | %d |\n", statuses(a.ResumedOutcome), a.ResumedOutcome.Open, a.ResumedOutcome.Lost)
		fmt.Fprintf(&b, "| timed out | %s | %d | %d |\n\n", statuses(a.TimedOutOutcome), a.TimedOutOutcome.Open, a.TimedOutOutcome.Lost)
		fmt.Fprintf(&b, "All final after %s from the first trigger; triggers %.0f/s (p99 %.2f ms, %d errors), resumes p99 %.2f ms (%d errors); server peak RSS %s.\n",
			a.Elapsed.Round(time.Millisecond), a.Triggers.PerSecond(), msf(a.Triggers.P99), a.Triggers.Errors(), msf(a.Resumes.P99), a.Resumes.Errors(), mib(r.approvalsRSS))
	}
	if len(r.roundTrips) > 0 {
		b.WriteString("\nApproval round trips over HTTP: each client triggers the approval workflow with a process id of its own (it waits at its card), resumes it, and waits with waitForExecution until it is final; then every execution is read back.\n\n")
		b.WriteString("| clients | approvals | approvals/s | p50 ms | p99 ms | resume to end p50 ms | resume to end p99 ms | errors | final states | still open | lost |\n")
		b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|\n")
		for _, rt := range r.roundTrips {
			a, o := rt.Approvals, rt.Outcome
			fmt.Fprintf(&b, "| %d | %d | %.0f | %.2f | %.2f | %.2f | %.2f | %d | %s | %d | %d |\n", a.Connections, a.Requests, a.PerSecond(),
				msf(a.P50), msf(a.P99), msf(rt.ResumeToEnd.P50), msf(rt.ResumeToEnd.P99), a.Errors(), statuses(o), o.Open, o.Lost)
		}
	}
	return b.String()
}

// outcome says where executions ended, for a person.
func outcome(o loadgen.Outcome) string {
	s := fmt.Sprintf("%d final (%s), %d still open, %d lost", o.Finished(), statuses(o), o.Open, o.Lost)
	if o.FirstProblem != "" {
		s += "; first problem: " + o.FirstProblem
	}
	return s
}

func statuses(o loadgen.Outcome) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(o.Statuses)) {
		parts = append(parts, fmt.Sprintf("%d %s", o.Statuses[k], k))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mib(n int64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}
