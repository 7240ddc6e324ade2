package execrecord

import (
	"crypto/sha256"
	"math"
	"reflect"
	"strings"
	"unsafe"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// partSource is what a part was encoded from, or decoded into, held by
// reference: a part whose values are the very ones of the stored part's
// bytes encodes to those bytes again, so Split reuses its digest and size
// rather than encoding it. That holds because stored values are replaced,
// never changed in place: the engine sets a step's output and log anew,
// and a read decodes new values.
type partSource struct {
	input        map[string]any
	steps        []cardflow.Step
	conns        []cardflow.Connection
	integrations map[string]any
	out          any
	log          cardflow.StepLog
	hasOut       bool
	hasLog       bool
}

// knownPart is a stored part whose source is known.
type knownPart struct {
	sum  [sha256.Size]byte
	size int
	src  partSource
}

func inputSource(e *cardflow.Execution) partSource { return partSource{input: e.WorkflowInputPayload} }

func workflowSource(e *cardflow.Execution) partSource {
	return partSource{steps: e.WorkflowDetails.WorkflowSteps, conns: e.WorkflowDetails.WorkflowConnections, integrations: e.State.Integrations}
}

func stepSource(e *cardflow.Execution, id string) partSource {
	s := partSource{}
	s.out, s.hasOut = e.State.Outputs[id]
	s.log, s.hasLog = e.CondensedLogs[id]
	return s
}

// sourceOf returns the source of the part name of e.
func sourceOf(e *cardflow.Execution, name string) partSource {
	switch name {
	case PartInput:
		return inputSource(e)
	case PartWorkflow:
		return workflowSource(e)
	}
	return stepSource(e, strings.TrimPrefix(name, PartStep))
}

// same reports whether a and b are the same values, so that they encode
// alike.
func (a partSource) same(b partSource) bool {
	la, lb := a.log, b.log
	la.Input, la.Output, lb.Input, lb.Output = nil, nil, nil, nil
	return sameRef(a.input, b.input) && sameSlice(a.steps, b.steps) && sameSlice(a.conns, b.conns) &&
		sameRef(a.integrations, b.integrations) && a.hasOut == b.hasOut && a.hasLog == b.hasLog &&
		la == lb && sameValue(a.out, b.out) && sameValue(a.log.Input, b.log.Input) && sameValue(a.log.Output, b.log.Output)
}

func sameRef(a, b map[string]any) bool {
	return (a == nil) == (b == nil) && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b) && (a == nil) == (b == nil)
}

// sameValue reports whether a and b are the same JSON value: the same map
// or slice, or equal scalars. Anything else counts as changed.
func sameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() {
		return false
	}
	switch va.Kind() {
	case reflect.Map:
		return va.IsNil() == vb.IsNil() && va.UnsafePointer() == vb.UnsafePointer()
	case reflect.Slice:
		return va.IsNil() == vb.IsNil() && va.UnsafePointer() == vb.UnsafePointer() && va.Len() == vb.Len()
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return a == b
	case reflect.Float32, reflect.Float64:
		// -0 and 0 are equal, but encode apart.
		return math.Float64bits(va.Float()) == math.Float64bits(vb.Float())
	}
	return false
}
