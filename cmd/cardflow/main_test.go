package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
)

// binary builds the cardflow command once per test run.
func binary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cardflow")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// server is a running `cardflow serve` process.
type server struct {
	cmd  *exec.Cmd
	base string
	out  string // file that receives the process's stdout
	log  string // file that receives its stderr
}

// stdout returns what the server printed so far.
func (s *server) stdout(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(s.out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stderr returns what the server logged so far.
func (s *server) stderr(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(s.log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func startServer(t *testing.T, bin, dataDir string, port int) *server {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "CARDFLOW_DATA_DIR="+dataDir, fmt.Sprintf("PORT=%d", port))
	dir := t.TempDir()
	s := &server{cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d", port), out: filepath.Join(dir, "stdout"), log: filepath.Join(dir, "stderr")}
	out, err := os.Create(s.out)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	logFile, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = out, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(s.log)
			t.Logf("server log:\n%s", b)
		}
	})
	testenv.WaitFor(t, "the server to start", func() bool {
		resp, err := http.Get(s.base + "/v1/workflows/getOrganizationWorkflows")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return s
}

// stop interrupts the server and waits for a clean exit.
func (s *server) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGINT)
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("server exit after SIGINT: %v", err)
	}
}

func cli(t *testing.T, bin, dataDir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "CARDFLOW_DATA_DIR="+dataDir)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%v: %s", err, errOut.String())
	}
	return out.String(), err
}

// get returns the status and, for lists, the count of a GET request.
func get(t *testing.T, url, key string) (status int, count float64) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Count float64 }
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Count
}

func getStatus(t *testing.T, url, key string) int {
	status, _ := get(t, url, key)
	return status
}

func count(t *testing.T, url, key string) float64 {
	_, n := get(t, url, key)
	return n
}

// TestLocalMode runs the real command: first start with demo data, key
// management while the server runs, a clean shutdown, and a restart that
// keeps everything and adds nothing. TestReadme runs the README's examples.
func TestLocalMode(t *testing.T) {
	bin := binary(t)
	dataDir := filepath.Join(t.TempDir(), ".cardflow")
	port := freePort(t)
	srv := startServer(t, bin, dataDir, port)

	keyFile, err := os.ReadFile(filepath.Join(dataDir, "demo-key"))
	if err != nil {
		t.Fatal(err)
	}
	demoKey := strings.TrimSpace(string(keyFile))
	if !strings.Contains(srv.stdout(t), demoKey) {
		t.Errorf("first start did not print the demo key")
	}
	// The demo key has every scope: without HOST or --addr only this
	// machine reaches the server.
	if got, want := srv.stderr(t), fmt.Sprintf("addr=127.0.0.1:%d ", port); !strings.Contains(got, want) {
		t.Errorf("server log: got %q, want it listening on %s", got, want)
	}
	env, err := os.ReadFile(filepath.Join(dataDir, "demo.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nexport CARDFLOW_API_KEY=" + demoKey + "\n", "\nexport CARDFLOW_URL=" + srv.base + "\n"} {
		if !strings.Contains(string(env), want) {
			t.Errorf("demo.env: got %q, want a line %q", env, strings.TrimSpace(want))
		}
	}
	listWorkflows := srv.base + "/v1/workflows/getOrganizationWorkflows?limit=30"
	listCards := srv.base + "/v1/adaptive-cards/getOrganizationCards?limit=30"
	if got := count(t, listWorkflows, demoKey); got < 6 {
		t.Errorf("got %v sample workflow versions, want at least 6", got)
	}
	if got := count(t, listCards, demoKey); got < 3 {
		t.Errorf("got %v sample card versions, want at least 3", got)
	}

	t.Run("keys while serving", func(t *testing.T) {
		key, err := cli(t, bin, dataDir, "keys", "create", "--org", "acme", "--workspace", "finance", "--scopes", "read")
		if err != nil {
			t.Fatal(err)
		}
		key = strings.TrimSpace(key)
		if got := getStatus(t, listWorkflows, key); got != 200 {
			t.Fatalf("new key: got %d, want 200", got)
		}
		list, err := cli(t, bin, dataDir, "keys", "list", "--org", "acme")
		if err != nil {
			t.Fatal(err)
		}
		keyID := strings.Split(key, "_")[1]
		if !strings.Contains(list, keyID) || strings.Contains(list, key) {
			t.Errorf("keys list: got %q, want the key id %s and never the key", list, keyID)
		}
		if _, err := cli(t, bin, dataDir, "keys", "revoke", keyID); err != nil {
			t.Fatal(err)
		}
		if got := getStatus(t, listWorkflows, key); got != 401 {
			t.Errorf("revoked key: got %d, want 401", got)
		}
		if _, err := cli(t, bin, dataDir, "keys", "create", "--org", "acme", "--workspace", "finance", "--scopes", "read,root"); err == nil || !strings.Contains(err.Error(), `unknown scope "root"`) {
			t.Errorf("bad scope: got %v, want an unknown scope error", err)
		}
		if _, err := cli(t, bin, dataDir, "keys", "create", "--org", "acme#2", "--workspace", "finance", "--scopes", "read"); err == nil || !strings.Contains(err.Error(), "organization and workspace ids") {
			t.Errorf("bad organization id: got %v, want it refused", err)
		}
	})

	workflows, cards := count(t, listWorkflows, demoKey), count(t, listCards, demoKey)
	srv.stop(t)

	// Only hashes of keys reach the store file.
	db, err := os.ReadFile(filepath.Join(dataDir, "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(db, []byte(demoKey)) || bytes.Contains(db, []byte(strings.SplitN(demoKey, "_", 3)[2])) {
		t.Errorf("the store file holds the demo key in plain text")
	}

	// Without a server the CLI opens the store itself.
	if _, err := cli(t, bin, dataDir, "keys", "list"); err != nil {
		t.Fatalf("keys list without a server: %v", err)
	}

	srv = startServer(t, bin, dataDir, port)
	if got := count(t, listWorkflows, demoKey); got != workflows {
		t.Errorf("after restart: got %v workflow versions, want %v", got, workflows)
	}
	if got := count(t, listCards, demoKey); got != cards {
		t.Errorf("after restart: got %v card versions, want %v", got, cards)
	}
	if strings.Contains(srv.stdout(t), "Demo API key") {
		t.Errorf("restart printed a new demo key")
	}
	again, _ := os.ReadFile(filepath.Join(dataDir, "demo-key"))
	if string(again) != string(keyFile) {
		t.Errorf("restart changed the demo key")
	}
	srv.stop(t)
}
