package console_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/console"
)

func TestHandler(t *testing.T) {
	ui, err := console.New()
	if err != nil {
		t.Fatal(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "api") })
	h := console.Mount(ui, api)
	for _, c := range []struct {
		name, method, path, encoding string
		status                       int
		ctype, location, body        string
	}{
		{"the page", "GET", "/console/", "", 200, "text/html; charset=utf-8", "", "<title>cardflow console</title>"},
		{"the page by name", "GET", "/console/index.html", "", 200, "text/html; charset=utf-8", "", `src="app.js"`},
		{"the bundle, compressed", "GET", "/console/app.js", "gzip, br", 200, "text/javascript; charset=utf-8", "", "AdaptiveCard"},
		{"the stylesheet", "GET", "/console/app.css", "", 200, "text/css; charset=utf-8", "", ".graph"},
		{"without the slash", "GET", "/console", "", 301, "", "console/", ""},
		{"no such asset", "GET", "/console/nope.js", "", 404, "", "", ""},
		{"a write", "POST", "/console/", "", 405, "", "", ""},
		{"the API beside it", "GET", "/v1/workflows/getOrganizationWorkflows", "", 200, "", "", "api"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, c.path, nil)
			if c.encoding != "" {
				req.Header.Set("Accept-Encoding", c.encoding)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.status {
				t.Fatalf("got %d, want %d", rec.Code, c.status)
			}
			if c.ctype != "" && rec.Header().Get("Content-Type") != c.ctype {
				t.Errorf("got Content-Type %q, want %q", rec.Header().Get("Content-Type"), c.ctype)
			}
			if got := rec.Header().Get("Location"); got != c.location {
				t.Errorf("got Location %q, want %q", got, c.location)
			}
			if strings.HasPrefix(c.path, "/console") && rec.Header().Get("Content-Security-Policy") != console.ContentSecurityPolicy {
				t.Errorf("got Content-Security-Policy %q, want the console's", rec.Header().Get("Content-Security-Policy"))
			}
			var body io.Reader = rec.Body
			if rec.Header().Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(rec.Body)
				if err != nil {
					t.Fatal(err)
				}
				body = zr
			} else if c.encoding != "" {
				t.Errorf("got no gzip for Accept-Encoding %q", c.encoding)
			}
			b, _ := io.ReadAll(body)
			if !strings.Contains(string(b), c.body) {
				t.Errorf("got a body without %q", c.body)
			}
		})
	}
}

// An unchanged asset costs a 304 on the next load.
func TestHandlerRevalidates(t *testing.T) {
	ui, err := console.New()
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	ui.ServeHTTP(rec, httptest.NewRequest("GET", "/console/app.js", nil))
	etag := rec.Header().Get("ETag")
	req := httptest.NewRequest("GET", "/console/app.js", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	ui.ServeHTTP(rec, req)
	if etag == "" || rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("got %d with %d bytes for ETag %q, want 304 and no body", rec.Code, rec.Body.Len(), etag)
	}
}

// The page may load nothing from elsewhere and run no inline script.
func TestContentSecurityPolicy(t *testing.T) {
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(console.ContentSecurityPolicy, want) {
			t.Errorf("got %q, want it to hold %q", console.ContentSecurityPolicy, want)
		}
	}
	if strings.Contains(console.ContentSecurityPolicy, "unsafe-") {
		t.Errorf("got %q, want no unsafe- source", console.ContentSecurityPolicy)
	}
}
