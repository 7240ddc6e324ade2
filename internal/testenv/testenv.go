// Package testenv is where a test says what it needs from outside the module
// (DynamoDB Local, moto, Node.js packages, a browser, a command) and is
// skipped when that is missing, or fails under CARDFLOW_STRICT_TESTS=1,
// which `make test` sets so that nothing is skipped there. With -short
// (`make check`) every such test is skipped.
//
// A plain `go test ./...` shows only an "ok" line for a package that
// passes, so a skip would go unseen: Run, called from the package's
// TestMain, names the package's skips and why once its tests end, on the
// go command's own output (see docs/DECISIONS.md).
package testenv

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// StrictEnv names the variable that turns a missing dependency into a
// failure.
const StrictEnv = "CARDFLOW_STRICT_TESTS"

// Strict reports whether a missing dependency fails the test.
func Strict() bool { return os.Getenv(StrictEnv) == "1" }

// DynamoDB returns $DYNAMODB_ENDPOINT, DynamoDB Local's address.
func DynamoDB(tb testing.TB) string {
	tb.Helper()
	return endpoint(tb, "DynamoDB Local", "DYNAMODB_ENDPOINT",
		"run `make test`, which starts DynamoDB Local, or `tools/dynamodblocal/run.sh go test ./...`")
}

// Moto returns $MOTO_ENDPOINT, moto's server (EventBridge Scheduler and
// Step Functions).
func Moto(tb testing.TB) string {
	tb.Helper()
	return endpoint(tb, "moto", "MOTO_ENDPOINT",
		"run `make test`, which starts moto, or `make moto && tools/moto/run.sh go test ./...`")
}

func endpoint(tb testing.TB, need, env, how string) string {
	tb.Helper()
	Short(tb, need)
	ep := os.Getenv(env)
	if ep == "" {
		Skip(tb, need, env+" is not set: "+how)
	}
	return ep
}

// Command returns the path of the command name on $PATH.
func Command(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Skip(tb, name, name+" is not installed")
	}
	return p
}

// Short skips a test that needs something outside the module (need) when
// it runs with -short: such tests are not part of the quick tier.
func Short(tb testing.TB, need string) {
	tb.Helper()
	if testing.Short() {
		skip(tb, need, "-short runs no test that needs it")
	}
}

// Skip skips tb because need is missing, for the reason why, or fails it
// under CARDFLOW_STRICT_TESTS=1.
func Skip(tb testing.TB, need, why string) {
	tb.Helper()
	if Strict() {
		tb.Fatalf("%s: %s (%s=1 runs every test)", need, why, StrictEnv)
	}
	skip(tb, need, why)
}

// skipped holds this test binary's skips, by need and reason.
var skipped struct {
	sync.Mutex
	main  bool
	tests map[reason]int
}

type reason struct{ need, why string }

func skip(tb testing.TB, need, why string) {
	tb.Helper()
	r := reason{need, why}
	skipped.Lock()
	if skipped.tests == nil {
		skipped.tests = map[reason]int{}
	}
	skipped.tests[r]++
	main := skipped.main
	skipped.Unlock()
	keepOutOfCache()
	if !main {
		// No TestMain calls Run: say it now, per test.
		report(map[reason]int{r: 1})
	}
	tb.Skipf("%s: %s", need, why)
}

// Run runs the package's tests, as testing.M.Run does, then names what
// they skipped. A package whose tests use this package calls it from its
// TestMain: os.Exit(testenv.Run(m)).
func Run(m *testing.M) int {
	skipped.Lock()
	skipped.main = true
	skipped.Unlock()
	code := m.Run()
	skipped.Lock()
	tests := skipped.tests
	skipped.Unlock()
	if len(tests) > 0 {
		// The go command caches a result only when no file the tests
		// opened changed in the last two seconds.
		if root, _ := moduleRoot(); root != "" {
			now := time.Now()
			_ = os.Chtimes(stamp(root), now, now)
		}
		report(tests)
	}
	return code
}

// keepOutOfCache opens a file that Run touches as the tests end, so that
// the go command does not cache the package's result: a cached "ok" would
// hide the skips the next time. The go command checks only the files in
// the module that a test opened.
func keepOutOfCache() {
	root, _ := moduleRoot()
	if root == "" || os.MkdirAll(filepath.Dir(stamp(root)), 0o755) != nil {
		return
	}
	if f, err := os.OpenFile(stamp(root), os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		_ = f.Close()
	}
}

// stamp is in .cache, which git ignores.
func stamp(root string) string { return filepath.Join(root, ".cache", "testenv", "skipped") }

// report writes the lines of tests where they show.
func report(tests map[reason]int) {
	w, closeW := output()
	_, _ = io.WriteString(w, summary(packageDir(), tests))
	closeW()
}

// summary is one line per reason, sorted, naming the package.
func summary(pkg string, tests map[reason]int) string {
	reasons := make([]reason, 0, len(tests))
	for r := range tests {
		reasons = append(reasons, r)
	}
	slices.SortFunc(reasons, func(a, b reason) int {
		return cmp.Or(cmp.Compare(a.need, b.need), cmp.Compare(a.why, b.why))
	})
	var b strings.Builder
	for _, r := range reasons {
		n, verb := tests[r], "need"
		if n == 1 {
			verb = "needs"
		}
		fmt.Fprintf(&b, "SKIP %s: %d %s %s %s: %s\n", pkg, n, plural(n, "test"), verb, r.need, r.why)
	}
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// output is where the report shows: the go command's output when it hides
// the test binary's (a package that passes, without -v), else stdout.
func output() (io.Writer, func()) {
	none := func() {}
	if testing.Verbose() || runtime.GOOS != "linux" {
		return os.Stdout, none
	}
	parent := fmt.Sprintf("/proc/%d/", os.Getppid())
	comm, err := os.ReadFile(parent + "comm")
	if err != nil || strings.TrimSpace(string(comm)) != "go" {
		return os.Stdout, none
	}
	// Its output, else its error output. A regular file is left alone: the
	// go command's next write, at its own offset, would write over the line.
	for _, fd := range []string{"fd/1", "fd/2"} {
		fi, err := os.Stat(parent + fd)
		if err != nil || fi.Mode().IsRegular() {
			continue
		}
		if f, err := os.OpenFile(parent+fd, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			return f, func() { _ = f.Close() }
		}
	}
	return os.Stdout, none
}

// packageDir returns the test's directory relative to the module's root,
// as ./pkg/name, or the directory itself where no go.mod is above it.
func packageDir() string {
	root, wd := moduleRoot()
	if root == "" {
		return wd
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil {
		return wd
	}
	return "./" + filepath.ToSlash(rel)
}

// moduleRoot returns the directory of go.mod above the test's (where the
// go command runs it), or "", and the test's directory.
func moduleRoot() (root, wd string) {
	wd, err := os.Getwd()
	if err != nil {
		return "", "?"
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, wd
		}
		if filepath.Dir(dir) == dir {
			return "", wd
		}
	}
}
