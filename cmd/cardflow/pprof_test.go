package main

import (
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestPprofLoopbackOnly(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, addr := range []string{":6060", "0.0.0.0:6060", "192.0.2.1:6060", "example.com:6060", "6060"} {
		if err := startPprof(t.Context(), addr, false, log); err == nil {
			t.Errorf("startPprof(%q): got no error, want a refusal", addr)
		}
	}
	var logged strings.Builder
	if err := startPprof(t.Context(), "127.0.0.1:0", true, slog.New(slog.NewTextHandler(&logged, nil))); err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(logged.String(), "addr=")
	url := strings.Fields(rest)[0]
	resp, err := http.Get(url + "goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "goroutine profile") {
		t.Errorf("got %d %.100s, want the goroutine profile", resp.StatusCode, b)
	}

	// With contention on, a goroutine blocked on a channel shows in the
	// block profile.
	t.Cleanup(func() {
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(0)
	})
	ch := make(chan struct{})
	go func() {
		time.Sleep(5 * time.Millisecond)
		close(ch)
	}()
	<-ch
	resp, err = http.Get(url + "block?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "runtime.chanrecv1") {
		t.Errorf("got %d %.300s, want a block profile with the channel receive", resp.StatusCode, b)
	}
}
