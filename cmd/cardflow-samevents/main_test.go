package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestUsage checks the answers that need no DynamoDB: help, and usage
// errors, which write nothing.
func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		status int
		stderr []string
	}{
		{[]string{"--help"}, 0, []string{"usage:", "cardflow-samevents [--endpoint URL]"}},
		{[]string{"--bogus"}, 2, []string{"-bogus", "usage:"}},
		{[]string{"extra"}, 2, []string{`takes no arguments, got ["extra"]`}},
		{[]string{"--endpoint", ""}, 2, []string{"needs DynamoDB Local: give --endpoint"}},
	} {
		var stdout, stderr bytes.Buffer
		if got := run(context.Background(), tc.args, &stdout, &stderr); got != tc.status {
			t.Errorf("%v: got status %d, want %d (stderr %q)", tc.args, got, tc.status, stderr.String())
		}
		if stdout.Len() > 0 {
			t.Errorf("%v: got stdout %q, want none", tc.args, stdout.String())
		}
		for _, want := range tc.stderr {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, stderr.String(), want)
			}
		}
	}
}
