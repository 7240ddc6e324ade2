package execrecord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/go-json-experiment/json/jsontext"
)

// Reads of stored executions walk the stored JSON with a tokenizer that
// validates as it goes (jsontext), rather than decoding it with
// encoding/json, which validates a record in one pass and decodes it in a
// second, allocating for every value: that was most of the server's time
// per read. A walk accepts only the layout this package writes (json.Marshal
// of a head and its parts: every name as written, in its order, once); any
// other record is decoded as before, so what a read gives never depends on
// which way it went.

// storedOptions make the tokenizer accept what encoding/json accepts:
// duplicate names inside values copied as they are, and invalid UTF-8.
var storedOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// walker reads one stored value; walkers are pooled, since a decoder
// carries buffers for its state.
type walker struct {
	src []byte
	// text is src as a string, when strings are read: the strings read
	// share it rather than each taking an allocation.
	text string
	buf  bytes.Buffer
	d    jsontext.Decoder
}

var walkers = sync.Pool{New: func() any { return new(walker) }}

func getWalker(src []byte) *walker {
	w := walkers.Get().(*walker)
	w.src = src
	// A bytes.Buffer is read in place, without a copy.
	w.buf = *bytes.NewBuffer(src)
	w.d.Reset(&w.buf, storedOptions...)
	return w
}

// putWalker pools w, holding nothing of what it read: a record may live
// in memory that is gone once its read ends (bbolt's map of the file).
func putWalker(w *walker) {
	w.src, w.text = nil, ""
	w.buf = bytes.Buffer{}
	w.d.Reset(&w.buf)
	walkers.Put(w)
}

// raw reads the next value (or name) and returns its bytes in src.
func (w *walker) raw() ([]byte, bool) {
	v, err := w.d.ReadValue()
	if err != nil {
		return nil, false
	}
	end := int(w.d.InputOffset())
	return w.src[end-len(v) : end], true
}

// end reports whether only white space follows the value read.
func (w *walker) end() bool {
	_, err := w.d.ReadToken()
	return err == io.EOF
}

// delim reads the delimiter c.
func (w *walker) delim(c byte) bool {
	t, err := w.d.ReadToken()
	return err == nil && byte(t.Kind()) == c
}

// members reads an object whose names are among f's, in their order, each
// at most once, spelled as json.Marshal quotes them, and calls member with
// the index of each name in f to read its value. A name that is not there
// (another spelling, an unknown name, a repeated or misplaced one) ends
// the walk as false: encoding/json would match names regardless of case
// and let a later value overwrite an earlier one.
func (w *walker) members(f *fields, member func(i int) bool) bool {
	if !w.delim('{') {
		return false
	}
	next := 0
	for w.d.PeekKind() == '"' {
		name, ok := w.raw()
		if !ok {
			return false
		}
		i := slices.Index(f.quoted[next:], string(name))
		if i < 0 {
			return false
		}
		next += i + 1
		if !member(next - 1) {
			return false
		}
	}
	return w.delim('}')
}

// str reads a string as encoding/json decodes it.
func (w *walker) str() (string, bool) {
	v, ok := w.raw()
	if !ok || v[0] != '"' {
		return "", false
	}
	if s := v[1 : len(v)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		if w.text == "" {
			return string(s), true
		}
		end := int(w.d.InputOffset()) - 1
		return w.text[end-len(s) : end], true
	}
	var s string
	return s, json.Unmarshal(v, &s) == nil
}

// int reads a number into an int64 as encoding/json does.
func (w *walker) int() (int64, bool) {
	v, ok := w.raw()
	if !ok || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}

// appendStr appends the string at v as appendString would append it
// decoded: as it is when json.Marshal writes it so.
func appendStr(b, v []byte) ([]byte, bool) {
	if v[0] != '"' {
		return b, false
	}
	for _, c := range v[1 : len(v)-1] {
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			var s string
			if json.Unmarshal(v, &s) != nil {
				return b, false
			}
			return appendString(b, s), true
		}
	}
	return append(b, v...), true
}

// appendInt appends the number at v as strconv writes the int64 that
// encoding/json decodes of it.
func appendInt(b, v []byte) ([]byte, bool) {
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return b, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return b, false
	}
	return strconv.AppendInt(b, n, 10), true
}

// fields are the members of one stored object, in the order json.Marshal
// writes them. They are read from the struct tags of the type encoded, so
// that a field added to it cannot be skipped: a walk that meets a member
// it has no case for ends as false, and the record is decoded whole
// (TestWalkReadsEveryField asks for the case).
type fields struct {
	// names are the names of the members; quoted, as json.Marshal quotes
	// them.
	names, quoted []string
}

// fieldsOf returns the fields json.Marshal writes of a struct of type t:
// exported, not tagged "-", those of untagged embedded structs in their
// place.
func fieldsOf(t reflect.Type) *fields {
	f := &fields{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			switch {
			case sf.Anonymous && tag == "" && sf.Type.Kind() == reflect.Struct:
				add(sf.Type)
				continue
			case !sf.IsExported() || tag == "-":
				continue
			case tag == "":
				tag = sf.Name
			}
			q, _ := json.Marshal(tag) // a string always encodes
			f.names, f.quoted = append(f.names, tag), append(f.quoted, string(q))
		}
	}
	add(t)
	return f
}

// headRecord is what encodeHead encodes: the execution less its parts,
// with the engine's state.
type headRecord struct {
	executionFields
	State cardflow.ExecutionState `json:"state"`
}

// The members of what is stored: a head and what it holds, and the parts.
var (
	headFields     = fieldsOf(reflect.TypeFor[headRecord]())
	detailsFields  = fieldsOf(reflect.TypeFor[cardflow.WorkflowDetails]())
	eventLogFields = fieldsOf(reflect.TypeFor[cardflow.EventLog]())
	stateFields    = fieldsOf(reflect.TypeFor[cardflow.ExecutionState]())
	eventFields    = fieldsOf(reflect.TypeFor[cardflow.Event]())
	workflowFields = fieldsOf(reflect.TypeFor[workflowPart]())
	stepFields     = fieldsOf(reflect.TypeFor[stepPart]())
)

// stepLog is the log of a step part, by step id.
type stepLog struct {
	id  string
	log []byte
}

// assembleExecutionJSON is JSON for a head and parts in the
// layout Split writes, walked once and copied; false for any other.
func assembleExecutionJSON(head []byte, parts []Part) ([]byte, bool) {
	var (
		input, steps, conns []byte
		workflow            bool
		logs                []stepLog
	)
	for _, p := range parts {
		switch {
		case p.Name == PartInput:
			w := getWalker(p.Value)
			_, ok := w.raw()
			ok = ok && w.end()
			putWalker(w)
			if !ok {
				return nil, false
			}
			input = p.Value
		case p.Name == PartWorkflow:
			w := getWalker(p.Value)
			steps, conns, workflow = nil, nil, true
			ok := w.members(workflowFields, func(i int) bool {
				v, ok := w.raw()
				switch workflowFields.names[i] {
				case "workflow_steps":
					steps = v
				case "workflow_connections":
					conns = v
				case "integrations":
				default:
					return false
				}
				return ok
			}) && w.end()
			putWalker(w)
			if !ok {
				return nil, false
			}
		case strings.HasPrefix(p.Name, PartStep):
			w := getWalker(p.Value)
			var log []byte
			ok := w.members(stepFields, func(i int) bool {
				v, ok := w.raw()
				switch stepFields.names[i] {
				case "log":
					log = v
				case "output":
				default:
					return false
				}
				return ok
			}) && w.end()
			putWalker(w)
			if !ok {
				return nil, false
			}
			if log != nil {
				logs = append(logs, stepLog{id: strings.TrimPrefix(p.Name, PartStep), log: log})
			}
		}
	}
	// Sorted as json.Marshal sorts a map's keys; of two parts of one step
	// the later one counts, as it would in a map.
	slices.SortStableFunc(logs, func(a, b stepLog) int { return strings.Compare(a.id, b.id) })

	b := make([]byte, 0, len(head)+partsSize(parts)+256)
	w := getWalker(head)
	defer putWalker(w)
	seen := 0
	// Every name of the head, none left out: the answer writes each.
	ok := w.members(headFields, func(i int) bool {
		seen++
		v, ok := w.raw()
		if !ok {
			return false
		}
		name := headFields.names[i]
		if name == "state" {
			// Not shown.
			return true
		}
		sep := byte(',')
		if seen == 1 {
			sep = '{'
		}
		b = append(append(append(b, sep), headFields.quoted[i]...), ':')
		switch name {
		case "workflow_execution_id", "workflow_id", "organization_id", "workspace_id", "workflow_current_state",
			"workflow_trigger_type", "triggered_by", "status":
			b, ok = appendStr(b, v)
		case "workflow_version", "created_on", "modified_on":
			b, ok = appendInt(b, v)
		case "workflow_event_log", "workflow_output_payload":
			b = append(b, v...)
		case "condensed_logs":
			// The head keeps no logs: an empty object, or null for an
			// execution that has none.
			switch {
			case string(v) != "{}" && string(v) != "null":
				ok = false
			case len(logs) > 0:
				sep := byte('{')
				for j, l := range logs {
					if j+1 < len(logs) && logs[j+1].id == l.id {
						continue
					}
					b = append(appendString(append(b, sep), l.id), ':')
					b, sep = append(b, l.log...), ','
				}
				b = append(b, '}')
			default:
				b = append(b, v...)
			}
		case "workflow_input_payload":
			if input == nil {
				input = []byte("{}")
			}
			b = append(b, input...)
		case "workflow_details":
			b, ok = appendDetails(b, v, workflow, steps, conns)
		case "modified_by":
			if string(v) == "null" {
				b = append(b, v...)
			} else {
				b, ok = appendStr(b, v)
			}
		default:
			ok = false
		}
		return ok
	}) && seen == len(headFields.names) && w.end()
	if !ok {
		return nil, false
	}
	return append(b, '}'), true
}

// appendDetails appends the workflow details of a head, v, with the steps
// and connections of the workflow part when there is one.
func appendDetails(b, v []byte, workflow bool, steps, conns []byte) ([]byte, bool) {
	var name []byte
	w := getWalker(v)
	defer putWalker(w)
	seen := 0
	ok := w.members(detailsFields, func(i int) bool {
		seen++
		v, ok := w.raw()
		switch detailsFields.names[i] {
		case "workflow_name":
			name = v
		case "workflow_steps":
			if !workflow {
				steps = v
			}
		case "workflow_connections":
			if !workflow {
				conns = v
			}
		default:
			return false
		}
		return ok
	}) && seen == len(detailsFields.names)
	if !ok {
		return b, false
	}
	b = append(b, `{"workflow_name":`...)
	if b, ok = appendStr(b, name); !ok {
		return b, false
	}
	return append(appendRaw(appendRaw(b, `,"workflow_steps":`, steps), `,"workflow_connections":`, conns), '}'), true
}

// appendRaw appends name and v, or null for no value, as json.Marshal
// writes a nil json.RawMessage.
func appendRaw(b []byte, name string, v []byte) []byte {
	if v == nil {
		v = []byte("null")
	}
	return append(append(b, name...), v...)
}

// walkHead is DecodeHead for a head in the layout encodeHead writes, its
// ids, statuses, times and event log read as they are walked; false for
// any other.
func walkHead(head []byte) (*cardflow.Execution, bool) {
	e := new(cardflow.Execution)
	w := getWalker(head)
	defer putWalker(w)
	w.text = string(head)
	ok := w.members(headFields, func(i int) bool {
		var ok bool
		var n int64
		switch headFields.names[i] {
		case "workflow_execution_id":
			e.WorkflowExecutionID, ok = w.str()
		case "workflow_id":
			e.WorkflowID, ok = w.str()
		case "workflow_version":
			n, ok = w.int()
			e.WorkflowVersion = int(n)
		case "organization_id":
			e.OrganizationID, ok = w.str()
		case "workspace_id":
			e.WorkspaceID, ok = w.str()
		case "workflow_current_state":
			e.WorkflowCurrentState, ok = w.str()
		case "workflow_trigger_type":
			e.WorkflowTriggerType, ok = w.str()
		case "triggered_by":
			e.TriggeredBy, ok = w.str()
		case "status":
			e.Status, ok = w.str()
		case "workflow_event_log":
			ok = w.eventLog(&e.WorkflowEventLog)
		case "condensed_logs":
			ok = object(w, &e.CondensedLogs)
		case "workflow_input_payload":
			ok = w.payload(&e.WorkflowInputPayload)
		case "workflow_output_payload":
			ok = w.payload(&e.WorkflowOutputPayload)
		case "workflow_details":
			ok = w.details(&e.WorkflowDetails)
		case "modified_by":
			if w.d.PeekKind() == 'n' {
				_, ok = w.raw()
			} else {
				var s string
				s, ok = w.str()
				e.ModifiedBy = &s
			}
		case "created_on":
			e.CreatedOn, ok = w.int()
		case "modified_on":
			e.ModifiedOn, ok = w.int()
		case "state":
			ok = w.state(&e.State)
		default:
			ok = false
		}
		return ok
	}) && w.end()
	if !ok {
		return nil, false
	}
	// A payload left out reads as PayloadOf makes nothing.
	e.WorkflowInputPayload, e.WorkflowOutputPayload = cardflow.PayloadOf(e.WorkflowInputPayload), cardflow.PayloadOf(e.WorkflowOutputPayload)
	return e, true
}

// decode reads the next value into v with encoding/json, which reads a
// value inside a record as it reads it alone.
func (w *walker) decode(v any) bool {
	raw, ok := w.raw()
	return ok && json.Unmarshal(raw, v) == nil
}

// payload reads a payload as UnmarshalJSON does: any value, made an object
// by PayloadOf.
func (w *walker) payload(p *map[string]any) bool {
	raw, ok := w.raw()
	if !ok {
		return false
	}
	var v any
	if string(raw) == "{}" {
		v = map[string]any{}
	} else if json.Unmarshal(raw, &v) != nil {
		return false
	}
	*p = cardflow.PayloadOf(v)
	return true
}

// eventLog reads an event log as encoding/json decodes it.
func (w *walker) eventLog(l *cardflow.EventLog) bool {
	return w.members(eventLogFields, func(i int) bool {
		switch eventLogFields.names[i] {
		case "total":
			n, ok := w.int()
			l.Total = int(n)
			return ok
		case "events":
		default:
			return false
		}
		switch w.d.PeekKind() {
		case 'n':
			_, ok := w.raw()
			return ok
		case '[':
		default:
			return false
		}
		w.delim('[')
		l.Events = make([]cardflow.Event, 0, 16)
		for w.d.PeekKind() == '{' {
			var ev cardflow.Event
			ok := w.members(eventFields, func(i int) bool {
				var ok bool
				switch eventFields.names[i] {
				case "at":
					ev.At, ok = w.int()
				case "type":
					ev.Type, ok = w.str()
				case "step_id":
					ev.StepID, ok = w.str()
				case "step":
					ev.Step, ok = w.str()
				case "actor":
					ev.Actor, ok = w.str()
				case "message":
					ev.Message, ok = w.str()
				}
				return ok
			})
			if !ok {
				return false
			}
			l.Events = append(l.Events, ev)
		}
		return w.delim(']')
	})
}

// object reads a map that is empty or null as encoding/json decodes it,
// and any other with encoding/json.
func object[V any](w *walker, m *map[string]V) bool {
	switch w.d.PeekKind() {
	case 'n':
		_, ok := w.raw()
		return ok
	case '{':
		raw, ok := w.raw()
		if ok && string(raw) == "{}" {
			*m = map[string]V{}
			return true
		}
		return ok && json.Unmarshal(raw, m) == nil
	}
	return false
}

// details reads workflow details as encoding/json decodes them.
func (w *walker) details(d *cardflow.WorkflowDetails) bool {
	return w.members(detailsFields, func(i int) bool {
		var ok bool
		switch detailsFields.names[i] {
		case "workflow_name":
			d.WorkflowName, ok = w.str()
		case "workflow_steps":
			ok = w.decode(&d.WorkflowSteps)
		case "workflow_connections":
			ok = w.decode(&d.WorkflowConnections)
		}
		return ok
	})
}

// state reads the engine's state of a head as encoding/json decodes it.
func (w *walker) state(st *cardflow.ExecutionState) bool {
	return w.members(stateFields, func(i int) bool {
		var ok bool
		var n int64
		switch stateFields.names[i] {
		case "step_id":
			st.StepID, ok = w.str()
		case "phase":
			st.Phase, ok = w.str()
		case "outputs":
			ok = object(w, &st.Outputs)
		case "process_id":
			st.ProcessID, ok = w.str()
		case "wake_at":
			st.WakeAt, ok = w.int()
		case "steps_run":
			n, ok = w.int()
			st.StepsRun = int(n)
		case "wait":
			n, ok = w.int()
			st.Wait = int(n)
		case "integrations":
			ok = w.decode(&st.Integrations)
		case "failed_step":
			st.FailedStep, ok = w.str()
		case "run":
			n, ok = w.int()
			st.Run = int(n)
		case "trace_parent":
			st.TraceParent, ok = w.str()
		}
		return ok
	})
}

// HeadStatus reads the status and modified_on of a stored head: a waiter
// asks at every change of the execution, so the head is walked, not
// decoded; a head in another layout is decoded.
func HeadStatus(head []byte) (status string, modifiedOn int64, err error) {
	w := getWalker(head)
	ok := w.members(headFields, func(i int) bool {
		var ok bool
		switch headFields.names[i] {
		case "status":
			status, ok = w.str()
		case "modified_on":
			modifiedOn, ok = w.int()
		default:
			_, ok = w.raw()
		}
		return ok
	}) && w.end()
	putWalker(w)
	if ok {
		return status, modifiedOn, nil
	}
	var h struct {
		Status     string `json:"status"`
		ModifiedOn int64  `json:"modified_on"`
	}
	if err := json.Unmarshal(head, &h); err != nil {
		return "", 0, &cardflow.UnreadableError{Err: fmt.Errorf("decode execution head: %w", err)}
	}
	return h.Status, h.ModifiedOn, nil
}
