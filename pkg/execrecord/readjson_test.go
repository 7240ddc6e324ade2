package execrecord

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// awkward are pieces of strings that JSON escapes or that decoders treat
// apart: quotes, backslashes, control characters, what json.Marshal
// escapes for HTML, line separators, non-ASCII letters, an emoji, bytes
// that are not UTF-8, DEL, and text that looks like JSON.
var awkward = []string{
	"", "a", "Approved", `"`, `\`, `\"`, "\x00", "\x1f", "\t", "\n", "\r", "<", ">", "&", "</script>",
	"\u2028", "\u2029", "ü", "Prüfung", "😀", "\xff", "\xc3", "\x7f", `{"status":"FAILED"}`, `,"modified_on":1}`,
	"\\u0041", "/", " ", "null",
}

// variedExecution builds an execution from r: every string made of
// awkward pieces, maps empty, nil or full, numbers at their limits.
func variedExecution(r *rand.Rand) *cardflow.Execution {
	str := func() string {
		var b strings.Builder
		for range r.IntN(4) {
			b.WriteString(awkward[r.IntN(len(awkward))])
		}
		return b.String()
	}
	num := func() int64 {
		return []int64{0, 1, -1, 1795775027755, math.MaxInt64, math.MinInt64}[r.IntN(6)]
	}
	value := func() any {
		switch r.IntN(6) {
		case 0:
			return nil
		case 1:
			return str()
		case 2:
			return map[string]any{str(): str(), "n": 1.5, "list": []any{true, nil, str()}}
		case 3:
			return []any{str(), 2.0}
		case 4:
			return map[string]any{}
		}
		return 1e21
	}
	e := &cardflow.Execution{
		WorkflowExecutionID: str(), WorkflowID: str(), WorkflowVersion: int(num()), OrganizationID: str(), WorkspaceID: str(),
		WorkflowCurrentState: str(), WorkflowTriggerType: str(), TriggeredBy: str(), Status: str(),
		CreatedOn: num(), ModifiedOn: num(),
	}
	if r.IntN(4) > 0 {
		by := str()
		e.ModifiedBy = &by
	}
	switch r.IntN(3) {
	case 0:
		e.WorkflowEventLog.Events = []cardflow.Event{}
	case 1:
		for range r.IntN(12) {
			e.WorkflowEventLog.Events = append(e.WorkflowEventLog.Events, cardflow.Event{At: num(), Type: str(), StepID: str(), Step: str(), Actor: str(), Message: str()})
		}
	}
	e.WorkflowEventLog.Total = int(num())
	if r.IntN(3) > 0 {
		e.CondensedLogs = map[string]cardflow.StepLog{}
		for range r.IntN(5) {
			e.CondensedLogs[str()] = cardflow.StepLog{Input: value(), Output: value(), Status: str(), StartedOn: num(), FinishedOn: num()}
		}
	}
	if r.IntN(3) > 0 {
		e.State.Outputs = map[string]any{}
		for range r.IntN(5) {
			e.State.Outputs[str()] = value()
		}
	}
	if r.IntN(2) > 0 {
		e.WorkflowInputPayload = cardflow.PayloadOf(value())
	}
	if r.IntN(2) > 0 {
		e.WorkflowOutputPayload = cardflow.PayloadOf(value())
	}
	e.WorkflowDetails.WorkflowName = str()
	for range r.IntN(3) {
		e.WorkflowDetails.WorkflowSteps = append(e.WorkflowDetails.WorkflowSteps, cardflow.Step{ID: str(), Name: str(), Type: str(), Config: map[string]any{str(): value()}})
		e.WorkflowDetails.WorkflowConnections = append(e.WorkflowDetails.WorkflowConnections, cardflow.Connection{From: str(), To: str(), When: str()})
	}
	if r.IntN(2) > 0 {
		e.State.Integrations = map[string]any{str(): value()}
	}
	e.State.StepID, e.State.Phase, e.State.ProcessID, e.State.FailedStep, e.State.TraceParent = str(), str(), str(), str(), str()
	e.State.WakeAt, e.State.StepsRun, e.State.Wait, e.State.Run = num(), int(num()), int(num()), int(num())
	return e
}

// decodedHead is DecodeHead as it was before heads were walked: the head
// decoded whole with encoding/json.
func decodedHead(head []byte) (*cardflow.Execution, error) {
	e := new(cardflow.Execution)
	if err := json.Unmarshal(head, e); err != nil {
		return nil, &cardflow.UnreadableError{Err: fmt.Errorf("decode execution head: %w", err)}
	}
	return e, nil
}

// sameRead checks that JSON and DecodeHead give for head and
// parts what decoding them whole gives: the same bytes, the same
// execution, the same errors.
func sameRead(t *testing.T, head []byte, parts []Part) {
	t.Helper()
	got, err := JSON(head, parts)
	want, wantErr := decodeExecutionJSON(head, parts)
	if string(got) != string(want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Errorf("ExecutionJSON of %s:\ngot  %s, %v\nwant %s, %v", head, got, err, want, wantErr)
	}
	gotHead, err := DecodeHead(head)
	wantHead, wantErr := decodedHead(head)
	if !reflect.DeepEqual(gotHead, wantHead) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Errorf("DecodeHead of %s:\ngot  %+v, %v\nwant %+v, %v", head, gotHead, err, wantHead, wantErr)
	}
	status, modified, err := HeadStatus(head)
	var h struct {
		Status     string `json:"status"`
		ModifiedOn int64  `json:"modified_on"`
	}
	wantErr = json.Unmarshal(head, &h)
	if wantErr != nil {
		h.Status, h.ModifiedOn = "", 0
	}
	if status != h.Status || modified != h.ModifiedOn || (err == nil) != (wantErr == nil) {
		t.Errorf("HeadStatus of %s:\ngot  %q, %d, %v\nwant %q, %d, %v", head, status, modified, err, h.Status, h.ModifiedOn, wantErr)
	}
}

// Executions in the layout Split writes are walked, never decoded, and
// read as decoding them whole reads them, whatever their strings hold.
func TestStoredReadsWalked(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(19, 27))
	executions := []*cardflow.Execution{partsExecution(), approvalExecution()}
	for range 500 {
		executions = append(executions, variedExecution(r))
	}
	for i, e := range executions {
		w, err := Split(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := assembleExecutionJSON(w.Head, w.Parts); !ok {
			t.Errorf("execution %d: its answer was decoded, not walked: %s", i, w.Head)
		}
		if _, ok := walkHead(w.Head); !ok {
			t.Errorf("execution %d: its head was decoded, not walked: %s", i, w.Head)
		}
		sameRead(t, w.Head, w.Parts)
	}
}

// Records in any other layout, or damaged, read as decoding them whole
// reads them.
func TestStoredReadsOtherLayouts(t *testing.T) {
	t.Parallel()
	w, err := Split(partsExecution())
	if err != nil {
		t.Fatal(err)
	}
	head := string(w.Head)
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	heads := map[string]string{
		"white space":                `{ "workflow_execution_id" : "ex-1" ,` + strings.TrimPrefix(head, `{"workflow_execution_id":"ex-1",`) + " \n",
		"trailing garbage":           head + "x",
		"truncated":                  head[:len(head)/2],
		"another order":              strings.Replace(head, `"workflow_id":"wf-1","workflow_version":0`, `"workflow_version":0,"workflow_id":"wf-1"`, 1),
		"a name in capitals":         strings.Replace(head, `"status"`, `"Status"`, 1),
		"a name escaped":             strings.Replace(head, `"status"`, `"st\u0061tus"`, 1),
		"a name repeated":            strings.Replace(head, `"status":"RUNNING"`, `"status":"RUNNING","status":"FAILED"`, 1),
		"an unknown name":            strings.Replace(head, `"status":"RUNNING"`, `"status":"RUNNING","extra":[1]`, 1),
		"a name left out":            strings.Replace(head, `"workflow_trigger_type":"",`, ``, 1),
		"payloads left out":          strings.Replace(head, `"workflow_input_payload":null,"workflow_output_payload":{},`, ``, 1),
		"a < left unescaped":         strings.Replace(head, `"ex-1"`, `"ex<1"`, 1),
		"a > left unescaped":         strings.Replace(head, `"wf-1"`, `"wf>1"`, 1),
		"a & left unescaped":         strings.Replace(head, `"org-1"`, `"org&1"`, 1),
		"a name unescaped":           strings.Replace(head, `"workflow_name":"approval"`, "\"workflow_name\":\"a\u2029b\"", 1),
		"an escape not needed":       strings.Replace(head, `"RUNNING"`, `"RUN\u004eING"`, 1),
		"a modifier unescaped":       strings.Replace(head, `"modified_by":null`, "\"modified_by\":\"<\u2028>\"", 1),
		"the revision of a record":   strings.TrimSuffix(head, "}") + `,"revision":4}`,
		"an id escaped":              strings.Replace(head, `"ex-1"`, `"ex\u002d1\/"`, 1),
		"an id not UTF-8":            strings.Replace(head, `"ex-1"`, "\"ex\xff1\"", 1),
		"a lone surrogate":           strings.Replace(head, `"ex-1"`, `"ex\ud8001"`, 1),
		"a control character":        strings.Replace(head, `"ex-1"`, "\"ex\x011\"", 1),
		"a version with a fraction":  strings.Replace(head, `"workflow_version":0`, `"workflow_version":2.0`, 1),
		"a version with an exponent": strings.Replace(head, `"workflow_version":0`, `"workflow_version":1e2`, 1),
		"a negative zero":            strings.Replace(head, `"workflow_version":0`, `"workflow_version":-0`, 1),
		"a version too large":        strings.Replace(head, `"workflow_version":0`, `"workflow_version":99999999999999999999`, 1),
		"a version as a string":      strings.Replace(head, `"workflow_version":0`, `"workflow_version":"2"`, 1),
		"a null id":                  strings.Replace(head, `"ex-1"`, `null`, 1),
		"a null version":             strings.Replace(head, `"workflow_version":0`, `"workflow_version":null`, 1),
		"a null event log":           strings.Replace(head, `"workflow_event_log":{"events":[{"at":1,"type":"ExecutionStarted"}],"total":1}`, `"workflow_event_log":null`, 1),
		"null events":                strings.Replace(head, `{"events":[{"at":1,"type":"ExecutionStarted"}]`, `{"events":null`, 1),
		"an event time as a string":  strings.Replace(head, `"at":1`, `"at":"1"`, 1),
		"an event in another order":  strings.Replace(head, `{"at":1,"type":"ExecutionStarted"}`, `{"type":"ExecutionStarted","at":1}`, 1),
		"an event with a field more": strings.Replace(head, `{"at":1,"type":"ExecutionStarted"}`, `{"at":1,"type":"ExecutionStarted","x":1}`, 1),
		"an event not an object":     strings.Replace(head, `{"at":1,"type":"ExecutionStarted"}`, `5`, 1),
		"logs in the head":           strings.Replace(head, `"condensed_logs":{}`, `"condensed_logs":{"z":{"status":"SUCCEEDED"}}`, 1),
		"logs null":                  strings.Replace(head, `"condensed_logs":{}`, `"condensed_logs":null`, 1),
		"logs not an object":         strings.Replace(head, `"condensed_logs":{}`, `"condensed_logs":[]`, 1),
		"an input in the head":       strings.Replace(head, `"workflow_input_payload":null`, `"workflow_input_payload":{"x":1}`, 1),
		"an input not an object":     strings.Replace(head, `"workflow_input_payload":null`, `"workflow_input_payload":[1]`, 1),
		"an output not an object":    strings.Replace(head, `"workflow_output_payload":{}`, `"workflow_output_payload":"done"`, 1),
		"steps in the head":          strings.Replace(head, `"workflow_steps":null`, `"workflow_steps":[{"id":"q"}]`, 1),
		"details with a field more":  strings.Replace(head, `"workflow_connections":null}`, `"workflow_connections":null,"x":1}`, 1),
		"details null":               strings.Replace(head, `"workflow_details":{"workflow_name":"approval","workflow_steps":null,"workflow_connections":null}`, `"workflow_details":null`, 1),
		"a modifier as a number":     strings.Replace(head, `"modified_by":null`, `"modified_by":5`, 1),
		"a modifier":                 strings.Replace(head, `"modified_by":null`, `"modified_by":"a\u2028<b>"`, 1),
		"a state with a field more":  strings.Replace(head, `"state":{`, `"state":{"x":1,`, 1),
		"a state with outputs":       strings.Replace(head, `"outputs":{}`, `"outputs":{"a":[1,{"b":null}]}`, 1),
		"a state null":               strings.Replace(head, `"state":{`, `"state":null,"x":{`, 1),
		"a deep state":               strings.Replace(head, `"outputs":{}`, `"outputs":{"a":`+deep(9_990)+`}`, 1),
		"a state too deep":           strings.Replace(head, `"outputs":{}`, `"outputs":{"a":`+deep(10_000)+`}`, 1),
		"not an object":              `[1]`,
		"empty":                      ``,
	}
	for name, h := range heads {
		t.Run("head: "+name, func(t *testing.T) {
			if h == head && name != "as written" {
				t.Fatalf("the change did not apply to %s", head)
			}
			sameRead(t, []byte(h), w.Parts)
		})
	}
	parts := map[string][]Part{
		"input with white space":      {{PartInput, []byte(" {\"po\": 1}\n")}},
		"input not JSON":              {{PartInput, []byte(`{"po": `)}},
		"input twice":                 {{PartInput, []byte(`{"a":1}`)}, {PartInput, []byte(`{"b":2}`)}},
		"input deep":                  {{PartInput, []byte(deep(10_000))}},
		"input too deep":              {{PartInput, []byte(deep(10_001))}},
		"input not UTF-8":             {{PartInput, []byte("{\"a\":\"\xff\"}")}},
		"input with duplicate names":  {{PartInput, []byte(`{"a":1,"a":2}`)}},
		"a log null":                  {{PartStep + "a", []byte(`{"log":null}`)}},
		"a log not an object":         {{PartStep + "a", []byte(`{"log":[1, 2]}`)}},
		"a step twice":                {{PartStep + "b", []byte(`{"log":1}`)}, {PartStep + "a", []byte(`{"log":2}`)}, {PartStep + "b", []byte(`{"log":3}`)}},
		"a step with output only":     {{PartStep + "a", []byte(`{"output":{"x":1}}`)}},
		"a step empty":                {{PartStep + "a", []byte(`{}`)}},
		"a step with a field more":    {{PartStep + "a", []byte(`{"log":1,"x":2}`)}},
		"a step in another order":     {{PartStep + "a", []byte(`{"log":1,"output":2}`)}},
		"a step name in capitals":     {{PartStep + "a", []byte(`{"Log":1}`)}},
		"a step not JSON":             {{PartStep + "a", []byte(`{"log":`)}},
		"a step deep":                 {{PartStep + "a", []byte(`{"log":` + deep(9_999) + `}`)}},
		"a step too deep":             {{PartStep + "a", []byte(`{"log":` + deep(10_000) + `}`)}},
		"a step id escaped":           {{PartStep + "<\"ü\">", []byte(`{"log":1}`)}, {PartStep + "\u2028", []byte(`{"log":2}`)}},
		"a step with white space":     {{PartStep + "a", []byte(` { "log" : { "x" : 1 } } `)}},
		"workflow with steps only":    {{PartWorkflow, []byte(`{"workflow_steps":[]}`)}},
		"workflow empty":              {{PartWorkflow, []byte(`{}`)}},
		"workflow with a field more":  {{PartWorkflow, []byte(`{"workflow_steps":[],"x":1}`)}},
		"workflow in another order":   {{PartWorkflow, []byte(`{"workflow_connections":[],"workflow_steps":[]}`)}},
		"workflow not JSON":           {{PartWorkflow, []byte(`{"workflow_steps":[}`)}},
		"workflow twice":              {{PartWorkflow, []byte(`{"workflow_steps":[1]}`)}, {PartWorkflow, []byte(`{"workflow_connections":[2]}`)}},
		"workflow null steps":         {{PartWorkflow, []byte(`{"workflow_steps":null,"workflow_connections":null,"integrations":null}`)}},
		"a part of another name":      {{"other", []byte(`not JSON`)}},
		"a step with trailing data":   {{PartStep + "a", []byte(`{"log":1} 2`)}},
		"workflow with trailing data": {{PartWorkflow, []byte(`{} {}`)}},
	}
	for name, ps := range parts {
		t.Run("parts: "+name, func(t *testing.T) {
			sameRead(t, w.Head, ps)
			sameRead(t, w.Head, append(ps, w.Parts...))
			sameRead(t, w.Head, append(w.Parts[:len(w.Parts):len(w.Parts)], ps...))
		})
	}
}
