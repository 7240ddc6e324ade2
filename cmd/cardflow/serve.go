package main

import (
	"context"
	"io"

	"github.com/cardflow/cardflow/pkg/localmode"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, dataDir := newFlags("serve", stderr)
	addr := fs.String("addr", ":"+envOr("PORT", "3000"), "HTTP listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return localmode.Run(ctx, localmode.Config{Addr: *addr, DataDir: *dataDir, Out: stdout, Log: newLogger(stderr)})
}
