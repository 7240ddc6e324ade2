// Package sapcaptest gives tests SAP CAP, SAP's own OData server, serving
// the purchase-order service of tools/sapcap over OData V4 and, through
// SAP's community adapter, V2; make node-deps installs it.
package sapcaptest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The service's paths and its mocked user (tools/sapcap/package.json).
const (
	ServiceV4 = "/odata/v4/purchase-order"
	ServiceV2 = "/odata/v2/purchase-order"
	User      = "cardflow"
	Password  = "sapcap-pa55"
)

// capInstall installs CAP into tools/sapcap.
const capInstall = "make node-deps"

// Start serves tools/sapcap on a free port and returns its address. With
// csrf the server checks x-csrf-token the way Gateway or the approuter
// does (tools/sapcap/server.js); without, it is CAP as it is. The server
// stops with the test. Without an install the test is skipped, or fails
// under CARDFLOW_STRICT_TESTS=1, as in make test.
func Start(t testing.TB, csrf bool) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "tools", "sapcap")
	bin := filepath.Join(dir, "node_modules", ".bin", "cds-serve")
	if _, err := os.Stat(bin); err != nil {
		why := "SAP CAP is not installed in tools/sapcap"
		if os.Getenv("CARDFLOW_STRICT_TESTS") == "1" {
			t.Fatalf("%s; run %q in the repository root", why, capInstall)
		}
		t.Skipf("%s; run %q in the repository root", why, capInstall)
	}
	cmd := exec.Command(bin, "--port", "0")
	cmd.Dir = dir
	check := "SAPCAP_CSRF=0"
	if csrf {
		check = "SAPCAP_CSRF=1"
	}
	// Mocked users and the in-memory database are CAP's development profile.
	cmd.Env = append(os.Environ(), check, "SAPCAP_HOST=127.0.0.1", "NODE_ENV=development")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	listening := regexp.MustCompile(`server listening on \{ url: '(http://[^']+)'`)
	found := make(chan string, 1)
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				// localhost, as CAP says: the V2 adapter writes its
				// __next links with it, whatever host was asked.
				found <- m[1]
			} else {
				log.WriteString(sc.Text() + "\n")
			}
		}
		close(found)
	}()
	// A generous bound on start-up, not an assertion on its speed.
	select {
	case u, ok := <-found:
		if !ok {
			t.Fatalf("cds-serve ended before it listened:\n%s", log.String())
		}
		return u
	case <-time.After(2 * time.Minute):
		t.Fatal("cds-serve did not listen within 2 minutes")
	}
	return ""
}

// repoRoot is the directory above the test's that holds go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
