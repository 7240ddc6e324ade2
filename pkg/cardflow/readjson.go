package cardflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

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

// members reads an object whose names are among names, in their order,
// each at most once, spelled as names quotes them, and calls member with
// the index of each name to read its value. A name that is not there
// (another spelling, an unknown name, a repeated or misplaced one) ends
// the walk as false: encoding/json would match names regardless of case
// and let a later value overwrite an earlier one.
func (w *walker) members(names []string, member func(i int) bool) bool {
	if !w.delim('{') {
		return false
	}
	next := 0
	for w.d.PeekKind() == '"' {
		name, ok := w.raw()
		if !ok {
			return false
		}
		i := slices.Index(names[next:], string(name))
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

// The names of a head in the order encodeHead writes them, and of what
// the head holds inside.
var (
	headNames = []string{`"workflow_execution_id"`, `"workflow_id"`, `"workflow_version"`, `"organization_id"`, `"workspace_id"`,
		`"workflow_current_state"`, `"workflow_trigger_type"`, `"triggered_by"`, `"status"`, `"workflow_event_log"`,
		`"condensed_logs"`, `"workflow_input_payload"`, `"workflow_output_payload"`, `"workflow_details"`, `"modified_by"`, `"created_on"`,
		`"modified_on"`, `"state"`}
	detailsNames  = []string{`"workflow_name"`, `"workflow_steps"`, `"workflow_connections"`}
	eventLogNames = []string{`"events"`, `"total"`}
	stateNames    = []string{`"step_id"`, `"phase"`, `"outputs"`, `"process_id"`, `"wake_at"`, `"steps_run"`, `"wait"`,
		`"integrations"`, `"failed_step"`, `"run"`, `"trace_parent"`}
	eventNames    = []string{`"at"`, `"type"`, `"step_id"`, `"step"`, `"actor"`, `"message"`}
	workflowNames = []string{`"workflow_steps"`, `"workflow_connections"`, `"integrations"`}
	stepNames     = []string{`"output"`, `"log"`}
)

// Indexes of headNames.
const (
	hExecutionID = iota
	hWorkflowID
	hVersion
	hOrganization
	hWorkspace
	hCurrentState
	hTriggerType
	hTriggeredBy
	hStatus
	hEventLog
	hCondensedLogs
	hInput
	hOutput
	hDetails
	hModifiedBy
	hCreatedOn
	hModifiedOn
	hState
)

// stepLog is the log of a step part, by step id.
type stepLog struct {
	id  string
	log []byte
}

// assembleExecutionJSON is ExecutionJSON for a head and parts in the
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
			ok := w.members(workflowNames, func(i int) bool {
				v, ok := w.raw()
				switch i {
				case 0:
					steps = v
				case 1:
					conns = v
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
			ok := w.members(stepNames, func(i int) bool {
				v, ok := w.raw()
				if i == 1 {
					log = v
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
	ok := w.members(headNames, func(i int) bool {
		seen++
		v, ok := w.raw()
		if !ok {
			return false
		}
		switch i {
		case hExecutionID:
			b = append(b, `{"workflow_execution_id":`...)
			b, ok = appendStr(b, v)
		case hWorkflowID, hOrganization, hWorkspace, hCurrentState, hTriggerType, hTriggeredBy, hStatus:
			b = append(append(append(b, ','), headNames[i]...), ':')
			b, ok = appendStr(b, v)
		case hVersion, hCreatedOn, hModifiedOn:
			b = append(append(append(b, ','), headNames[i]...), ':')
			b, ok = appendInt(b, v)
		case hEventLog:
			b = append(append(b, `,"workflow_event_log":`...), v...)
		case hCondensedLogs:
			// The head keeps no logs: an empty object, or null for an
			// execution that has none.
			b = append(b, `,"condensed_logs":`...)
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
		case hInput:
			if input == nil {
				input = []byte("{}")
			}
			b = append(append(b, `,"workflow_input_payload":`...), input...)
		case hOutput:
			b = append(append(b, `,"workflow_output_payload":`...), v...)
		case hDetails:
			b, ok = appendDetails(b, v, workflow, steps, conns)
		case hModifiedBy:
			b = append(b, `,"modified_by":`...)
			if string(v) == "null" {
				b = append(b, v...)
			} else {
				b, ok = appendStr(b, v)
			}
		}
		return ok
	}) && seen == len(headNames) && w.end()
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
	ok := w.members(detailsNames, func(i int) bool {
		seen++
		v, ok := w.raw()
		switch {
		case i == 0:
			name = v
		case !workflow && i == 1:
			steps = v
		case !workflow && i == 2:
			conns = v
		}
		return ok
	}) && seen == len(detailsNames)
	if !ok {
		return b, false
	}
	b = append(b, `,"workflow_details":{"workflow_name":`...)
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
func walkHead(head []byte) (*Execution, bool) {
	e := new(Execution)
	w := getWalker(head)
	defer putWalker(w)
	w.text = string(head)
	ok := w.members(headNames, func(i int) bool {
		ok := true
		switch i {
		case hExecutionID:
			e.WorkflowExecutionID, ok = w.str()
		case hWorkflowID:
			e.WorkflowID, ok = w.str()
		case hVersion:
			var n int64
			n, ok = w.int()
			e.WorkflowVersion = int(n)
		case hOrganization:
			e.OrganizationID, ok = w.str()
		case hWorkspace:
			e.WorkspaceID, ok = w.str()
		case hCurrentState:
			e.WorkflowCurrentState, ok = w.str()
		case hTriggerType:
			e.WorkflowTriggerType, ok = w.str()
		case hTriggeredBy:
			e.TriggeredBy, ok = w.str()
		case hStatus:
			e.Status, ok = w.str()
		case hEventLog:
			ok = w.eventLog(&e.WorkflowEventLog)
		case hCondensedLogs:
			ok = object(w, &e.CondensedLogs)
		case hInput:
			ok = w.payload(&e.WorkflowInputPayload)
		case hOutput:
			ok = w.payload(&e.WorkflowOutputPayload)
		case hDetails:
			ok = w.details(&e.WorkflowDetails)
		case hModifiedBy:
			if w.d.PeekKind() == 'n' {
				_, ok = w.raw()
			} else {
				var s string
				s, ok = w.str()
				e.ModifiedBy = &s
			}
		case hCreatedOn:
			e.CreatedOn, ok = w.int()
		case hModifiedOn:
			e.ModifiedOn, ok = w.int()
		case hState:
			ok = w.state(&e.State)
		}
		return ok
	}) && w.end()
	if !ok {
		return nil, false
	}
	// A payload left out reads as PayloadOf makes nothing.
	e.WorkflowInputPayload, e.WorkflowOutputPayload = PayloadOf(e.WorkflowInputPayload), PayloadOf(e.WorkflowOutputPayload)
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
	*p = PayloadOf(v)
	return true
}

// eventLog reads an event log as encoding/json decodes it.
func (w *walker) eventLog(l *EventLog) bool {
	return w.members(eventLogNames, func(i int) bool {
		if i == 1 {
			n, ok := w.int()
			l.Total = int(n)
			return ok
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
		l.Events = make([]Event, 0, 16)
		for w.d.PeekKind() == '{' {
			var ev Event
			ok := w.members(eventNames, func(i int) bool {
				var ok bool
				switch i {
				case 0:
					ev.At, ok = w.int()
				case 1:
					ev.Type, ok = w.str()
				case 2:
					ev.StepID, ok = w.str()
				case 3:
					ev.Step, ok = w.str()
				case 4:
					ev.Actor, ok = w.str()
				case 5:
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
func (w *walker) details(d *WorkflowDetails) bool {
	return w.members(detailsNames, func(i int) bool {
		var ok bool
		switch i {
		case 0:
			d.WorkflowName, ok = w.str()
		case 1:
			ok = w.decode(&d.WorkflowSteps)
		case 2:
			ok = w.decode(&d.WorkflowConnections)
		}
		return ok
	})
}

// state reads the engine's state of a head as encoding/json decodes it.
func (w *walker) state(st *ExecutionState) bool {
	return w.members(stateNames, func(i int) bool {
		var ok bool
		var n int64
		switch i {
		case 0:
			st.StepID, ok = w.str()
		case 1:
			st.Phase, ok = w.str()
		case 2:
			ok = object(w, &st.Outputs)
		case 3:
			st.ProcessID, ok = w.str()
		case 4:
			st.WakeAt, ok = w.int()
		case 5:
			n, ok = w.int()
			st.StepsRun = int(n)
		case 6:
			n, ok = w.int()
			st.Wait = int(n)
		case 7:
			ok = w.decode(&st.Integrations)
		case 8:
			st.FailedStep, ok = w.str()
		case 9:
			n, ok = w.int()
			st.Run = int(n)
		case 10:
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
	ok := w.members(headNames, func(i int) bool {
		var ok bool
		switch i {
		case hStatus:
			status, ok = w.str()
		case hModifiedOn:
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
		return "", 0, &UnreadableError{Err: fmt.Errorf("decode execution head: %w", err)}
	}
	return h.Status, h.ModifiedOn, nil
}
