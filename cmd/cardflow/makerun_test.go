package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/testenv"
)

// TestMakeRunInterrupt runs `make run` on a terminal, as a person does, and
// presses Ctrl-C: the server stops cleanly and make exits 0, saying
// nothing about an error.
func TestMakeRunInterrupt(t *testing.T) {
	testenv.Short(t, "make run and a terminal")
	for _, tool := range []string{"make", "bash", "script"} {
		testenv.Command(t, tool)
	}
	port := freePort(t)
	// script gives make a terminal; what is written to its input is typed
	// on that terminal, so 0x03 is Ctrl-C.
	cmd := exec.Command("script", "--quiet", "--return", "--flush", "--command", "make --no-print-directory run", "/dev/null")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port), "CARDFLOW_DATA_DIR="+t.TempDir())
	keyboard, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer keyboard.Close()

	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/v1/workflows/getOrganizationWorkflows", port))
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case err := <-done:
			t.Fatalf("make run ended before it served: %v\n%s", err, &out)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("make run did not serve within 2 minutes:\n%s", &out)
		}
	}
	if _, err := keyboard.Write([]byte{0x03}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("make run after Ctrl-C: got %v, want exit status 0\n%s", err, &out)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("make run did not stop within 30 seconds of Ctrl-C:\n%s", &out)
	}
	got := out.String()
	if !strings.Contains(got, "cardflow stopped") || strings.Contains(got, "make: ***") {
		t.Errorf("make run output: got\n%s\nwant a clean stop and no word from make about an error", got)
	}
}
