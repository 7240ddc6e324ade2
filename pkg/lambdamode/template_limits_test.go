package lambdamode

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestTemplateLimitsAndTracing checks the stage's throttling and the
// organizations' default limits as stack parameters, and X-Ray tracing of
// the API, every function and the runner.
func TestTemplateLimitsAndTracing(t *testing.T) {
	tpl := loadTemplate(t)
	api := tpl.get("Resources", "Api", "Properties")
	settings := api.get("MethodSettings").items()
	if len(settings) != 1 {
		t.Fatalf("Api MethodSettings: got %d, want 1 for the whole stage", len(settings))
	}
	g := tpl.get("Globals", "Function")
	for _, c := range []struct{ what, got, want string }{
		{"MethodSettings ResourcePath", settings[0].get("ResourcePath").value(), "/*"},
		{"MethodSettings HttpMethod", settings[0].get("HttpMethod").value(), "*"},
		{"ThrottlingRateLimit", settings[0].get("ThrottlingRateLimit").value(), "ApiThrottlingRate"},
		{"ThrottlingBurstLimit", settings[0].get("ThrottlingBurstLimit").value(), "ApiThrottlingBurst"},
		{"THROTTLED gateway response", api.get("GatewayResponses", "THROTTLED", "StatusCode").value(), "429"},
		{cardflow.EnvOrgRate, g.get("Environment", "Variables", cardflow.EnvOrgRate).value(), "OrgRateLimit"},
		{cardflow.EnvOrgBurst, g.get("Environment", "Variables", cardflow.EnvOrgBurst).value(), "OrgBurstLimit"},
		{cardflow.EnvOrgMaxOpen, g.get("Environment", "Variables", cardflow.EnvOrgMaxOpen).value(), "OrgMaxOpenExecutions"},
		{"function Tracing", g.get("Tracing").value(), "Active"},
		{"API TracingEnabled", api.get("TracingEnabled").value(), "true"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.what, c.got, c.want)
		}
	}
	for _, p := range []string{"ApiThrottlingRate", "ApiThrottlingBurst", "OrgRateLimit", "OrgBurstLimit", "OrgMaxOpenExecutions"} {
		if got := tpl.get("Parameters", p, "Type").value(); got != "Number" {
			t.Errorf("parameter %s: type %q, want Number", p, got)
		}
	}
}
