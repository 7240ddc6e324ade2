package localmode

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/cardflow/cardflow/pkg/promstats"
	"github.com/cardflow/cardflow/pkg/telemetry"
	"github.com/cardflow/cardflow/pkg/telemetry/otlp"
)

// MetricsPath is where the HTTP API's listener serves Prometheus metrics.
const MetricsPath = "/metrics"

// observer returns the stack's metrics and the observer that feeds them
// and cfg's tracer.
func (cfg Config) observer() (*promstats.Metrics, *telemetry.Observer) {
	m := promstats.New()
	return m, telemetry.New(cfg.Tracer, m)
}

// withMetrics serves metrics at MetricsPath beside api, without an API key
// but only to clients on this machine (the loopback addresses): the
// listener may be reachable from others (HOST=0.0.0.0). Anyone else gets
// the API's answer for a path it does not have.
func withMetrics(api, metrics http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == MetricsPath && r.Method == http.MethodGet && fromLoopback(r) {
			metrics.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

func fromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}

// withTracing sets cfg's tracer to an OTLP exporter when the environment
// names a collector (OTEL_EXPORTER_OTLP_ENDPOINT); the returned function
// sends the spans left and stops it.
func withTracing(ctx context.Context, cfg Config) (Config, func(), error) {
	if cfg.Tracer != nil || !otlp.Configured() {
		return cfg, func() {}, nil
	}
	tp, err := otlp.New(ctx)
	if err != nil {
		return cfg, nil, err
	}
	cfg.Tracer = tp
	cfg.Log.Info("tracing to OTLP collector")
	return cfg, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			cfg.Log.Warn("traces not sent", slog.Any("error", err))
		}
	}, nil
}
