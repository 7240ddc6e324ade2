package localmode

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
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

// MetricsTokenFile holds, in the data directory, the bearer token that
// /metrics asks for.
const MetricsTokenFile = "metrics-token"

// withMetrics serves metrics at MetricsPath beside api, without an API key
// but only to clients on this machine (the loopback addresses) that
// present the metrics token: the listener may be reachable from others
// (HOST=0.0.0.0), and a workflow's http step, when the deployment lets
// steps call loopback, is a client on this machine too; it has no way to
// the token, which lives in a file of the data directory and in no store.
// Anyone else gets the API's answer for a path it does not have.
func withMetrics(api, metrics http.Handler, token string) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == MetricsPath && r.Method == http.MethodGet && fromLoopback(r) {
			if token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) == 1 {
				metrics.ServeHTTP(w, r)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="cardflow metrics"`)
			http.Error(w, "metrics need the bearer token of the file "+MetricsTokenFile+" in the data directory", http.StatusUnauthorized)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// metricsToken returns the token of dir's metrics token file, and makes
// the file (mode 0600) with a new random token (128 bits) when there is
// none, or one too short to be a secret.
func metricsToken(dir string) (string, error) {
	path := filepath.Join(dir, MetricsTokenFile)
	b, err := os.ReadFile(path)
	if err == nil && len(bytes.TrimSpace(b)) >= 16 {
		return string(bytes.TrimSpace(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("metrics token: %w", err)
	}
	token := rand.Text()
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("metrics token: %w", err)
	}
	return token, nil
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
