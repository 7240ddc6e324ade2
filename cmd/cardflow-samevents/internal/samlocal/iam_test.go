package samlocal_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"
)

// permissions records, per function, the IAM permissions of the DynamoDB
// requests it sends: each function reaches DynamoDB Local through a proxy
// of its own that reads the requests.
type permissions struct {
	target *url.URL
	prefix string
	mu     sync.Mutex
	seen   map[string]map[string]bool // function -> "dynamodb:Query executions/index/by_organization"
}

func newPermissions(t *testing.T, endpoint, prefix string) *permissions {
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return &permissions{target: u, prefix: prefix, seen: map[string]map[string]bool{}}
}

// endpoint returns the DynamoDB endpoint of function fn.
func (p *permissions) endpoint(t *testing.T, fn string) string {
	proxy := httputil.NewSingleHostReverseProxy(p.target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.record(fn, strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810."), body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// dynamoRequest holds what of a request names its resources.
type dynamoRequest struct {
	TableName     string
	IndexName     string
	TransactItems []map[string]struct{ TableName string }
	// RequestItems names the tables of a batch read.
	RequestItems map[string]json.RawMessage
}

// record notes the permissions one request needs: a transaction needs
// the permission of each of its parts.
func (p *permissions) record(fn, op string, body []byte) {
	var req dynamoRequest
	json.Unmarshal(body, &req)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen[fn] == nil {
		p.seen[fn] = map[string]bool{}
	}
	add := func(action, table, index string) {
		res := strings.TrimPrefix(table, p.prefix)
		if index != "" {
			res += "/index/" + index
		}
		p.seen[fn]["dynamodb:"+action+" "+res] = true
	}
	actionOf := map[string]string{"Get": "GetItem", "Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem"}
	switch op {
	case "TransactGetItems", "TransactWriteItems":
		for _, item := range req.TransactItems {
			for kind, part := range item {
				add(actionOf[kind], part.TableName, "")
			}
		}
	case "BatchGetItem":
		for table := range req.RequestItems {
			add(op, table, "")
		}
	default:
		add(op, req.TableName, req.IndexName)
	}
}

// checkTemplate fails for every permission a function used that its
// policies in template.yaml do not grant.
func (p *permissions) checkTemplate(t *testing.T) {
	t.Helper()
	granted := templateGrants(t)
	p.mu.Lock()
	defer p.mu.Unlock()
	var fns []string
	for fn := range p.seen {
		fns = append(fns, fn)
	}
	sort.Strings(fns)
	for _, fn := range fns {
		id := strings.ToUpper(fn[:1]) + fn[1:] + "Function"
		for perm := range p.seen[fn] {
			if !granted[id][perm] {
				t.Errorf("%s sent a request that needs %s, which template.yaml does not grant it", id, perm)
			}
		}
	}
}

// resourcePattern reads a table resource of a policy: !GetAtt
// WorkflowsTable.Arn, or !Sub "${ProcessesTable.Arn}/index/by_due".
var resourcePattern = regexp.MustCompile(`^(?:\$\{)?(\w+)Table\.Arn\}?(/index/\w+)?$`)

// templateGrants returns the DynamoDB permissions of every function in
// template.yaml, as "dynamodb:<Action> <table>[/index/<index>]".
func templateGrants(t *testing.T) map[string]map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]struct {
			Type       string `yaml:"Type"`
			Properties struct {
				Policies []struct {
					Statement []struct {
						Action   yaml.Node `yaml:"Action"`
						Resource yaml.Node `yaml:"Resource"`
					} `yaml:"Statement"`
				} `yaml:"Policies"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	scalars := func(n yaml.Node) []string {
		if n.Kind == yaml.ScalarNode {
			return []string{n.Value}
		}
		var out []string
		for _, c := range n.Content {
			out = append(out, c.Value)
		}
		return out
	}
	out := map[string]map[string]bool{}
	for id, res := range doc.Resources {
		if res.Type != "AWS::Serverless::Function" {
			continue
		}
		out[id] = map[string]bool{}
		for _, pol := range res.Properties.Policies {
			for _, st := range pol.Statement {
				for _, r := range scalars(st.Resource) {
					m := resourcePattern.FindStringSubmatch(r)
					if m == nil {
						continue
					}
					table := strings.ToLower(m[1])
					for _, a := range scalars(st.Action) {
						out[id][a+" "+table+m[2]] = true
					}
				}
			}
		}
	}
	return out
}
