package testenv

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

// recorder is a testing.TB that keeps what ends the test.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Skipf(format string, args ...any) {
	r.skip = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f with a recorder on a goroutine of its own, as the testing
// package runs a test, so that Fatalf and Skipf end it.
func run(f func(tb testing.TB)) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func TestSkip(t *testing.T) {
	for _, tc := range []struct {
		name, strict, endpoint string
		wantFatal, wantSkip    string
	}{
		{"missing", "", "", "", "DynamoDB Local: DYNAMODB_ENDPOINT is not set: run `make test`, which starts DynamoDB Local, or `tools/dynamodblocal/run.sh go test ./...`"},
		{"missing, strict", "1", "", "DynamoDB Local: DYNAMODB_ENDPOINT is not set: run `make test`, which starts DynamoDB Local, or `tools/dynamodblocal/run.sh go test ./...` (CARDFLOW_STRICT_TESTS=1 runs every test)", ""},
		{"there", "1", "http://localhost:8000", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(StrictEnv, tc.strict)
			t.Setenv("DYNAMODB_ENDPOINT", tc.endpoint)
			var got string
			r := run(func(tb testing.TB) { got = DynamoDB(tb) })
			if testing.Short() {
				// Under -short every such test is skipped, there or not.
				tc.wantFatal, tc.wantSkip, tc.endpoint = "", "DynamoDB Local: -short runs no test that needs it", ""
			}
			if r.fatal != tc.wantFatal || r.skip != tc.wantSkip {
				t.Errorf("got fatal %q, skip %q; want %q, %q", r.fatal, r.skip, tc.wantFatal, tc.wantSkip)
			}
			if tc.wantFatal == "" && tc.wantSkip == "" && got != tc.endpoint {
				t.Errorf("got endpoint %q, want %q", got, tc.endpoint)
			}
		})
	}
	// The skips above are this test's own: the package reports none.
	skipped.Lock()
	skipped.tests = nil
	skipped.Unlock()
}

func TestSummary(t *testing.T) {
	got := summary("./pkg/x", map[reason]int{
		{"moto", "MOTO_ENDPOINT is not set"}:               1,
		{"DynamoDB Local", "DYNAMODB_ENDPOINT is not set"}: 12,
	})
	want := "SKIP ./pkg/x: 12 tests need DynamoDB Local: DYNAMODB_ENDPOINT is not set\n" +
		"SKIP ./pkg/x: 1 test needs moto: MOTO_ENDPOINT is not set\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWaitFor(t *testing.T) {
	n := 0
	WaitFor(t, "the third call", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("got %d calls, want 3", n)
	}
}

// TestEveryPackageReports: a package whose tests can skip through this
// package (or through mototest and dynamostoretest, which use it) has a
// TestMain that calls Run, so that a plain go test names its skips.
func TestEveryPackageReports(t *testing.T) {
	root, _ := moduleRoot()
	if root == "" {
		t.Fatal("no go.mod above the test")
	}
	uses := regexp.MustCompile(`\b(testenv\.(DynamoDB|Moto|Command|Short|Skip)|mototest\.Endpoint|dynamostoretest\.Tables)\(`)
	tests := map[string][]string{} // directory -> its test files' text
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			tests[filepath.Dir(path)] = append(tests[filepath.Dir(path)], string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, files := range tests {
		used, reports := false, false
		for _, f := range files {
			used = used || uses.MatchString(f)
			reports = reports || strings.Contains(f, "testenv.Run(m)") || strings.Contains(f, "os.Exit(Run(m))")
		}
		if used && !reports {
			rel, _ := filepath.Rel(root, dir)
			t.Errorf("%s: its tests can skip, and no TestMain calls testenv.Run", rel)
		}
	}
}
