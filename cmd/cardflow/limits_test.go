package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestLimitsCommand sets, shows and clears an organization's limits in a
// data directory no server holds.
func TestLimitsCommand(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"limits", "show", "acme"}, []string{"acme has no limits of its own"}},
		{[]string{"limits", "set", "acme", "--rate", "5", "--max-open", "20"}, []string{"rate         5 requests/s", "burst        default", "max open     20 executions"}},
		{[]string{"limits", "show", "acme"}, []string{"organization acme", "rate         5 requests/s"}},
		{[]string{"limits", "clear", "acme"}, []string{"acme has no limits of its own now"}},
		{[]string{"limits", "show", "acme"}, []string{"acme has no limits of its own"}},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(t.Context(), append(c.args, "--data-dir", dataDir), &stdout, &stderr); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(c.args, " "), err, &stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("%s: got %q, want %q in it", strings.Join(c.args, " "), &stdout, w)
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"limits", "set", "acme", "--rate", "-1", "--data-dir", dataDir}, &stdout, &stderr); err == nil {
		t.Errorf("negative rate: got no error")
	}
}
