package localmode

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// guard bounds every wait of these tests: it only turns a hang into a
// failure, and no result depends on how fast anything is.
const guard = 30 * time.Second

// startAPI serves a handler with l's limits on a free loopback port and
// returns its address. The handler answers 204, or with /large 64 MB, more
// than socket buffers hold.
func startAPI(t *testing.T, l Limits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limited, srv := l.serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/large" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		chunk := make([]byte, 64<<10)
		for range 1024 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	go srv.Serve(limited)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, guard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

const request = "GET / HTTP/1.1\r\nHost: cardflow\r\n\r\n"

// roundTrip sends a request on c and reads the status line of the answer,
// waiting at most wait.
func roundTrip(c net.Conn, r *bufio.Reader, wait time.Duration) (string, error) {
	if _, err := io.WriteString(c, request); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	return resp.Status, nil
}

// TestSlowHeadersClosed sends headers a line at a time, without end: the
// server closes the connection once the header timeout has passed, though
// bytes keep arriving.
func TestSlowHeadersClosed(t *testing.T) {
	t.Parallel()
	addr := startAPI(t, Limits{ReadHeaderTimeout: 300 * time.Millisecond})
	c := dial(t, addr)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: cardflow\r\n"); err != nil {
			return
		}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := io.WriteString(c, "X-Slow: still coming\r\n"); err != nil {
					return
				}
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(guard))
	got, err := io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the connection was still open after %s of trickling headers", guard)
	}
	if strings.HasPrefix(string(got), "HTTP/1.1 2") {
		t.Errorf("got %q, want the connection closed without an answer", got)
	}
}

// TestSlowReaderClosed asks for a large answer on the only connection
// allowed and reads none of it: the write timeout closes that connection,
// and the next one is served.
func TestSlowReaderClosed(t *testing.T) {
	t.Parallel()
	addr := startAPI(t, Limits{MaxConns: 1, WriteTimeout: 300 * time.Millisecond, ReadHeaderTimeout: guard, IdleTimeout: guard})
	stalled := dial(t, addr)
	if _, err := io.WriteString(stalled, "GET /large HTTP/1.1\r\nHost: cardflow\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	next := dial(t, addr)
	if status, err := roundTrip(next, bufio.NewReader(next), guard); err != nil || status != "204 No Content" {
		t.Fatalf("the next connection: got %q, %v, want 204 once the stalled one is closed", status, err)
	}
}

// TestConnectionLimit holds the limit's connections open: the next
// connection gets no answer until one of them closes.
func TestConnectionLimit(t *testing.T) {
	t.Parallel()
	addr := startAPI(t, Limits{MaxConns: 2, ReadHeaderTimeout: guard, IdleTimeout: guard})
	var held []net.Conn
	for i := range 2 {
		c := dial(t, addr)
		// An answer proves the server accepted it; keep-alive keeps it.
		if status, err := roundTrip(c, bufio.NewReader(c), guard); err != nil || status != "204 No Content" {
			t.Fatalf("connection %d: got %q, %v, want 204", i+1, status, err)
		}
		held = append(held, c)
	}
	extra := dial(t, addr)
	r := bufio.NewReader(extra)
	status, err := roundTrip(extra, r, 300*time.Millisecond)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("third connection: got %q, %v, want no answer while two are open", status, err)
	}
	held[0].Close()
	extra.SetReadDeadline(time.Now().Add(guard))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("third connection after one closed: got %v, want an answer", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("third connection: got %d, want 204", resp.StatusCode)
	}
}
