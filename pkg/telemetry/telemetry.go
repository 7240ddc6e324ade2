// Package telemetry is the cardflow.Observer of both modes: it counts what
// executions do into metrics sinks (Prometheus locally, CloudWatch EMF on
// AWS) and, given a tracer, makes one trace per execution, from its trigger
// through every step, whichever process runs the step.
package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Sink records the service's metrics.
type Sink interface {
	// ExecutionStarted counts an execution started by a trigger type.
	ExecutionStarted(triggerType string)
	// ExecutionFinished counts an execution that ended with status.
	ExecutionFinished(status string)
	// StepDone records how long a step of a kind ran, and whether it failed.
	StepDone(kind string, failed bool, d time.Duration)
	// CardAnswered records the time from a card sent to an answer that
	// counted.
	CardAnswered(answer string, waited time.Duration)
	// ApprovalDecided counts an approval decided with outcome, and records
	// the time from its opening to the decision.
	ApprovalDecided(outcome string, cycle time.Duration)
}

// Observer feeds sinks and a tracer.
type Observer struct {
	sinks  []Sink
	tracer trace.Tracer
	prop   propagation.TraceContext
	now    func() time.Time
}

var _ cardflow.Observer = (*Observer)(nil)

// New returns an observer over the sinks and the tracer provider tp
// (nil: no traces).
func New(tp trace.TracerProvider, sinks ...Sink) *Observer {
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	return &Observer{sinks: sinks, tracer: tp.Tracer("github.com/cardflow/cardflow"), now: time.Now}
}

// ExecutionStarting opens the execution's trace: a span "trigger" in the
// caller's trace if it has one, whose context e keeps for its steps.
func (o *Observer) ExecutionStarting(ctx context.Context, e *cardflow.Execution) context.Context {
	ctx, span := o.tracer.Start(ctx, "trigger "+e.WorkflowID, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(executionAttrs(e)...))
	if span.SpanContext().IsValid() {
		carrier := propagation.MapCarrier{}
		o.prop.Inject(ctx, carrier)
		e.State.TraceParent = carrier["traceparent"]
	}
	return ctx
}

// ExecutionStarted ends the trigger's span and counts the start.
func (o *Observer) ExecutionStarted(ctx context.Context, e *cardflow.Execution, err error) {
	span := trace.SpanFromContext(ctx)
	if err != nil {
		span.SetStatus(codes.Error, cardflow.ErrorMessage(err))
		span.End()
		return
	}
	span.End()
	for _, s := range o.sinks {
		s.ExecutionStarted(e.WorkflowTriggerType)
	}
}

// StepStarted opens the step's span in the execution's trace.
func (o *Observer) StepStarted(ctx context.Context, e *cardflow.Execution, stepID, kind string) (context.Context, func(string)) {
	start := o.now()
	ctx, span := o.tracer.Start(o.inTrace(ctx, e), "step "+stepID,
		trace.WithAttributes(append(executionAttrs(e), attribute.String("cardflow.step_id", stepID), attribute.String("cardflow.step_kind", kind))...))
	return ctx, func(failure string) {
		if failure != "" {
			span.SetStatus(codes.Error, failure)
		}
		span.End()
		for _, s := range o.sinks {
			s.StepDone(kind, failure != "", o.now().Sub(start))
		}
	}
}

// ExecutionEnded marks the end in the execution's trace and counts it.
func (o *Observer) ExecutionEnded(ctx context.Context, e *cardflow.Execution) {
	_, span := o.tracer.Start(o.inTrace(ctx, e), "ended "+e.Status, trace.WithAttributes(executionAttrs(e)...))
	span.End()
	for _, s := range o.sinks {
		s.ExecutionFinished(e.Status)
	}
}

// CardAnswered records the time to answer.
func (o *Observer) CardAnswered(_ context.Context, _ string, answer string, waited time.Duration) {
	if answer == "" {
		answer = "none"
	}
	for _, s := range o.sinks {
		s.CardAnswered(answer, waited)
	}
}

// ApprovalDecided counts the decision and records its cycle time.
func (o *Observer) ApprovalDecided(_ context.Context, _ string, outcome string, cycle time.Duration) {
	for _, s := range o.sinks {
		s.ApprovalDecided(outcome, cycle)
	}
}

// inTrace returns ctx with e's trace as the remote parent: the process
// that runs a step is seldom the one that took the trigger.
func (o *Observer) inTrace(ctx context.Context, e *cardflow.Execution) context.Context {
	if e.State.TraceParent == "" {
		return ctx
	}
	return o.prop.Extract(ctx, propagation.MapCarrier{"traceparent": e.State.TraceParent})
}

func executionAttrs(e *cardflow.Execution) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("cardflow.organization_id", e.OrganizationID),
		attribute.String("cardflow.workflow_id", e.WorkflowID),
		attribute.String("cardflow.workflow_execution_id", e.WorkflowExecutionID),
	}
}
