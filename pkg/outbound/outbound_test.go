package outbound_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/outbound"
)

func TestCheck(t *testing.T) {
	none, err := outbound.ParseAllow("")
	if err != nil {
		t.Fatal(err)
	}
	some, err := outbound.ParseAllow("10.20.0.0/16, 127.0.0.1 fd12::/16,sap.internal.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr    string
		policy  *outbound.Policy
		wantWhy string // "" means allowed
	}{
		{"93.184.215.14", none, ""},
		{"2606:4700::6810:85e5", none, ""},
		{"127.0.0.1", none, "loopback"},
		{"127.9.9.9", none, "loopback"},
		{"::1", none, "loopback"},
		{"::ffff:127.0.0.1", none, "loopback"},
		{"0.0.0.0", none, "unspecified"},
		{"::", none, "unspecified"},
		{"169.254.169.254", none, "metadata"},
		{"fd00:ec2::254", none, "metadata"},
		{"100.100.100.200", none, "metadata"},
		{"169.254.10.1", none, "link-local"},
		{"fe80::1%eth0", none, "link-local"},
		{"10.1.2.3", none, "RFC 1918"},
		{"172.16.0.1", none, "RFC 1918"},
		{"172.31.255.255", none, "RFC 1918"},
		{"172.32.0.1", none, ""},
		{"192.168.1.1", none, "RFC 1918"},
		{"fd12:3456::1", none, "ULA"},
		{"100.64.0.1", none, "carrier-grade NAT"},
		{"64:ff9b::a9fe:a9fe", none, "the NAT64 form of 169.254.169.254, a cloud metadata address"},
		{"64:ff9b::7f00:1", none, "the NAT64 form of 127.0.0.1, a loopback address"},
		{"64:ff9b::5db8:d70e", none, ""}, // NAT64 of a public address
		{"64:ff9b:1::a00:1", none, "local-use NAT64"},
		// IPv4-compatible addresses are refused whatever they carry.
		{"::127.0.0.1", none, "IPv4-compatible"},
		{"::a9fe:a9fe", none, "IPv4-compatible"},
		{"::93.184.215.14", none, "IPv4-compatible"},
		{"::2", none, "IPv4-compatible"},
		{"::ffff:0:a9fe:a9fe", none, "the IPv4-translated form of 169.254.169.254, a cloud metadata"},
		{"::ffff:0:5db8:d70e", none, ""},
		{"2002:a9fe:a9fe::1", none, "the 6to4 form of 169.254.169.254, a cloud metadata"},
		{"2002:0a00:0001::", none, "the 6to4 form of 10.0.0.1, a private address"},
		{"2002:5db8:d70e::1", none, ""},
		// Teredo: the server in bits 32-63, the client inverted at the end.
		{"2001:0:0a00:1::5db8:d70e", none, "the Teredo server form of 10.0.0.1, a private address"},
		{"2001:0:5db8:d70e::80ff:fefe", none, "the Teredo client form of 127.0.1.1, a loopback address"},
		{"2001:0:5db8:d70e::a247:28f1", none, ""},
		{"224.0.0.1", none, "multicast"},
		{"10.20.3.4", some, ""},
		{"10.21.3.4", some, "RFC 1918"},
		{"127.0.0.1", some, ""},
		{"127.0.0.2", some, "loopback"},
		{"fd12:3456::1", some, ""},
		{"169.254.169.254", some, "metadata"},
	} {
		err := tc.policy.Check(netip.MustParseAddr(tc.addr))
		switch {
		case tc.wantWhy == "" && err != nil:
			t.Errorf("Check(%s): got %v, want allowed", tc.addr, err)
		case tc.wantWhy != "" && (err == nil || !strings.Contains(err.Error(), tc.wantWhy)):
			t.Errorf("Check(%s): got %v, want a refusal naming %q", tc.addr, err, tc.wantWhy)
		}
	}
	if got, want := some.AllowsHost("SAP.internal.example."), true; got != want {
		t.Errorf("AllowsHost: got %v, want %v", got, want)
	}
}

func TestParseAllowErrors(t *testing.T) {
	for _, in := range []string{"10.0.0.0/33", "http://x", "a..b", "sap.example/path"} {
		if _, err := outbound.ParseAllow(in); err == nil {
			t.Errorf("ParseAllow(%q): got no error", in)
		}
	}
}

func newClient(t *testing.T, allow string, cfg outbound.Config) *http.Client {
	t.Helper()
	p, err := outbound.ParseAllow(allow)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allow = p
	c, err := outbound.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func get(c *http.Client, url string) (int, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestDial(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer ok.Close()
	port := ok.Listener.Addr().String()
	port = port[strings.LastIndex(port, ":"):]
	// redirect points at the loopback address by number.
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, ok.URL, http.StatusFound)
	}))
	defer redirect.Close()
	rport := redirect.Listener.Addr().String()
	rport = rport[strings.LastIndex(rport, ":"):]

	for _, tc := range []struct {
		name, allow, url string
		wantRefused      bool
	}{
		{"loopback refused", "", ok.URL, true},
		{"IPv4-compatible loopback refused", "", "http://[::127.0.0.1]" + port, true},
		{"IPv4-compatible metadata refused", "", "http://[::a9fe:a9fe]" + port, true},
		{"NAT64 loopback refused", "", "http://[64:ff9b::127.0.0.1]" + port, true},
		{"name resolving to loopback refused", "", "http://localhost" + port, true},
		{"loopback allow-listed by address", "127.0.0.1", ok.URL, false},
		{"loopback allow-listed by CIDR", "127.0.0.0/8", "http://localhost" + port, false},
		{"host allow-listed by name", "localhost", "http://localhost" + port, false},
		{"redirect to a refused address", "localhost", "http://localhost" + rport, true},
		{"redirect to an allowed address", "127.0.0.1", redirect.URL, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.allow, outbound.Config{})
			status, err := get(c, tc.url)
			var refused *outbound.RefusedError
			if got := errors.As(err, &refused); got != tc.wantRefused {
				t.Fatalf("got status %d, error %v; want refused %v", status, err, tc.wantRefused)
			}
			if tc.wantRefused && !strings.Contains(err.Error(), "CARDFLOW_OUTBOUND_ALLOW") {
				t.Errorf("got %q, want it to name CARDFLOW_OUTBOUND_ALLOW", err)
			}
			if !tc.wantRefused && status != http.StatusNoContent {
				t.Errorf("got status %d, want 204", status)
			}
		})
	}
}

// flaky answers the first len(answers) calls with those statuses and
// Retry-After values, then 200.
type flaky struct {
	mu      sync.Mutex
	answers [][2]string
	calls   []string
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, r.Method+" "+string(body))
	f.mu.Unlock()
	if n < len(f.answers) {
		a := f.answers[n]
		if a[0] == "drop" {
			// Close the connection without an answer.
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		if a[1] != "" {
			w.Header().Set("Retry-After", a[1])
		}
		code := map[string]int{"429": 429, "500": 500, "502": 502, "503": 503}[a[0]]
		w.WriteHeader(code)
		return
	}
	w.Write([]byte("done"))
}

func TestRetry(t *testing.T) {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		method     string
		key        bool
		answers    [][2]string
		wantStatus int
		wantCalls  int
		wantWaits  []time.Duration
	}{
		{"GET after 503 with Retry-After seconds", "GET", false, [][2]string{{"503", "2"}}, 200, 2, []time.Duration{2 * time.Second}},
		{"GET after 429 with Retry-After date", "GET", false, [][2]string{{"429", now.Add(5 * time.Second).Format(http.TimeFormat)}}, 200, 2, []time.Duration{5 * time.Second}},
		{"GET after a dropped connection and 502 backs off", "GET", false, [][2]string{{"drop", ""}, {"502", ""}}, 200, 3, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{"GET gives up after the last attempt", "GET", false, [][2]string{{"503", ""}, {"503", ""}, {"503", ""}}, 503, 3, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{"Retry-After beyond the longest wait ends the retries", "GET", false, [][2]string{{"503", "3600"}}, 503, 1, nil},
		{"500 is not retried", "GET", false, [][2]string{{"500", ""}}, 500, 1, nil},
		{"POST without a key is not retried", "POST", false, [][2]string{{"503", "1"}}, 503, 1, nil},
		{"POST with a key is retried with its body", "POST", true, [][2]string{{"503", "1"}}, 200, 2, []time.Duration{time.Second}},
		{"PUT is retried", "PUT", false, [][2]string{{"429", "1"}}, 200, 2, []time.Duration{time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &flaky{answers: tc.answers}
			srv := httptest.NewServer(f)
			defer srv.Close()
			var waits []time.Duration
			c := newClient(t, "127.0.0.1", outbound.Config{
				Backoff: 100 * time.Millisecond, MaxWait: time.Minute, Now: func() time.Time { return now },
				Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil },
			})
			req, _ := http.NewRequest(tc.method, srv.URL, bytes.NewReader([]byte(`{"n":1}`)))
			if tc.key {
				req.Header.Set(outbound.IdempotencyKeyHeader, outbound.IdempotencyKey("ex", "step", 1))
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("got status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if len(f.calls) != tc.wantCalls {
				t.Errorf("got calls %q, want %d", f.calls, tc.wantCalls)
			}
			for _, c := range f.calls {
				if want := tc.method + ` {"n":1}`; c != want {
					t.Errorf("got call %q, want %q", c, want)
				}
			}
			if len(waits) != len(tc.wantWaits) || len(waits) > 0 && !equal(waits, tc.wantWaits) {
				t.Errorf("got waits %v, want %v", waits, tc.wantWaits)
			}
		})
	}
}

func equal(a, b []time.Duration) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReadBody(t *testing.T) {
	for _, tc := range []struct {
		size    int
		wantErr bool
	}{{1024, false}, {1025, true}} {
		b, err := outbound.ReadBody(strings.NewReader(strings.Repeat("x", tc.size)), 1024)
		var tl *outbound.TooLargeError
		if got := errors.As(err, &tl); got != tc.wantErr {
			t.Errorf("size %d: got %d bytes, error %v; want error %v", tc.size, len(b), err, tc.wantErr)
		}
		if tc.wantErr && !strings.Contains(err.Error(), "larger than 1 KB") {
			t.Errorf("size %d: got %q, want it to say the limit", tc.size, err)
		}
	}
}

func TestIdempotencyKey(t *testing.T) {
	a := outbound.IdempotencyKey("ex1", "call", 3)
	for _, tc := range []struct {
		other string
		same  bool
	}{
		{outbound.IdempotencyKey("ex1", "call", 3), true},
		{outbound.IdempotencyKey("ex1", "call", 4), false},
		{outbound.IdempotencyKey("ex1", "call2", 3), false},
		{outbound.IdempotencyKey("ex2", "call", 3), false},
	} {
		if got := a == tc.other; got != tc.same {
			t.Errorf("%s vs %s: got same %v, want %v", a, tc.other, got, tc.same)
		}
	}
}

func TestFromEnv(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	for _, tc := range []struct {
		allow       string
		wantErr     bool
		wantRefused bool
	}{
		{"", false, true},
		{"127.0.0.0/8", false, false},
		{"127.0.0.1/99", true, false},
	} {
		t.Setenv(outbound.AllowEnv, tc.allow)
		c, err := outbound.FromEnv()
		if (err != nil) != tc.wantErr {
			t.Fatalf("%s=%q: got error %v, want one: %v", outbound.AllowEnv, tc.allow, err, tc.wantErr)
		}
		if err != nil {
			continue
		}
		_, err = get(c, srv.URL)
		var refused *outbound.RefusedError
		if got := errors.As(err, &refused); got != tc.wantRefused {
			t.Errorf("%s=%q: got %v, want refused %v", outbound.AllowEnv, tc.allow, err, tc.wantRefused)
		}
	}
}

// TestReasonNamesNoAddress: the reason of a failed call names no address
// a name resolved to, no resolver and no local address, whatever the
// error; the host asked for, times and other words stay.
func TestReasonNamesNoAddress(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"dns not found", &url.Error{Op: "Get", URL: "https://sap.example/x", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "sap.example", Server: "10.0.0.2:53", IsNotFound: true}}},
			"the name sap.example was not found in DNS"},
		{"dns failure", &net.DNSError{Err: "server misbehaving", Name: "sap.example", Server: "[fd00::2]:53"},
			"the name sap.example could not be looked up in DNS"},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 443},
			Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, "the connection was refused: nothing listens there"},
		{"unreachable", &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 443},
			Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, "the host cannot be reached"},
		{"unknown text", errors.New("read tcp 10.0.0.9:40000->10.1.2.3:443 and [fe80::1%eth0]:80 and 2001:db8::7 at 02:58:29"),
			"read tcp an address->an address and an address and an address at 02:58:29"},
		{"too large", &outbound.TooLargeError{Limit: 1 << 20}, "the response is larger than 1024 KB, the most a step reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outbound.Reason(tc.err); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRefusalNamesTheHostAsked: a name that resolves to a refused address
// is refused by the name, not by the address it resolved to.
func TestRefusalNamesTheHostAsked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	c, err := outbound.New(outbound.Config{MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	_, err = c.Get("http://localhost:" + port + "/metrics")
	if got, want := outbound.Reason(err), "refused to connect to localhost: it resolves to a loopback address"; !strings.HasPrefix(got, want) {
		t.Errorf("got %q, want it to start with %q", got, want)
	}
}
