package lambdamode

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/dynamostore"
)

// TestTemplateEvents checks the publisher's wiring: the executions table
// streams new images, the stream's filter lets through the outbox items
// the DynamoDB store writes and nothing else, and the function may put
// events on the bus the EventBusName parameter names, and only there.
func TestTemplateEvents(t *testing.T) {
	tpl := loadTemplate(t)
	if got := tpl.get("Parameters", "EventBusName", "Default").value(); got != "default" {
		t.Errorf("EventBusName default: got %q, want default", got)
	}
	if got := tpl.get("Resources", "ExecutionsTable", "Properties", "StreamSpecification", "StreamViewType").value(); got != "NEW_IMAGE" {
		t.Errorf("ExecutionsTable stream: got %q, want NEW_IMAGE", got)
	}
	fn := tpl.get("Resources", "PublishEventsFunction", "Properties")
	if got := fn.get("Environment", "Variables", EnvEventBus).value(); got != "EventBusName" {
		t.Errorf("%s: got %q, want a reference to EventBusName", EnvEventBus, got)
	}
	outbox := fn.get("Events", "Outbox", "Properties")
	if got := outbox.get("Stream").value(); !strings.Contains(got, "ExecutionsTable") {
		t.Errorf("stream: got %q, want the executions table's", got)
	}
	filters := outbox.get("FilterCriteria", "Filters").items()
	if len(filters) != 1 {
		t.Fatalf("got %d stream filters, want 1", len(filters))
	}
	var pattern struct {
		EventName []string `json:"eventName"`
		DynamoDB  struct {
			Keys struct {
				WorkflowID struct {
					S []struct {
						Prefix string `json:"prefix"`
					} `json:"S"`
				} `json:"workflow_id"`
			} `json:"Keys"`
		} `json:"dynamodb"`
	}
	if err := json.Unmarshal([]byte(filters[0].get("Pattern").value()), &pattern); err != nil {
		t.Fatalf("stream filter: %v", err)
	}
	if len(pattern.DynamoDB.Keys.WorkflowID.S) != 1 || !slices.Equal(pattern.EventName, []string{"INSERT"}) {
		t.Fatalf("stream filter: got %+v, want INSERTs of one key prefix", pattern)
	}
	prefix := pattern.DynamoDB.Keys.WorkflowID.S[0].Prefix
	for _, id := range []string{"01KB0AT3M6XQF1V2SZ9R3HPJ4T", "01KB0B0R2D5M8C4W7T1E6Y3N9K", "x"} {
		if p := dynamostore.EventPartition(id); !strings.HasPrefix(p, prefix) {
			t.Errorf("outbox partition %s does not start with the filter's prefix %s", p, prefix)
		}
	}
	if _, ok, _ := dynamostore.StreamedEvent("01KB0ASWZ6N1H7FJ0K3YB9V2QX", "{}"); ok || strings.HasPrefix("01KB0ASWZ6N1H7FJ0K3YB9V2QX", prefix) {
		t.Errorf("a workflow's partition passes the filter's prefix %s", prefix)
	}
	var actions, resources []string
	for _, p := range fn.get("Policies").items() {
		for _, st := range p.get("Statement").items() {
			for _, a := range st.get("Action").strs() {
				if strings.HasPrefix(a, "events:") {
					actions = append(actions, a)
					resources = append(resources, st.get("Resource").strs()...)
				}
			}
		}
	}
	if !slices.Equal(actions, []string{"events:PutEvents"}) || len(resources) != 1 || !strings.HasSuffix(resources[0], "event-bus/${EventBusName}") {
		t.Errorf("EventBridge policy: got %v on %v, want events:PutEvents on the EventBusName bus only", actions, resources)
	}
}
