package lambdamode

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"go.yaml.in/yaml/v3"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/teams"
	"github.com/cardflow/cardflow/schemas"
)

// node is a YAML node of template.yaml. CloudFormation's short tags (!Ref,
// !Sub, !GetAtt) stay on the node; value reads a tagged scalar as its text.
type node struct{ *yaml.Node }

func loadTemplate(t *testing.T) node {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	return node{doc.Content[0]}
}

// get follows a path of mapping keys; a missing key gives a zero node.
func (n node) get(keys ...string) node {
	for _, k := range keys {
		if n.Node == nil || n.Kind != yaml.MappingNode {
			return node{}
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		n = node{next}
	}
	return n
}

func (n node) value() string {
	if n.Node == nil {
		return ""
	}
	return n.Value
}

func (n node) items() []node {
	if n.Node == nil {
		return nil
	}
	out := make([]node, 0, len(n.Content))
	for _, c := range n.Content {
		out = append(out, node{c})
	}
	return out
}

// pairs returns the keys and values of a mapping, in order.
func (n node) pairs() ([]string, []node) {
	if n.Node == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	var keys []string
	var vals []node
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys = append(keys, n.Content[i].Value)
		vals = append(vals, node{n.Content[i+1]})
	}
	return keys, vals
}

// strs reads a scalar or a sequence of scalars.
func (n node) strs() []string {
	if n.Node == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, c.Value)
	}
	return out
}

// resources returns the template's resources of a type, by logical id.
func (n node) resources(typ string) map[string]node {
	out := map[string]node{}
	ids, res := n.get("Resources").pairs()
	for i, id := range ids {
		if res[i].get("Type").value() == typ {
			out[id] = res[i]
		}
	}
	return out
}

// describeTable renders a table definition in one form for both sides:
// attribute types, keys, indexes with their projections, billing and TTL.
func describeTable(attrs map[string]string, keys []string, indexes []string, billing, ttl string) string {
	names := make([]string, 0, len(attrs))
	for a := range attrs {
		names = append(names, a)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, a := range names {
		fmt.Fprintf(&b, "attr %s %s\n", a, attrs[a])
	}
	fmt.Fprintf(&b, "key %s\n", strings.Join(keys, " "))
	sort.Strings(indexes)
	for _, ix := range indexes {
		fmt.Fprintf(&b, "%s\n", ix)
	}
	fmt.Fprintf(&b, "billing %s\nttl %s\n", billing, ttl)
	return b.String()
}

func codeKeys(ks []types.KeySchemaElement) []string {
	var out []string
	for _, k := range ks {
		out = append(out, *k.AttributeName+"/"+string(k.KeyType))
	}
	return out
}

func codeProjection(p *types.Projection) string {
	s := string(p.ProjectionType)
	if len(p.NonKeyAttributes) > 0 {
		s += "(" + strings.Join(p.NonKeyAttributes, ",") + ")"
	}
	return s
}

func templateKeys(n node) []string {
	var out []string
	for _, k := range n.items() {
		out = append(out, k.get("AttributeName").value()+"/"+k.get("KeyType").value())
	}
	return out
}

func templateProjection(n node) string {
	s := n.get("ProjectionType").value()
	if a := n.get("NonKeyAttributes").strs(); len(a) > 0 {
		s += "(" + strings.Join(a, ",") + ")"
	}
	return s
}

// TestTemplateTables checks that template.yaml defines the tables of
// pkg/dynamostore/tables.go: names, attribute types, keys, indexes,
// billing and TTL, and point-in-time recovery on each.
func TestTemplateTables(t *testing.T) {
	tpl := loadTemplate(t)
	const prefix = "cardflow-${Stage}-"
	want := map[string]string{}
	for _, tb := range dynamostore.Tables(prefix) {
		in := tb.Input
		attrs := map[string]string{}
		for _, a := range in.AttributeDefinitions {
			attrs[*a.AttributeName] = string(a.AttributeType)
		}
		var idx []string
		for _, g := range in.GlobalSecondaryIndexes {
			idx = append(idx, fmt.Sprintf("gsi %s %s %s", *g.IndexName, strings.Join(codeKeys(g.KeySchema), " "), codeProjection(g.Projection)))
		}
		for _, l := range in.LocalSecondaryIndexes {
			idx = append(idx, fmt.Sprintf("lsi %s %s %s", *l.IndexName, strings.Join(codeKeys(l.KeySchema), " "), codeProjection(l.Projection)))
		}
		want[*in.TableName] = describeTable(attrs, codeKeys(in.KeySchema), idx, string(in.BillingMode), tb.TTLAttribute)
	}

	got := map[string]string{}
	for id, res := range tpl.resources("AWS::DynamoDB::Table") {
		p := res.get("Properties")
		name := p.get("TableName")
		if name.Tag != "!Sub" {
			t.Errorf("%s: TableName is %q, want !Sub with the stage prefix %s", id, name.value(), prefix)
		}
		attrs := map[string]string{}
		for _, a := range p.get("AttributeDefinitions").items() {
			attrs[a.get("AttributeName").value()] = a.get("AttributeType").value()
		}
		var idx []string
		for _, g := range p.get("GlobalSecondaryIndexes").items() {
			idx = append(idx, fmt.Sprintf("gsi %s %s %s", g.get("IndexName").value(), strings.Join(templateKeys(g.get("KeySchema")), " "), templateProjection(g.get("Projection"))))
		}
		for _, l := range p.get("LocalSecondaryIndexes").items() {
			idx = append(idx, fmt.Sprintf("lsi %s %s %s", l.get("IndexName").value(), strings.Join(templateKeys(l.get("KeySchema")), " "), templateProjection(l.get("Projection"))))
		}
		ttl := ""
		if p.get("TimeToLiveSpecification", "Enabled").value() == "true" {
			ttl = p.get("TimeToLiveSpecification", "AttributeName").value()
		}
		got[name.value()] = describeTable(attrs, templateKeys(p.get("KeySchema")), idx, p.get("BillingMode").value(), ttl)
		if v := p.get("PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled").value(); v != "true" {
			t.Errorf("%s: PointInTimeRecoveryEnabled = %q, want true", id, v)
		}
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("template.yaml lacks table %s", name)
			continue
		}
		if g != w {
			t.Errorf("table %s:\ntemplate.yaml:\n%s\npkg/dynamostore:\n%s", name, g, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("template.yaml has table %s, which pkg/dynamostore does not define", name)
		}
	}
}

// functionID is a function's logical id in template.yaml.
func functionID(name string) string { return strings.ToUpper(name[:1]) + name[1:] + "Function" }

// apiRoutes returns the routes of the whole HTTP API of a service with
// every area and the Teams dependencies deps gives, over a store that is
// never called.
func apiRoutes(t *testing.T, deps app.Deps) []string {
	t.Helper()
	env := Env{Region: "us-east-1", DynamoDBEndpoint: "http://127.0.0.1:1", TablePrefix: "t-"}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := env.OpenStore(log)
	if err != nil {
		t.Fatal(err)
	}
	deps.Runner, deps.Scheduler, deps.Checker, deps.CardChecker, deps.CardExpander = allDeps.Runner, allDeps.Scheduler, allDeps.Checker, allDeps.CardChecker, allDeps.CardExpander
	svc, err := app.New(store, deps)
	if err != nil {
		t.Fatal(err)
	}
	// On AWS the messaging endpoint's function exists only with a bot.
	teamsRoutes := httpapi.WithResponseLinks()
	if svc.Bot != nil {
		teamsRoutes = httpapi.WithTeams()
	}
	srv, err := httpapi.New(svc, AuthorizerAuthenticator{}, httpapi.WithLogger(log), teamsRoutes)
	if err != nil {
		t.Fatal(err)
	}
	return srv.Routes()
}

// TestTemplateFunctions checks that every endpoint of pkg/httpapi's table
// has its function, wired to its routes by Api events on the REST API
// behind the API key authorizer, that together they serve every route of
// the HTTP API, that every function has its main package and builds with
// the Makefile, and the settings every function shares.
func TestTemplateFunctions(t *testing.T) {
	tpl := loadTemplate(t)
	fns := tpl.resources("AWS::Serverless::Function")

	// The routes of the API, as served on AWS (local mode adds the outbox).
	routes := apiRoutes(t, app.Deps{})
	sort.Strings(routes)

	var served []string
	for _, ep := range httpapi.Endpoints() {
		id := functionID(ep.Name)
		fn, ok := fns[id]
		if !ok {
			t.Errorf("template.yaml lacks %s, the function of %v", id, ep.Routes)
			continue
		}
		if ep.Scope() == "" {
			t.Errorf("%s: an endpoint of httpapi.Endpoints without a scope", ep.Name)
		}
		var events []string
		_, evs := fn.get("Properties", "Events").pairs()
		for _, ev := range evs {
			p := ev.get("Properties")
			if ev.get("Type").value() != "Api" || p.get("RestApiId").value() != "Api" {
				t.Errorf("%s: every event must be an Api event on the REST API Api", id)
			}
			// The endpoint needs a key's scope: its events keep the API's
			// default authorizer, which puts the key's scopes in the context.
			if a := p.get("Auth"); a.Node != nil {
				t.Errorf("%s: event %s sets Auth; an endpoint with scope %s takes the API key authorizer", id, ev.get("Properties", "Path").value(), ep.Scope())
			}
			events = append(events, strings.ToUpper(p.get("Method").value())+" "+p.get("Path").value())
		}
		sort.Strings(events)
		if want := slices.Sorted(slices.Values(ep.Routes)); !slices.Equal(events, want) {
			t.Errorf("%s: Api events %v, want %v", id, events, want)
		}
		served = append(served, ep.Routes...)
		for _, ev := range events {
			if strings.HasPrefix(ev, "GET ") {
				checkReadOnly(t, id, fn)
				break
			}
		}
	}
	sort.Strings(served)
	if !slices.Equal(served, routes) {
		t.Errorf("the functions serve %v,\nthe API has %v", served, routes)
	}
	// Nothing extra: every Api event of the template is a route of the
	// table, on the function of its endpoint; but the console's pages and
	// the public schema of apply documents the console function serves,
	// which are no part of the API.
	owner := map[string]string{"GET /console": functionID("console"), "GET /console/{proxy+}": functionID("console"),
		"GET " + schemas.Path: functionID("console")}
	for _, ep := range append(httpapi.Endpoints(), httpapi.TeamsEndpoints()...) {
		for _, r := range ep.Routes {
			owner[r] = functionID(ep.Name)
		}
	}
	for id, fn := range fns {
		_, evs := fn.get("Properties", "Events").pairs()
		for _, ev := range evs {
			if ev.get("Type").value() != "Api" {
				continue
			}
			r := strings.ToUpper(ev.get("Properties", "Method").value()) + " " + ev.get("Properties", "Path").value()
			if owner[r] != id {
				t.Errorf("%s: Api event %s is not a route of its endpoint in pkg/httpapi's table", id, r)
			}
		}
	}

	dirs, err := os.ReadDir(filepath.Join("..", "..", "functions"))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, d := range dirs {
		ids[functionID(d.Name())] = true
		if _, err := os.Stat(filepath.Join("..", "..", "functions", d.Name(), "main.go")); err != nil {
			t.Errorf("functions/%s: %v", d.Name(), err)
		}
	}
	for id, fn := range fns {
		if !ids[id] {
			t.Errorf("%s has no directory under functions/", id)
		}
		if got := fn.get("Metadata", "BuildMethod").value(); got != "makefile" {
			t.Errorf("%s: Metadata BuildMethod = %q, want makefile", id, got)
		}
		checkPolicies(t, id, fn)
	}
	for id := range ids {
		if _, ok := fns[id]; !ok {
			t.Errorf("functions/ has %s, template.yaml does not", id)
		}
	}

	g := tpl.get("Globals", "Function")
	for _, c := range []struct{ got, want string }{
		{g.get("Runtime").value(), "provided.al2023"},
		{strings.Join(g.get("Architectures").strs(), ","), "arm64"},
		{g.get("Handler").value(), "bootstrap"},
		{g.get("LoggingConfig", "LogFormat").value(), "JSON"},
		{g.get("Environment", "Variables", EnvTablePrefix).value(), "cardflow-${Stage}-"},
		{g.get("Environment", "Variables", EnvLogLevel).value(), "LogLevel"},
	} {
		if c.got != c.want {
			t.Errorf("Globals: got %q, want %q", c.got, c.want)
		}
	}
	auth := tpl.get("Resources", "Api", "Properties", "Auth")
	a := auth.get("Authorizers", auth.get("DefaultAuthorizer").value())
	for _, c := range []struct{ got, want string }{
		{a.get("FunctionArn").value(), "AuthorizerFunction.Arn"},
		{a.get("FunctionPayloadType").value(), "REQUEST"},
		{strings.Join(a.get("Identity", "Headers").strs(), ","), APIKeyHeader},
		{a.get("Identity", "ReauthorizeEvery").value(), "300"},
	} {
		if c.got != c.want {
			t.Errorf("API authorizer: got %q, want %q", c.got, c.want)
		}
	}
}

// checkReadOnly fails unless a read endpoint's policies allow only
// GetItem and Query, but on the limits table, where every request counts.
func checkReadOnly(t *testing.T, id string, fn node) {
	t.Helper()
	for _, p := range fn.get("Properties", "Policies").items() {
		for _, st := range p.get("Statement").items() {
			if slices.Equal(st.get("Resource").strs(), []string{"LimitsTable.Arn"}) {
				continue
			}
			for _, a := range st.get("Action").strs() {
				if a != "dynamodb:GetItem" && a != "dynamodb:Query" && a != "dynamodb:BatchGetItem" {
					t.Errorf("%s serves a read endpoint but may %s", id, a)
				}
			}
		}
	}
}

// anyResource lists the actions that take no resource but "*": Step
// Functions' task tokens name none.
var anyResource = []string{"states:SendTaskSuccess", "states:SendTaskFailure"}

// checkPolicies fails on wildcard actions, on scans, and on the resource
// "*" for actions that can name their resources.
func checkPolicies(t *testing.T, id string, fn node) {
	t.Helper()
	for _, p := range fn.get("Properties", "Policies").items() {
		for _, st := range p.get("Statement").items() {
			actions := st.get("Action").strs()
			for _, a := range actions {
				if strings.Contains(a, "*") || strings.HasSuffix(a, "Scan") {
					t.Errorf("%s: action %s is wider than the function needs", id, a)
				}
			}
			for _, r := range st.get("Resource").strs() {
				if r == "*" && slices.ContainsFunc(actions, func(a string) bool { return !slices.Contains(anyResource, a) }) {
					t.Errorf("%s: resource * for %v is wider than the function needs", id, actions)
				}
			}
		}
	}
}

// TestTemplateStateMachine checks the runner's state machine: its
// definition file, the substitutions the definition uses, tracing and
// logging, and that it may invoke Advance and Park.
func TestTemplateStateMachine(t *testing.T) {
	tpl := loadTemplate(t)
	sm := tpl.get("Resources", "RunnerStateMachine", "Properties")
	def, err := os.ReadFile(filepath.Join("..", "..", sm.get("DefinitionUri").value()))
	if err != nil {
		t.Fatal(err)
	}
	names, vals := sm.get("DefinitionSubstitutions").pairs()
	var used []string
	for _, m := range regexp.MustCompile(`\$\{(\w+)\}`).FindAllStringSubmatch(string(def), -1) {
		if !slices.Contains(used, m[1]) {
			used = append(used, m[1])
		}
	}
	slices.Sort(used)
	slices.Sort(names)
	if !slices.Equal(names, used) {
		t.Errorf("DefinitionSubstitutions %v, the definition uses %v", names, used)
	}
	for i, v := range vals {
		if v.Tag != "!GetAtt" {
			t.Errorf("substitution %s = %s %q, want !GetAtt of a function", names[i], v.Tag, v.value())
		}
	}
	for _, c := range []struct{ got, want string }{
		{sm.get("Type").value(), "STANDARD"},
		{sm.get("Tracing", "Enabled").value(), "true"},
		{sm.get("Logging", "Destinations").items()[0].get("CloudWatchLogsLogGroup", "LogGroupArn").value(), "RunnerLogGroup.Arn"},
	} {
		if c.got != c.want {
			t.Errorf("RunnerStateMachine: got %q, want %q", c.got, c.want)
		}
	}
	var invokes []string
	for _, p := range sm.get("Policies").items() {
		if f := p.get("LambdaInvokePolicy", "FunctionName").value(); f != "" {
			invokes = append(invokes, f)
		}
	}
	if !slices.Equal(invokes, []string{"AdvanceFunction", "ParkFunction"}) {
		t.Errorf("the state machine may invoke %v, want AdvanceFunction and ParkFunction", invokes)
	}
}

// TestTemplateTeams checks the Teams functions: one per route the API adds
// with a bot and response links, each an Api event without the API key
// authorizer, created only when configured; and that the functions that
// deliver or receive cards get every Teams setting from a parameter.
func TestTemplateTeams(t *testing.T) {
	tpl := loadTemplate(t)
	fns := tpl.resources("AWS::Serverless::Function")

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tm, err := teams.New(teams.Config{AppID: "app", AppSecret: "bot-secret", SigningSecret: "teams-signing"}, LogDeliverer{Log: log},
		secrets.ForDeployment(secrets.Env{}), func(org string) teams.Secrets { return secrets.ForOrganization(secrets.Env{}, org) })
	if err != nil {
		t.Fatal(err)
	}
	base := apiRoutes(t, app.Deps{})
	var want []string
	for _, r := range apiRoutes(t, app.Deps{BotVerifier: tm, BotReplier: tm, LinkVerifier: tm}) {
		if !slices.Contains(base, r) {
			want = append(want, r)
		}
	}
	slices.Sort(want)

	var served []string
	conditions := map[string]string{TeamsMessages: "HasTeamsBot", TeamsRespond: "HasTeamsLinks"}
	for _, f := range httpapi.TeamsEndpoints() {
		id := functionID(f.Name)
		fn, ok := fns[id]
		if !ok {
			t.Errorf("template.yaml lacks %s, the function of %v", id, f.Routes)
			continue
		}
		if f.Scope() != "" {
			t.Errorf("%s: a Teams endpoint with scope %s; Teams calls it without a key", f.Name, f.Scope())
		}
		if got := fn.get("Condition").value(); got != conditions[f.Name] {
			t.Errorf("%s: Condition %q, want %q", id, got, conditions[f.Name])
		}
		var events []string
		_, evs := fn.get("Properties", "Events").pairs()
		for _, ev := range evs {
			p := ev.get("Properties")
			if ev.get("Type").value() != "Api" || p.get("RestApiId").value() != "Api" || p.get("Auth", "Authorizer").value() != "NONE" {
				t.Errorf("%s: every event must be an Api event on the REST API Api with Auth Authorizer NONE", id)
			}
			events = append(events, strings.ToUpper(p.get("Method").value())+" "+p.get("Path").value())
		}
		if !slices.Equal(events, f.Routes) {
			t.Errorf("%s: Api events %v, want %v", id, events, f.Routes)
		}
		served = append(served, f.Routes...)
	}
	slices.Sort(served)
	if !slices.Equal(served, want) {
		t.Errorf("the Teams functions serve %v, the API adds %v for Teams", served, want)
	}

	params := map[string]string{
		EnvPublicURL: "TeamsPublicUrl", EnvTeamsSigningSecret: "TeamsSigningSecretName", EnvTeamsLinkTTL: "TeamsLinkTtl",
		EnvTeamsAppID: "TeamsAppId", EnvTeamsAppSecret: "TeamsAppSecretName", EnvTeamsTokenURL: "TeamsTokenUrl",
		EnvTeamsOpenIDURL: "TeamsOpenIdMetadataUrl", EnvTeamsServiceHosts: "TeamsServiceHosts",
	}
	for _, id := range []string{"AdvanceFunction", functionID(TeamsMessages), functionID(TeamsRespond)} {
		vars := fns[id].get("Properties", "Environment", "Variables")
		if got := vars.get("CARDFLOW_SECRETS").value(); got != "secretsmanager" {
			t.Errorf("%s: CARDFLOW_SECRETS = %q, want secretsmanager", id, got)
		}
		for env, param := range params {
			if v := vars.get(env); v.Tag != "!Ref" || v.value() != param {
				t.Errorf("%s: %s = %s %q, want !Ref %s", id, env, v.Tag, v.value(), param)
			}
			if tpl.get("Parameters", param).Node == nil {
				t.Errorf("template.yaml lacks the parameter %s", param)
			}
		}
	}
}

// TestTemplateSecrets checks which Secrets Manager secrets each function
// may read: Advance the organizations' and the deployment's, the Teams
// answer functions the deployment's only, every other function none.
func TestTemplateSecrets(t *testing.T) {
	orgs, deployment := secrets.DefaultPrefix+"org/*", secrets.DefaultPrefix+"deployment/*"
	want := map[string][]string{
		"AdvanceFunction":         {deployment, orgs},
		functionID(TeamsMessages): {deployment},
		functionID(TeamsRespond):  {deployment},
	}
	for id, fn := range loadTemplate(t).resources("AWS::Serverless::Function") {
		var got []string
		for _, p := range fn.get("Properties", "Policies").items() {
			for _, st := range p.get("Statement").items() {
				if !slices.ContainsFunc(st.get("Action").strs(), func(a string) bool { return strings.HasPrefix(a, "secretsmanager:") }) {
					continue
				}
				for _, r := range st.get("Resource").strs() {
					_, secret, _ := strings.Cut(r, ":secret:")
					got = append(got, secret)
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want[id]) {
			t.Errorf("%s may read the secrets %v, want %v", id, got, want[id])
		}
	}
}
