// Package console serves the browser console: a page
// and its bundle, built from console/ by `make console` and embedded here,
// so the binary (and the console Lambda function) carries them. The page
// talks only to the public /v1 API, with the key the person enters.
package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed dist
var dist embed.FS

// Prefix is where the console is served.
const Prefix = "/console/"

// ContentSecurityPolicy lets the page load only its own script and styles
// and talk only to its own origin: no inline script, nothing from another
// host (card images may come from https hosts, as in Teams).
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

type asset struct {
	body, gzipped []byte
	etag, ctype   string
}

// Handler serves the console under Prefix; a request for Prefix without
// its slash is redirected to it.
type Handler struct {
	assets map[string]asset
}

// New returns the handler of the embedded console; it fails when the
// binary was built without the console's bundle.
func New() (*Handler, error) {
	h := &Handler{assets: map[string]asset{}}
	err := fs.WalkDir(dist, "dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := dist.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		a := asset{body: body, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: mime.TypeByExtension(path.Ext(p))}
		// Compressed once here, so every load sends the smaller body.
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(body) // into memory: Close reports any error
		if err := zw.Close(); err != nil {
			return err
		}
		if buf.Len() < len(body) {
			a.gzipped = buf.Bytes()
		}
		h.assets[strings.TrimPrefix(p, "dist/")] = a
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, ok := h.assets["index.html"]; !ok {
		return nil, errors.New("console: the bundle has no index.html; run make console")
	}
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, Prefix)
	if name == "" {
		name = "index.html"
	}
	hd := w.Header()
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	if r.URL.Path == strings.TrimSuffix(Prefix, "/") {
		// Relative, so that it keeps a path prefix such as API Gateway's stage.
		hd.Set("Location", "console/")
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	a, ok := h.assets[name]
	if !ok || !strings.HasPrefix(r.URL.Path, Prefix) {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// Revalidated on each load (the names carry no hash): an unchanged
	// asset costs a 304.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", a.etag)
	hd.Set("Vary", "Accept-Encoding")
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", a.ctype)
	body := a.body
	if a.gzipped != nil && acceptsGzip(r) {
		hd.Set("Content-Encoding", "gzip")
		body = a.gzipped
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// Mount returns a handler that serves the console under Prefix and
// everything else with api.
func Mount(c *Handler, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == strings.TrimSuffix(Prefix, "/") || strings.HasPrefix(r.URL.Path, Prefix) {
			c.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}
