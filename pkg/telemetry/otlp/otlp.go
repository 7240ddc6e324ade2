// Package otlp exports local mode's traces with OpenTelemetry's OTLP over
// HTTP, when OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) names a collector. It is a package of
// its own so that the Lambda functions, which trace with X-Ray, do not
// link the SDK.
package otlp

import (
	"context"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Configured reports whether the environment names an OTLP endpoint.
func Configured() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Provider is a tracer provider that batches spans to the collector.
// Shutdown sends what is left.
type Provider struct {
	*sdktrace.TracerProvider
}

var _ trace.TracerProvider = Provider{}

// New returns the provider of the collector the environment names: the
// exporter reads the OTEL_EXPORTER_OTLP_* settings itself (endpoint,
// headers, timeout). Nothing connects until the first export.
func New(ctx context.Context) (Provider, error) {
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return Provider{}, err
	}
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("cardflow"))
	return Provider{sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))}, nil
}
