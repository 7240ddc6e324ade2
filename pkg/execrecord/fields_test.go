package execrecord

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// fill sets every field json.Marshal writes of v, and below it, to a value
// that is not its zero value.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("s")
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		elem := reflect.New(v.Type().Elem()).Elem()
		fill(elem)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(reflect.ValueOf("k"), elem)
	case reflect.Interface:
		if v.Type().NumMethod() == 0 {
			v.Set(reflect.ValueOf("x"))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				fill(v.Field(i))
			}
		}
	}
}

// filledExecution is an execution with every field set, its state too.
func filledExecution() *cardflow.Execution {
	e := new(cardflow.Execution)
	fill(reflect.ValueOf(e).Elem())
	fill(reflect.ValueOf(&e.State).Elem())
	return e
}

// A field added to an execution, its state, its details or its events is
// read by a case of the walk: the walk reads every member of the record
// Split writes of an execution with every field set, and reads it as
// decoding it whole does.
func TestWalkReadsEveryField(t *testing.T) {
	e := filledExecution()
	w, err := Split(e)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := walkHead(w.Head)
	if !ok {
		t.Fatalf("walkHead: a member of %s has no case in walkHead (or the state, details or events it reads)", w.Head)
	}
	want, err := Unmarshal(w.Head)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("walkHead:\ngot  %+v\nwant %+v", got, want)
	}
	answer, ok := assembleExecutionJSON(w.Head, w.Parts)
	if !ok {
		t.Fatalf("assembleExecutionJSON: a member of %s or of its parts has no case", w.Head)
	}
	if api, err := json.Marshal(e); err != nil || string(answer) != string(api) {
		t.Errorf("assembleExecutionJSON:\ngot  %s\nwant %s (%v)", answer, api, err)
	}
	if status, modified, err := HeadStatus(w.Head); err != nil || status != e.Status || modified != e.ModifiedOn {
		t.Errorf("HeadStatus: got %q, %d, %v; want %q, %d", status, modified, err, e.Status, e.ModifiedOn)
	}
}

// The walk's members are the names json.Marshal writes, in its order.
func TestFieldsAreWhatMarshalWrites(t *testing.T) {
	e := filledExecution()
	for _, tc := range []struct {
		name string
		f    *fields
		v    any
	}{
		{"head", headFields, headRecord{withPayloads(e), e.State}},
		{"details", detailsFields, e.WorkflowDetails},
		{"event log", eventLogFields, e.WorkflowEventLog},
		{"state", stateFields, e.State},
		{"event", eventFields, e.WorkflowEventLog.Events[0]},
		{"workflow part", workflowFields, workflowPart{e.WorkflowDetails.WorkflowSteps, e.WorkflowDetails.WorkflowConnections, e.State.Integrations}},
		{"step part", stepFields, stepPart{Output: json.RawMessage(`1`), Log: &cardflow.StepLog{}}},
		// The view of a record in another layout lists the fields of
		// the API by hand: one added to the execution must be added there.
		{"execution view", fieldsOf(reflect.TypeFor[executionView]()), withPayloads(e)},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		var members []string
		walk := getWalker(b)
		walk.members(&fields{quoted: tc.f.quoted}, func(i int) bool {
			members = append(members, tc.f.quoted[i])
			_, ok := walk.raw()
			return ok
		})
		putWalker(walk)
		var wrote map[string]json.RawMessage
		if err := json.Unmarshal(b, &wrote); err != nil {
			t.Fatal(err)
		}
		if len(members) != len(wrote) || !slices.Equal(members, tc.f.quoted) {
			t.Errorf("%s: got members %v, want the %d json.Marshal writes: %s", tc.name, tc.f.quoted, len(wrote), b)
		}
	}
}
