// Package promstats keeps local mode's metrics in a Prometheus registry
// (github.com/prometheus/client_golang) and serves them at /metrics, with
// the Go runtime's and the process's own.
package promstats

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is the telemetry.Sink of local mode.
type Metrics struct {
	reg      *prometheus.Registry
	started  *prometheus.CounterVec
	finished *prometheus.CounterVec
	steps    *prometheus.HistogramVec
	answers  *prometheus.HistogramVec
	// decisions counts approvals by outcome; cycle is the time from an
	// approval's opening to its decision.
	decisions *prometheus.CounterVec
	cycle     *prometheus.HistogramVec
}

// New returns the metrics in a registry of their own.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cardflow_executions_started_total", Help: "Executions started, by trigger type.",
		}, []string{"trigger_type"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cardflow_executions_finished_total", Help: "Executions that ended, by final status.",
		}, []string{"status"}),
		steps: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "cardflow_step_duration_seconds", Help: "Time a step ran, by step kind and outcome (a wait counts until it opens).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"kind", "outcome"}),
		answers: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "cardflow_card_answer_seconds", Help: "Time from a card sent to an answer that counted, by answer.",
			Buckets: []float64{10, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 3 * 24 * 3600, 7 * 24 * 3600},
		}, []string{"answer"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cardflow_approval_decisions_total", Help: "Approvals decided, by outcome (approved, rejected, timed_out, overridden).",
		}, []string{"outcome"}),
		cycle: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "cardflow_approval_cycle_seconds", Help: "Time from an approval's opening to its decision, by outcome.",
			Buckets: []float64{60, 300, 900, 3600, 4 * 3600, 8 * 3600, 24 * 3600, 2 * 24 * 3600, 3 * 24 * 3600, 7 * 24 * 3600, 14 * 24 * 3600},
		}, []string{"outcome"}),
	}
	m.reg.MustRegister(m.started, m.finished, m.steps, m.answers, m.decisions, m.cycle,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ExecutionStarted implements telemetry.Sink.
func (m *Metrics) ExecutionStarted(triggerType string) { m.started.WithLabelValues(triggerType).Inc() }

// ExecutionFinished implements telemetry.Sink.
func (m *Metrics) ExecutionFinished(status string) { m.finished.WithLabelValues(status).Inc() }

// StepDone implements telemetry.Sink.
func (m *Metrics) StepDone(kind string, failed bool, d time.Duration) {
	outcome := "succeeded"
	if failed {
		outcome = "failed"
	}
	m.steps.WithLabelValues(kind, outcome).Observe(d.Seconds())
}

// CardAnswered implements telemetry.Sink.
func (m *Metrics) CardAnswered(answer string, waited time.Duration) {
	m.answers.WithLabelValues(answer).Observe(waited.Seconds())
}

// ApprovalDecided implements telemetry.Sink.
func (m *Metrics) ApprovalDecided(outcome string, cycle time.Duration) {
	m.decisions.WithLabelValues(outcome).Inc()
	m.cycle.WithLabelValues(outcome).Observe(cycle.Seconds())
}
