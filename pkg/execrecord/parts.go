// Package execrecord is the layout a store keeps an execution in: a head
// and parts (Split, Join), read back by walking the stored JSON rather than
// decoding it (DecodeHead, JSON, HeadStatus), and the layouts of before
// (Marshal, Unmarshal). Stores that keep JSON use it; the domain
// (pkg/cardflow) knows nothing of it but the handle a read leaves on an
// execution (cardflow.StoredRecord).
package execrecord

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// decoderDepth is how deep Go's JSON decoder reads.
const decoderDepth = 10_000

// An execution is stored in parts, so that a step writes what it changed
// rather than the whole execution: the head (ids, status, current step,
// event log, output payload and the engine's counters), the input, the
// workflow it runs, and one part per step holding the step's output and
// condensed log. Stores that keep JSON write the head and the parts a
// write returns, in one atomic change.
const (
	PartInput    = "input"
	PartWorkflow = "workflow"
	// PartStep prefixes the part of a step: "step/" and the step id.
	PartStep = "step/"
)

// Part is one stored part of an execution.
type Part struct {
	Name  string
	Value []byte
}

// Write is what a store writes to store an execution.
type Write struct {
	Head []byte
	// Parts are the parts that are new or changed since the execution was
	// read or last written, by name.
	Parts []Part
	// Gone names stored parts the execution no longer has.
	Gone []string
	// Size is what cardflow.MaxStateBytes bounds.
	Size int
	// Whole is set when every part is written: no store held the
	// execution in parts (a new one, or one read from a record of the
	// layout before parts).
	Whole bool
	// Events are the events of the write, which the store keeps with it
	// (EventStore).
	Events []*cardflow.Published
	stored *storedParts
}

// storedParts is what an execution knows of its stored parts: a digest of
// each, and their size. It is the cardflow.StoredRecord a read or write
// leaves on the execution.
type storedParts struct {
	sums map[string][sha256.Size]byte
	size int
	// status and events are the status and log total stored, from which
	// the next write's events count.
	status string
	events int
	// head is the size of the stored head.
	head int
	// known are the parts whose source is known: Split encodes those
	// again only when their source changed.
	known map[string]knownPart
}

// workflowPart is the part that holds what an execution runs.
type workflowPart struct {
	Steps        []cardflow.Step       `json:"workflow_steps"`
	Connections  []cardflow.Connection `json:"workflow_connections"`
	Integrations map[string]any        `json:"integrations"`
}

// stepPart is the part of one step. A step may have a log and no output
// yet (it waits), and an output may be null, hence the raw output.
type stepPart struct {
	Output json.RawMessage   `json:"output,omitempty"`
	Log    *cardflow.StepLog `json:"log,omitempty"`
}

// Status is the execution's status as stored.
func (s *storedParts) Status() string { return s.status }

// Bytes is the size of the head and parts as stored.
func (s *storedParts) Bytes() int { return s.head + s.size + s.known[PartWorkflow].size }

// storedOf returns the handle e carries of its stored parts; nil when no
// store read or wrote it in this layout.
func storedOf(e *cardflow.Execution) *storedParts {
	s, _ := e.Stored.(*storedParts)
	return s
}

// Split encodes e for a store: its head, and the parts that differ from
// those stored when e was read or last written, as e.Stored tells (all
// of them for an execution read from no parts). It fails with ETOOLARGE
// when the state would pass cardflow.MaxStateBytes and grow beyond what
// is stored, which a write that only ends the execution never does.
func Split(e *cardflow.Execution) (*Write, error) {
	// An execution no store has read or written (a new one, or one read
	// from a record of the layout before parts) is taken at the size it
	// has: only growth past the cap fails.
	prev := storedOf(e)
	var old storedParts
	if prev != nil {
		old = *prev
	}
	parts := map[string]knownPart{}
	var values map[string][]byte
	// encode encodes the part name unless its source is the one stored.
	encode := func(name string, src partSource, v any) ([]byte, error) {
		if k, ok := old.known[name]; ok && k.src.same(src) {
			parts[name] = k
			return nil, nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if values == nil {
			values = map[string][]byte{}
		}
		values[name] = b
		parts[name] = knownPart{sum: sha256.Sum256(b), size: len(b), src: src}
		return b, nil
	}
	in, err := encode(PartInput, inputSource(e), cardflow.PayloadOf(e.WorkflowInputPayload))
	if err != nil {
		return nil, err
	}
	// The input comes from outside; a caller that did not check its depth
	// must not get it stored where no read can decode it.
	if n := cardflow.Nesting(in); in != nil && n > decoderDepth {
		return nil, cardflow.Errorf(cardflow.EINVALID, "the input nests %d levels deep, deeper than a stored execution can be read back", n)
	}
	wp := workflowPart{Steps: e.WorkflowDetails.WorkflowSteps, Connections: e.WorkflowDetails.WorkflowConnections, Integrations: e.State.Integrations}
	if _, err := encode(PartWorkflow, workflowSource(e), wp); err != nil {
		return nil, err
	}
	size := parts[PartInput].size
	for _, id := range stepIDs(e) {
		src := stepSource(e, id)
		var sp stepPart
		if src.hasOut {
			if k, ok := old.known[PartStep+id]; !ok || !k.src.same(src) {
				if sp.Output, err = json.Marshal(src.out); err != nil {
					return nil, err
				}
			}
		}
		if src.hasLog {
			sp.Log = &src.log
		}
		if _, err := encode(PartStep+id, src, sp); err != nil {
			return nil, err
		}
		size += parts[PartStep+id].size
	}
	if prev == nil {
		old.size = size
	}
	if size > cardflow.MaxStateBytes && size > old.size {
		return nil, cardflow.Errorf(cardflow.ETOOLARGE, "execution state would be %s; an execution may hold at most %s", megabytes(size), megabytes(cardflow.MaxStateBytes))
	}
	head, err := encodeHead(e)
	if err != nil {
		return nil, err
	}
	w := &Write{Head: head, Size: size, Whole: prev == nil,
		stored: &storedParts{sums: make(map[string][sha256.Size]byte, len(parts)), size: size, head: len(head), known: parts}}
	w.Events, w.stored.status, w.stored.events = e.EventsSince(old.status, old.events), e.Status, e.WorkflowEventLog.Total
	for _, name := range slices.Sorted(maps.Keys(parts)) {
		sum := parts[name].sum
		w.stored.sums[name] = sum
		if was, ok := old.sums[name]; !ok || was != sum {
			w.Parts = append(w.Parts, Part{Name: name, Value: values[name]})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(old.sums)) {
		if _, ok := parts[name]; !ok {
			w.Gone = append(w.Gone, name)
		}
	}
	return w, nil
}

// Wrote tells e that w is stored now, so the next Split leaves out what
// did not change.
func Wrote(e *cardflow.Execution, w *Write) { e.Stored = w.stored }

// megabytes writes n bytes as megabytes: whole, or rounded up to one
// decimal, so a size just past the cap never reads as the cap.
func megabytes(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%.1f MB", math.Ceil(float64(n)/(1<<20)*10)/10)
}

// stepIDs returns the ids of the steps that have an output or a log.
func stepIDs(e *cardflow.Execution) []string {
	ids := slices.Collect(maps.Keys(e.State.Outputs))
	for id := range e.CondensedLogs {
		if _, ok := e.State.Outputs[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// encodeHead encodes e without what its parts hold. An empty map of
// condensed logs or outputs stays an empty map, so a read gives back what
// was written.
func encodeHead(e *cardflow.Execution) ([]byte, error) {
	f := withPayloads(e)
	f.WorkflowInputPayload = nil
	f.WorkflowDetails.WorkflowSteps, f.WorkflowDetails.WorkflowConnections = nil, nil
	st := e.State
	st.Integrations = nil
	if f.CondensedLogs != nil {
		f.CondensedLogs = map[string]cardflow.StepLog{}
	}
	if st.Outputs != nil {
		st.Outputs = map[string]any{}
	}
	return json.Marshal(headRecord{f, st})
}

// DecodeHead decodes a head alone, as lists show it: without input, logs,
// outputs and the workflow's steps.
func DecodeHead(head []byte) (*cardflow.Execution, error) {
	if e, ok := walkHead(head); ok {
		return e, nil
	}
	e, err := Unmarshal(head)
	if err != nil {
		return nil, &cardflow.UnreadableError{Err: fmt.Errorf("decode execution head: %w", err)}
	}
	return e, nil
}

// Join decodes an execution from its head and parts, at revision, with
// the handle on them that its next Split takes. When they do not decode,
// the error is a cardflow.UnreadableError whose Head is the execution less
// what lies too deep to decode in the parts that do not (see
// cardflow.Prune); a write of that head replaces the parts that were
// pruned.
func Join(head []byte, parts []Part, revision int64) (*cardflow.Execution, error) {
	e, err := join(head, parts, revision)
	if err == nil {
		return e, nil
	}
	ue := &cardflow.UnreadableError{Err: err}
	// Only what does not decode is pruned: the rest stays whole.
	pruned := make([]Part, len(parts))
	for i, p := range parts {
		pruned[i] = p
		if setPart(&cardflow.Execution{}, p) != nil {
			pruned[i].Value = cardflow.Prune(p.Value)
		}
	}
	if json.Unmarshal(head, new(cardflow.Execution)) != nil {
		head = cardflow.Prune(head)
	}
	if h, err := join(head, pruned, revision); err == nil {
		// What was stored is what the digests describe.
		h.Stored = digests(parts)
		ue.Head = h
	}
	return nil, ue
}

func digests(parts []Part) *storedParts {
	s := &storedParts{sums: make(map[string][sha256.Size]byte, len(parts))}
	for _, p := range parts {
		s.sums[p.Name] = sha256.Sum256(p.Value)
		if p.Name != PartWorkflow {
			s.size += len(p.Value)
		}
	}
	return s
}

func join(head []byte, parts []Part, revision int64) (*cardflow.Execution, error) {
	e, err := Unmarshal(head)
	if err != nil {
		return nil, fmt.Errorf("decode execution head: %w", err)
	}
	e.Revision = revision
	for _, p := range parts {
		if err := setPart(e, p); err != nil {
			return nil, fmt.Errorf("decode execution part %s: %w", p.Name, err)
		}
	}
	s := digests(parts)
	s.status, s.events = e.Status, e.WorkflowEventLog.Total
	s.head = len(head)
	s.known = make(map[string]knownPart, len(parts))
	for _, p := range parts {
		s.known[p.Name] = knownPart{sum: s.sums[p.Name], size: len(p.Value), src: sourceOf(e, p.Name)}
	}
	e.Stored = s
	return e, nil
}

func setPart(e *cardflow.Execution, p Part) error {
	switch {
	case p.Name == PartInput:
		var in any
		if err := json.Unmarshal(p.Value, &in); err != nil {
			return err
		}
		e.WorkflowInputPayload = cardflow.PayloadOf(in)
	case p.Name == PartWorkflow:
		var wp workflowPart
		if err := json.Unmarshal(p.Value, &wp); err != nil {
			return err
		}
		e.WorkflowDetails.WorkflowSteps, e.WorkflowDetails.WorkflowConnections = wp.Steps, wp.Connections
		e.State.Integrations = wp.Integrations
	case strings.HasPrefix(p.Name, PartStep):
		id := strings.TrimPrefix(p.Name, PartStep)
		var sp stepPart
		if err := json.Unmarshal(p.Value, &sp); err != nil {
			return err
		}
		if sp.Output != nil {
			var out any
			if err := json.Unmarshal(sp.Output, &out); err != nil {
				return err
			}
			if e.State.Outputs == nil {
				e.State.Outputs = map[string]any{}
			}
			e.State.Outputs[id] = out
		}
		if sp.Log != nil {
			if e.CondensedLogs == nil {
				e.CondensedLogs = map[string]cardflow.StepLog{}
			}
			e.CondensedLogs[id] = *sp.Log
		}
	default:
		return errors.New("unknown part")
	}
	return nil
}

// executionView is an execution as the API shows it, with its free-form
// values left encoded: JSON copies them from the parts as they
// are. Its fields are cardflow.Execution's, in its order
// (TestFieldsAreWhatMarshalWrites holds it to them).
type executionView struct {
	WorkflowExecutionID   string                     `json:"workflow_execution_id"`
	WorkflowID            string                     `json:"workflow_id"`
	WorkflowVersion       int                        `json:"workflow_version"`
	OrganizationID        string                     `json:"organization_id"`
	WorkspaceID           string                     `json:"workspace_id"`
	WorkflowCurrentState  string                     `json:"workflow_current_state"`
	WorkflowTriggerType   string                     `json:"workflow_trigger_type"`
	TriggeredBy           string                     `json:"triggered_by"`
	Status                string                     `json:"status"`
	WorkflowEventLog      json.RawMessage            `json:"workflow_event_log"`
	CondensedLogs         map[string]json.RawMessage `json:"condensed_logs"`
	WorkflowInputPayload  json.RawMessage            `json:"workflow_input_payload"`
	WorkflowOutputPayload json.RawMessage            `json:"workflow_output_payload"`
	WorkflowDetails       struct {
		WorkflowName        string          `json:"workflow_name"`
		WorkflowSteps       json.RawMessage `json:"workflow_steps"`
		WorkflowConnections json.RawMessage `json:"workflow_connections"`
	} `json:"workflow_details"`
	ModifiedBy *string `json:"modified_by"`
	CreatedOn  int64   `json:"created_on"`
	ModifiedOn int64   `json:"modified_on"`
}

// JSON encodes the execution stored as head and parts as the API shows it
// (what json.Marshal gives of the joined execution), copying its payloads,
// logs and steps from the parts without decoding them into values. Parts
// that do not decode give a cardflow.UnreadableError without a head.
func JSON(head []byte, parts []Part) ([]byte, error) {
	if b, ok := assembleExecutionJSON(head, parts); ok {
		return b, nil
	}
	return decodeExecutionJSON(head, parts)
}

// decodeExecutionJSON is JSON for a head and parts in any layout
// encoding/json reads, and for those that do not decode.
func decodeExecutionJSON(head []byte, parts []Part) ([]byte, error) {
	var v executionView
	if err := json.Unmarshal(head, &v); err != nil {
		return nil, &cardflow.UnreadableError{Err: fmt.Errorf("decode execution head: %w", err)}
	}
	v.WorkflowInputPayload = json.RawMessage("{}")
	for _, p := range parts {
		var err error
		switch {
		case p.Name == PartInput:
			if !json.Valid(p.Value) {
				err = errors.New("not JSON")
			}
			v.WorkflowInputPayload = p.Value
		case p.Name == PartWorkflow:
			var wp struct {
				Steps       json.RawMessage `json:"workflow_steps"`
				Connections json.RawMessage `json:"workflow_connections"`
			}
			err = json.Unmarshal(p.Value, &wp)
			v.WorkflowDetails.WorkflowSteps, v.WorkflowDetails.WorkflowConnections = wp.Steps, wp.Connections
		case strings.HasPrefix(p.Name, PartStep):
			var sp struct {
				Log json.RawMessage `json:"log"`
			}
			if err = json.Unmarshal(p.Value, &sp); err == nil && sp.Log != nil {
				if v.CondensedLogs == nil {
					v.CondensedLogs = map[string]json.RawMessage{}
				}
				v.CondensedLogs[strings.TrimPrefix(p.Name, PartStep)] = sp.Log
			}
		}
		if err != nil {
			return nil, &cardflow.UnreadableError{Err: fmt.Errorf("decode execution part %s: %w", p.Name, err)}
		}
	}
	return v.appendJSON(make([]byte, 0, len(head)+partsSize(parts)+256)), nil
}

// appendString appends s quoted as json.Marshal quotes it: as it is when
// it holds only printable ASCII that needs no escape, as ids and statuses
// do, else through json.Marshal.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

func partsSize(parts []Part) int {
	n := 0
	for _, p := range parts {
		n += len(p.Value)
	}
	return n
}

// appendJSON writes v as json.Marshal does, copying its raw values as they
// are. They were validated as they were decoded into v, and they are
// compact and escaped already, since json.Marshal wrote them into the
// store; json.Marshal would scan and compact them once more, which was a
// third of the server's time per read.
func (v *executionView) appendJSON(b []byte) []byte {
	str := func(name, s string) { b = appendString(append(b, name...), s) }
	raw := func(name string, r json.RawMessage) {
		b = append(b, name...)
		if r == nil {
			r = json.RawMessage("null")
		}
		b = append(b, r...)
	}
	str(`{"workflow_execution_id":`, v.WorkflowExecutionID)
	str(`,"workflow_id":`, v.WorkflowID)
	b = strconv.AppendInt(append(b, `,"workflow_version":`...), int64(v.WorkflowVersion), 10)
	str(`,"organization_id":`, v.OrganizationID)
	str(`,"workspace_id":`, v.WorkspaceID)
	str(`,"workflow_current_state":`, v.WorkflowCurrentState)
	str(`,"workflow_trigger_type":`, v.WorkflowTriggerType)
	str(`,"triggered_by":`, v.TriggeredBy)
	str(`,"status":`, v.Status)
	raw(`,"workflow_event_log":`, v.WorkflowEventLog)
	b = append(b, `,"condensed_logs":`...)
	if v.CondensedLogs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		for i, id := range slices.Sorted(maps.Keys(v.CondensedLogs)) {
			sep := ""
			if i > 0 {
				sep = ","
			}
			str(sep, id)
			raw(":", v.CondensedLogs[id])
		}
		b = append(b, '}')
	}
	raw(`,"workflow_input_payload":`, v.WorkflowInputPayload)
	raw(`,"workflow_output_payload":`, v.WorkflowOutputPayload)
	str(`,"workflow_details":{"workflow_name":`, v.WorkflowDetails.WorkflowName)
	raw(`,"workflow_steps":`, v.WorkflowDetails.WorkflowSteps)
	raw(`,"workflow_connections":`, v.WorkflowDetails.WorkflowConnections)
	b = append(b, `},"modified_by":`...)
	if v.ModifiedBy == nil {
		b = append(b, "null"...)
	} else {
		str("", *v.ModifiedBy)
	}
	b = strconv.AppendInt(append(b, `,"created_on":`...), v.CreatedOn, 10)
	b = strconv.AppendInt(append(b, `,"modified_on":`...), v.ModifiedOn, 10)
	return append(b, '}')
}
