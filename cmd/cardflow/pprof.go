package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// Sampling of the contention profiles: one blocking event per 10 µs spent
// blocked, and one in 10 lock contentions; enough to rank where requests
// wait under load without slowing them noticeably.
const (
	blockProfileRate     = 10_000
	mutexProfileFraction = 10
)

// startPprof serves the runtime profiles on addr, which must be a loopback
// address: profiles reveal request data in memory and must not reach the
// network. With contention it also records the block and mutex profiles,
// which cost a little on every blocking event, so they are off by default.
// It stops when ctx is done.
func startPprof(ctx context.Context, addr string, contention bool, log *slog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--pprof %q: want a loopback host and port such as 127.0.0.1:6060", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--pprof %q: profiles are served on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--pprof: %w", err)
	}
	if contention {
		runtime.SetBlockProfileRate(blockProfileRate)
		runtime.SetMutexProfileFraction(mutexProfileFraction)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }() // ends with ErrServerClosed when ctx does
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	log.Info("profiles served", slog.String("addr", "http://"+ln.Addr().String()+"/debug/pprof/"))
	return nil
}
