package cardflow_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
)

// module prefixes the packages of this repository.
const module = "github.com/cardflow/cardflow/"

// adapters talk to one piece of infrastructure each and implement ports;
// the subpackages under them (clients) count as theirs, and so do the
// tests' stand-ins for the services they talk to.
var adapters = []string{
	module + "pkg/boltstore", module + "pkg/dynamostore", module + "pkg/sfnrunner", module + "pkg/localrunner",
	module + "pkg/ebscheduler", module + "pkg/localscheduler", module + "pkg/teams", module + "pkg/sap",
	module + "pkg/secrets", module + "pkg/outbound", module + "internal/fakes", module + "internal/dynamostoretest",
}

// useCases are the layers above the adapters: the use cases, the transport
// that calls them, and the wiring of local mode and of Lambda.
var useCases = []string{module + "pkg/app", module + "pkg/httpapi", module + "pkg/localmode", module + "pkg/lambdamode"}

// layer is a rule of the direction data flows in (HTTP -> app -> engine and
// ports -> adapters): no package under subjects may depend on one under
// forbidden, directly or through others.
type layer struct {
	why                 string
	subjects, forbidden []string
}

var layers = []layer{
	{"the domain holds types and ports, and no infrastructure",
		[]string{module + "pkg/cardflow"},
		[]string{module, "net/http", "github.com/aws", "go.etcd.io/bbolt"}},
	{"an adapter never calls use cases",
		adapters, useCases},
	{"the engine runs below the use cases",
		[]string{module + "pkg/engine"}, useCases},
	{"use cases reach adapters only through ports",
		[]string{module + "pkg/app"}, append(slices.Clone(adapters), module+"pkg/httpapi")},
	{"the HTTP API reaches infrastructure only through the use cases",
		[]string{module + "pkg/httpapi"}, append(slices.Clone(adapters), module+"pkg/engine")},
	{"the stored layout of an execution is the stores' own",
		[]string{module + "pkg/engine", module + "pkg/app", module + "pkg/httpapi"}, []string{module + "pkg/execrecord"}},
	{"a contract suite is handed its adapter by the adapter's test",
		[]string{module + "internal/storetest", module + "internal/runnertest", module + "internal/schedulertest"}, adapters},
}

// under reports whether pkg is prefix or a package below it; a prefix
// ending in "/" matches everything below it.
func under(pkg, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(pkg, prefix)
	}
	return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
}

func underAny(pkg string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return under(pkg, p) })
}

// violations returns, for every subject that depends on a forbidden
// package, the shortest chain of imports that gets there. imports maps
// each package to those it imports.
func violations(imports map[string][]string, l layer) []string {
	var out []string
	for _, subject := range slices.Sorted(func(yield func(string) bool) {
		for pkg := range imports {
			if underAny(pkg, l.subjects) && !yield(pkg) {
				return
			}
		}
	}) {
		from := map[string]string{subject: ""}
		queue := []string{subject}
		for len(queue) > 0 {
			pkg := queue[0]
			queue = queue[1:]
			if pkg != subject && underAny(pkg, l.forbidden) && !underAny(pkg, l.subjects) {
				chain := []string{pkg}
				for p := from[pkg]; p != ""; p = from[p] {
					chain = append(chain, p)
				}
				slices.Reverse(chain)
				out = append(out, strings.Join(chain, " -> "))
				break
			}
			for _, next := range imports[pkg] {
				if _, seen := from[next]; !seen {
					from[next] = pkg
					queue = append(queue, next)
				}
			}
		}
	}
	return out
}

// TestLayers checks the import graph of the repository's non-test code
// against layers (see docs/DECISIONS.md, "Layers").
func TestLayers(t *testing.T) {
	t.Parallel()
	testenv.Command(t, "go")
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := map[string][]string{}
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		fields := strings.Fields(line)
		imports[fields[0]] = fields[1:]
	}
	for _, l := range layers {
		// A rule whose packages were renamed or moved away would pass
		// without checking anything.
		for _, p := range slices.Concat(l.subjects, l.forbidden) {
			found := false
			for pkg := range imports {
				found = found || under(pkg, p)
			}
			if !found && strings.HasPrefix(p, module) && p != module {
				t.Errorf("%s: no package %s in the repository", l.why, p)
			}
		}
		for _, v := range violations(imports, l) {
			t.Errorf("%s: %s", l.why, v)
		}
	}
}

func TestLayerViolations(t *testing.T) {
	t.Parallel()
	imports := map[string][]string{
		"app":      {"domain", "store"},
		"http":     {"app", "domain"},
		"domain":   {"net/http"},
		"store":    {"domain", "bbolt"},
		"runner":   {"engine"},
		"engine":   {"domain", "http"},
		"bbolt":    nil,
		"net/http": nil,
	}
	for _, tt := range []struct {
		name string
		l    layer
		want []string
	}{
		{"direct", layer{subjects: []string{"domain"}, forbidden: []string{"net/http"}}, []string{"domain -> net/http"}},
		{"through others", layer{subjects: []string{"runner"}, forbidden: []string{"app"}}, []string{"runner -> engine -> http -> app"}},
		{"every subject, the shortest chain", layer{subjects: []string{"http", "app"}, forbidden: []string{"store", "bbolt"}},
			[]string{"app -> store", "http -> app -> store"}},
		{"within the subjects", layer{subjects: []string{"app", "store"}, forbidden: []string{"store"}}, nil},
		{"none", layer{subjects: []string{"store"}, forbidden: []string{"app"}}, nil},
	} {
		if got := violations(imports, tt.l); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
