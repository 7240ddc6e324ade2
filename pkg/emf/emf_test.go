package emf_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/emf"
)

// units CloudWatch accepts in EMF.
var units = []string{"Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
	"Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count", "Bytes/Second", "Kilobytes/Second",
	"Megabytes/Second", "Gigabytes/Second", "Terabytes/Second", "Bits/Second", "Kilobits/Second", "Megabits/Second",
	"Gigabits/Second", "Terabits/Second", "Count/Second", "None"}

// checkEMF fails unless line is an EMF log event as CloudWatch's
// specification defines it: a JSON object whose _aws member holds an
// integer Timestamp (epoch ms) and CloudWatchMetrics directives, each with
// a Namespace, Dimensions (sets of at most 30 names of string members of
// the root) and Metrics (at most 100, each a name with a numeric member of
// the root and a valid Unit).
func checkEMF(t *testing.T, line []byte) map[string]any {
	t.Helper()
	var root map[string]json.RawMessage
	if err := json.Unmarshal(line, &root); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, line)
	}
	var meta struct {
		Timestamp         *json.Number `json:"Timestamp"`
		CloudWatchMetrics []struct {
			Namespace  string     `json:"Namespace"`
			Dimensions [][]string `json:"Dimensions"`
			Metrics    []struct {
				Name string `json:"Name"`
				Unit string `json:"Unit"`
			} `json:"Metrics"`
		} `json:"CloudWatchMetrics"`
	}
	dec := json.NewDecoder(bytes.NewReader(root["_aws"]))
	dec.UseNumber()
	if err := dec.Decode(&meta); err != nil {
		t.Fatalf("_aws: %v: %s", err, line)
	}
	if meta.Timestamp == nil {
		t.Fatalf("_aws.Timestamp missing: %s", line)
	}
	if _, err := meta.Timestamp.Int64(); err != nil {
		t.Errorf("_aws.Timestamp %s is not an integer", *meta.Timestamp)
	}
	if len(meta.CloudWatchMetrics) == 0 {
		t.Fatalf("_aws.CloudWatchMetrics empty: %s", line)
	}
	values := map[string]any{}
	for _, d := range meta.CloudWatchMetrics {
		if d.Namespace == "" || len(d.Namespace) > 255 {
			t.Errorf("namespace %q", d.Namespace)
		}
		for _, set := range d.Dimensions {
			if len(set) > 30 {
				t.Errorf("dimension set of %d names, more than 30", len(set))
			}
			for _, name := range set {
				var v string
				if err := json.Unmarshal(root[name], &v); err != nil || v == "" {
					t.Errorf("dimension %s: no string member of the root: %s", name, line)
				}
				values[name] = v
			}
		}
		if len(d.Metrics) == 0 || len(d.Metrics) > 100 {
			t.Errorf("%d metrics, want 1 to 100", len(d.Metrics))
		}
		for _, m := range d.Metrics {
			var v float64
			if err := json.Unmarshal(root[m.Name], &v); err != nil {
				t.Errorf("metric %s: no numeric member of the root: %s", m.Name, line)
			}
			if !slices.Contains(units, m.Unit) {
				t.Errorf("metric %s: unit %q is not one CloudWatch knows", m.Name, m.Unit)
			}
			values[m.Name] = v
		}
	}
	return values
}

func TestLines(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	w := emf.New(&out, func() time.Time { return now })
	w.ExecutionStarted("REQUEST")
	w.ExecutionFinished("SUCCEEDED")
	w.StepDone("http", true, 1500*time.Microsecond)
	w.CardAnswered("approve", 90*time.Second)

	want := []map[string]any{
		{"ExecutionsStarted": 1.0, "TriggerType": "REQUEST"},
		{"ExecutionsFinished": 1.0, "Status": "SUCCEEDED"},
		{"StepDuration": 1.5, "StepKind": "http", "Outcome": "failed"},
		{"CardAnswerTime": 90.0, "Answer": "approve"},
	}
	sc := bufio.NewScanner(&out)
	i := 0
	for ; sc.Scan(); i++ {
		got := checkEMF(t, sc.Bytes())
		if i < len(want) && !equal(got, want[i]) {
			t.Errorf("line %d: got %v, want %v", i+1, got, want[i])
		}
		var meta struct {
			AWS struct{ Timestamp int64 } `json:"_aws"`
		}
		json.Unmarshal(sc.Bytes(), &meta)
		if meta.AWS.Timestamp != now.UnixMilli() {
			t.Errorf("line %d: timestamp %d, want %d", i+1, meta.AWS.Timestamp, now.UnixMilli())
		}
	}
	if i != len(want) {
		t.Errorf("lines: got %d, want %d", i, len(want))
	}
}

func equal(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestApprovalDecided writes a decision as two lines: its count and its
// cycle time, both by outcome.
func TestApprovalDecided(t *testing.T) {
	var out bytes.Buffer
	w := emf.New(&out, nil)
	w.ApprovalDecided("rejected", 90*time.Minute)
	want := []map[string]any{
		{"ApprovalDecisions": 1.0, "Outcome": "rejected"},
		{"ApprovalCycleTime": 5400.0, "Outcome": "rejected"},
	}
	sc := bufio.NewScanner(&out)
	i := 0
	for ; sc.Scan(); i++ {
		if got := checkEMF(t, sc.Bytes()); i < len(want) && !equal(got, want[i]) {
			t.Errorf("line %d: got %v, want %v", i+1, got, want[i])
		}
	}
	if i != len(want) {
		t.Errorf("lines: got %d, want %d", i, len(want))
	}
}
