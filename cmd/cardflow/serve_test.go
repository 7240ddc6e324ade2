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

func TestServeBodyBudget(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
	}{
		{[]string{"--body-budget-mb", "0"}, ""},
		{[]string{"--body-budget-mb", "16MB"}, ""},
		{nil, "-1"},
	} {
		t.Setenv("CARDFLOW_BODY_BUDGET_MB", tc.env)
		err := serve(t.Context(), append(tc.args, "--data-dir", t.TempDir()), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--body-budget-mb (CARDFLOW_BODY_BUDGET_MB)") {
			t.Errorf("serve %v with CARDFLOW_BODY_BUDGET_MB=%q: got %v, want the budget refused", tc.args, tc.env, err)
		}
	}
}

func TestServeEvalSlots(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  string
	}{
		{[]string{"--eval-slots", "0"}, ""},
		{[]string{"--eval-slots", "two"}, ""},
		{nil, "-1"},
	} {
		t.Setenv("CARDFLOW_EVAL_SLOTS", tc.env)
		err := serve(t.Context(), append(tc.args, "--data-dir", t.TempDir()), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--eval-slots (CARDFLOW_EVAL_SLOTS)") {
			t.Errorf("serve %v with CARDFLOW_EVAL_SLOTS=%q: got %v, want the number refused", tc.args, tc.env, err)
		}
	}
}
