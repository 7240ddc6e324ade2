package telemetry_test

import (
	"context"
	"io"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/emf"
	"github.com/cardflow/cardflow/pkg/promstats"
	"github.com/cardflow/cardflow/pkg/telemetry"
)

// BenchmarkStep is what observing one step costs the engine: locally the
// Prometheus sink, on AWS an EMF line; no tracer configured.
func BenchmarkStep(b *testing.B) {
	ex := &cardflow.Execution{OrganizationID: "org-a", WorkflowID: "wf", WorkflowExecutionID: "ex",
		State: cardflow.ExecutionState{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	for _, c := range []struct {
		name string
		sink telemetry.Sink
	}{
		{"prometheus", promstats.New()},
		{"emf", emf.New(io.Discard, nil)},
	} {
		b.Run(c.name, func(b *testing.B) {
			o := telemetry.New(nil, c.sink)
			ctx := context.Background()
			for b.Loop() {
				_, done := o.StepStarted(ctx, ex, "lookup", "http")
				done("")
			}
		})
	}
}
