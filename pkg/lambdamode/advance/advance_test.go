package advance

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cardflow/cardflow/pkg/steps"
)

// TestCallsEndWithinTheFunction: a step that starts as the budget runs out
// and waits the longest an http or erp call may still ends, with time to
// record it, before the Advance function's timeout in template.yaml.
func TestCallsEndWithinTheFunction(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources struct {
			AdvanceFunction struct {
				Properties struct {
					Timeout int `yaml:"Timeout"`
				} `yaml:"Properties"`
			} `yaml:"AdvanceFunction"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("template.yaml: %v", err)
	}
	const recording = 30 * time.Second
	timeout := time.Duration(doc.Resources.AdvanceFunction.Properties.Timeout) * time.Second
	if got := Budget + steps.MaxCallTimeout + recording; got > timeout {
		t.Errorf("budget %s + longest call %s + %s to record it = %s, over the Advance function's timeout %s",
			Budget, steps.MaxCallTimeout, recording, got, timeout)
	}
}
