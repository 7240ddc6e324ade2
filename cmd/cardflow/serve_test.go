package main

import (
	"io"
	"strings"
	"testing"
)

func TestServeMaxConns(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
	}{
		{[]string{"--max-conns", "0"}, ""},
		{[]string{"--max-conns", "many"}, ""},
		{nil, "-5"},
	} {
		t.Setenv("CARDFLOW_MAX_CONNS", tc.env)
		err := serve(t.Context(), append(tc.args, "--data-dir", t.TempDir()), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--max-conns (CARDFLOW_MAX_CONNS)") {
			t.Errorf("serve %v with CARDFLOW_MAX_CONNS=%q: got %v, want the limit refused", tc.args, tc.env, err)
		}
	}
}
