package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/cardflow/cardflow/pkg/localmode"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dataDir := newFlags("serve", stderr)
	addr := fs.String("addr", ":"+envOr("PORT", "3000"), "HTTP listen address")
	early := fs.String("early-resume", envOr("CARDFLOW_EARLY_RESUME", "10m"), "how long a resume waits for its execution to reach the wait")
	pprofAddr := fs.String("pprof", "", "serve runtime profiles (net/http/pprof) on this loopback address, e.g. 127.0.0.1:6060")
	if err := fs.Parse(args); err != nil {
		return err
	}
	d, err := time.ParseDuration(*early)
	if err != nil || d <= 0 {
		return fmt.Errorf("--early-resume (CARDFLOW_EARLY_RESUME) %q is not a positive duration such as 10m", *early)
	}
	log := newLogger(stderr)
	if *pprofAddr != "" {
		if err := startPprof(ctx, *pprofAddr, log); err != nil {
			return err
		}
	}
	return localmode.Run(ctx, localmode.Config{Addr: *addr, DataDir: *dataDir, Out: stdout, Log: log, EarlyResume: d})
}
