// Package emf writes the service's metrics as CloudWatch Embedded Metric
// Format: one JSON log line per measurement, which CloudWatch Logs turns
// into metrics with no API call from the function (see
// docs/DECISIONS.md, "Metrics and traces", for why it is written here).
package emf

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of the service's metrics.
const Namespace = "cardflow"

// Metric names, as CloudWatch shows them.
const (
	ExecutionsStarted  = "ExecutionsStarted"
	ExecutionsFinished = "ExecutionsFinished"
	StepDuration       = "StepDuration"
	CardAnswerTime     = "CardAnswerTime"
	ApprovalDecisions  = "ApprovalDecisions"
	ApprovalCycleTime  = "ApprovalCycleTime"
)

// Writer writes EMF lines to a log stream (a Lambda function's stdout).
// It is safe for concurrent use; each line is one Write.
type Writer struct {
	mu  sync.Mutex
	out io.Writer
	now func() time.Time
}

// New returns a writer to out, reading the clock with now (time.Now when
// nil).
func New(out io.Writer, now func() time.Time) *Writer {
	if now == nil {
		now = time.Now
	}
	return &Writer{out: out, now: now}
}

// ExecutionStarted counts a start, by trigger type.
func (w *Writer) ExecutionStarted(triggerType string) {
	w.write(ExecutionsStarted, "Count", 1, "TriggerType", triggerType)
}

// ExecutionFinished counts an end, by status.
func (w *Writer) ExecutionFinished(status string) {
	w.write(ExecutionsFinished, "Count", 1, "Status", status)
}

// StepDone records a step's duration in milliseconds, by step kind and
// outcome.
func (w *Writer) StepDone(kind string, failed bool, d time.Duration) {
	outcome := "succeeded"
	if failed {
		outcome = "failed"
	}
	w.write(StepDuration, "Milliseconds", float64(d.Microseconds())/1000, "StepKind", kind, "Outcome", outcome)
}

// CardAnswered records the time from a card sent to its answer, in
// seconds, by answer.
func (w *Writer) CardAnswered(answer string, waited time.Duration) {
	w.write(CardAnswerTime, "Seconds", waited.Seconds(), "Answer", answer)
}

// ApprovalDecided counts a decision and records its cycle time in
// seconds (CloudWatch keeps the distribution: its percentiles), both by
// outcome.
func (w *Writer) ApprovalDecided(outcome string, cycle time.Duration) {
	w.write(ApprovalDecisions, "Count", 1, "Outcome", outcome)
	w.write(ApprovalCycleTime, "Seconds", cycle.Seconds(), "Outcome", outcome)
}

type metricDef struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

type directive struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []metricDef `json:"Metrics"`
}

type metadata struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
}

// write writes one line: the metric's value and its dimensions (name,
// value pairs) as members of the root, and the metadata that declares
// them.
func (w *Writer) write(name, unit string, value float64, dims ...string) {
	line := map[string]any{name: value}
	set := make([]string, 0, len(dims)/2)
	for i := 0; i+1 < len(dims); i += 2 {
		set = append(set, dims[i])
		line[dims[i]] = dims[i+1]
	}
	line["_aws"] = metadata{
		Timestamp: w.now().UnixMilli(),
		CloudWatchMetrics: []directive{{
			Namespace: Namespace, Dimensions: [][]string{set}, Metrics: []metricDef{{Name: name, Unit: unit}},
		}},
	}
	b, err := json.Marshal(line)
	if err != nil {
		return // only strings and a float: cannot fail
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = w.out.Write(append(b, '\n')) // a metric that cannot be written is not the request's failure
}
