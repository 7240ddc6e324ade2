package outbound

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
)

// landing records the headers of the requests that reach /landing.
type landing struct {
	mu   sync.Mutex
	last http.Header
}

func (l *landing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.last = r.Header.Clone()
	l.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (l *landing) take() http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.last
	l.last = nil
	return h
}

// sent are the headers of the first request: what an http step with
// auth.type header, a cookie and a templated header sends.
var sent = map[string]string{
	"Authorization":   "Bearer bearer-secret",
	"X-Api-Key":       "header-secret",
	"Cookie":          "session=cookie-secret",
	"X-Trace":         "templated-value",
	"Accept":          "application/json",
	"Accept-Language": "de",
	"User-Agent":      "cardflow-test",
	"Idempotency-Key": "cf-0123",
}

// TestRedirectHeaders follows real redirects between servers: a redirect
// within the origin keeps every header, one that leaves it (another port,
// another host name, https to http) keeps only the descriptive ones, and
// so does every hop after it, even one back to the origin.
func TestRedirectHeaders(t *testing.T) {
	rec := &landing{}
	target := httptest.NewServer(http.NewServeMux())
	defer target.Close()
	origin := httptest.NewServer(http.NewServeMux())
	defer origin.Close()
	secure := httptest.NewTLSServer(http.NewServeMux())
	defer secure.Close()
	originURL, _ := url.Parse(origin.URL)
	byName := "http://localhost:" + originURL.Port()

	targetMux := target.Config.Handler.(*http.ServeMux)
	targetMux.Handle("/landing", rec)
	targetMux.HandleFunc("/back", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, origin.URL+"/landing", http.StatusFound)
	})
	originMux := origin.Config.Handler.(*http.ServeMux)
	originMux.Handle("/landing", rec)
	originMux.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/landing", http.StatusFound)
	})
	originMux.HandleFunc("/other-port", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/landing", http.StatusFound)
	})
	originMux.HandleFunc("/other-host", func(w http.ResponseWriter, r *http.Request) {
		// The same server under another name: only the host differs.
		http.Redirect(w, r, byName+"/landing", http.StatusTemporaryRedirect)
	})
	originMux.HandleFunc("/away-and-back", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/back", http.StatusFound)
	})
	secure.Config.Handler.(*http.ServeMux).HandleFunc("/downgrade", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, origin.URL+"/landing", http.StatusFound)
	})

	allow, err := ParseAllow("127.0.0.1 localhost")
	if err != nil {
		t.Fatal(err)
	}
	client, err := New(Config{Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	// Trust the TLS server's certificate.
	client.Transport.(*retrying).next.(*http.Transport).TLSClientConfig = secure.Client().Transport.(*http.Transport).TLSClientConfig.Clone()

	kept := []string{"Accept", "Accept-Language", "Idempotency-Key", "User-Agent"}
	all := append([]string{"Authorization", "Cookie", "X-Api-Key", "X-Trace"}, kept...)
	sort.Strings(all)
	for _, tc := range []struct {
		name, url string
		want      []string
	}{
		{"same origin", origin.URL + "/same", all},
		{"another port", origin.URL + "/other-port", kept},
		{"another host name", origin.URL + "/other-host", kept},
		{"away and back to the origin", origin.URL + "/away-and-back", kept},
		{"https to http", secure.URL + "/downgrade", kept},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range sent {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := rec.take()
			if got == nil {
				t.Fatalf("got status %d and no request at /landing", resp.StatusCode)
			}
			var names []string
			for k := range sent {
				if v := got.Get(k); v != "" {
					if v != sent[k] {
						t.Errorf("%s: got %q, want %q", k, v, sent[k])
					}
					names = append(names, k)
				}
			}
			sort.Strings(names)
			if strings.Join(names, ",") != strings.Join(tc.want, ",") {
				t.Errorf("headers that arrived: got %v, want %v", names, tc.want)
			}
			if tc.name != "same origin" && got.Get("Referer") != "" {
				t.Errorf("got Referer %q, want none after leaving the origin", got.Get("Referer"))
			}
		})
	}
}

// TestSameOrigin covers what two servers cannot: a downgrade to http on
// the same port.
func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"https://api.example.com/a", "https://API.example.com/b", true},
		{"https://api.example.com/a", "https://api.example.com:443/b", true},
		{"http://api.example.com:8080/a", "https://api.example.com:8080/b", true},
		{"https://api.example.com:8443/a", "http://api.example.com:8443/b", false},
		{"https://api.example.com/a", "http://api.example.com/b", false},
		{"http://api.example.com/a", "https://api.example.com/b", false},
		{"https://api.example.com/a", "https://api.example.com:8443/b", false},
		{"https://api.example.com/a", "https://evil.example.com/b", false},
		{"https://example.com/a", "https://api.example.com/b", false},
	} {
		from, _ := url.Parse(tc.from)
		to, _ := url.Parse(tc.to)
		if got := sameOrigin(from, to); got != tc.want {
			t.Errorf("sameOrigin(%s, %s): got %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}
