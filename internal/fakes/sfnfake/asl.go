package sfnfake

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Resources of the Lambda service integration the fake runs.
const (
	lambdaInvoke      = "arn:aws:states:::lambda:invoke"
	lambdaInvokeToken = "arn:aws:states:::lambda:invoke.waitForTaskToken"
)

// definition is the subset of the Amazon States Language the fake runs.
type definition struct {
	StartAt string            `json:"StartAt"`
	States  map[string]*state `json:"States"`
}

type state struct {
	Type           string `json:"Type"`
	Next           string `json:"Next"`
	End            bool   `json:"End"`
	Resource       string `json:"Resource"`
	Parameters     any    `json:"Parameters"`
	ResultSelector any    `json:"ResultSelector"`
	// ResultPath is nil for ResultPath null; parseState reads it.
	ResultPath         *string   `json:"-"`
	TimeoutSeconds     int64     `json:"TimeoutSeconds"`
	TimeoutSecondsPath string    `json:"TimeoutSecondsPath"`
	Retry              []retrier `json:"Retry"`
	Catch              []catcher `json:"Catch"`
	Choices            []choice  `json:"Choices"`
	Default            string    `json:"Default"`
	Seconds            int64     `json:"Seconds"`
	TimestampPath      string    `json:"TimestampPath"`
	Error              string    `json:"Error"`
	Cause              string    `json:"Cause"`
}

type retrier struct {
	ErrorEquals     []string `json:"ErrorEquals"`
	IntervalSeconds *float64 `json:"IntervalSeconds"`
	MaxAttempts     *int     `json:"MaxAttempts"`
	BackoffRate     *float64 `json:"BackoffRate"`
	MaxDelaySeconds float64  `json:"MaxDelaySeconds"`
	JitterStrategy  string   `json:"JitterStrategy"`
}

type catcher struct {
	ErrorEquals []string `json:"ErrorEquals"`
	ResultPath  *string  `json:"ResultPath"`
	Next        string   `json:"Next"`
}

type choice struct {
	Variable     string `json:"Variable"`
	StringEquals string `json:"StringEquals"`
	Next         string `json:"Next"`
}

// fields lists the fields of each state type the fake knows; a definition
// using any other is refused, so it never runs something it only pretends
// to understand.
var fields = map[string][]string{
	"Task":    {"Type", "Next", "End", "Resource", "Parameters", "ResultSelector", "ResultPath", "TimeoutSeconds", "TimeoutSecondsPath", "Retry", "Catch", "Comment"},
	"Choice":  {"Type", "Choices", "Default", "Comment"},
	"Wait":    {"Type", "Next", "End", "Seconds", "TimestampPath", "Comment"},
	"Succeed": {"Type", "Comment"},
	"Fail":    {"Type", "Error", "Cause", "Comment"},
}

// parseDefinition reads and checks a definition.
func parseDefinition(b []byte) (*definition, error) {
	var top struct {
		StartAt string                     `json:"StartAt"`
		States  map[string]json.RawMessage `json:"States"`
	}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("definition: %w", err)
	}
	d := &definition{StartAt: top.StartAt, States: map[string]*state{}}
	for name, raw := range top.States {
		st, err := parseState(raw)
		if err != nil {
			return nil, fmt.Errorf("state %s: %w", name, err)
		}
		d.States[name] = st
	}
	if d.States[d.StartAt] == nil {
		return nil, fmt.Errorf("definition: StartAt names no state: %q", d.StartAt)
	}
	for name, st := range d.States {
		next := []string{st.Next, st.Default}
		for _, c := range st.Choices {
			next = append(next, c.Next)
		}
		for _, c := range st.Catch {
			next = append(next, c.Next)
		}
		for _, n := range next {
			if n != "" && d.States[n] == nil {
				return nil, fmt.Errorf("state %s: goes to %q, which does not exist", name, n)
			}
		}
	}
	return d, nil
}

func parseState(raw json.RawMessage) (*state, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, err
	}
	st := &state{}
	if err := json.Unmarshal(raw, st); err != nil {
		return nil, err
	}
	known, ok := fields[st.Type]
	if !ok {
		return nil, fmt.Errorf("type %q is not supported", st.Type)
	}
	for k := range keys {
		if !slices.Contains(known, k) {
			return nil, fmt.Errorf("field %s is not supported in a %s state", k, st.Type)
		}
	}
	dollar := "$"
	st.ResultPath = &dollar
	if rp, ok := keys["ResultPath"]; ok {
		st.ResultPath = nil
		if string(rp) != "null" {
			var p string
			if err := json.Unmarshal(rp, &p); err != nil {
				return nil, fmt.Errorf("ResultPath: %w", err)
			}
			st.ResultPath = &p
		}
	}
	if st.Type == "Task" && st.Resource != lambdaInvoke && st.Resource != lambdaInvokeToken {
		return nil, fmt.Errorf("resource %q is not supported", st.Resource)
	}
	for _, c := range st.Choices {
		if c.Variable == "" || c.Next == "" {
			return nil, fmt.Errorf("a choice needs Variable, StringEquals and Next")
		}
	}
	if (st.Type == "Task" || st.Type == "Wait") && st.Next == "" && !st.End {
		return nil, fmt.Errorf("neither Next nor End")
	}
	return st, nil
}

// pathValue reads a reference path: $, $.a.b, or $$.a.b in the context.
func pathValue(path string, data, ctxObj any) (any, error) {
	root, rest := data, ""
	switch {
	case path == "$":
		return data, nil
	case path == "$$":
		return ctxObj, nil
	case strings.HasPrefix(path, "$$."):
		root, rest = ctxObj, path[3:]
	case strings.HasPrefix(path, "$."):
		rest = path[2:]
	default:
		return nil, fmt.Errorf("path %q is not a reference path", path)
	}
	v := root
	for _, k := range strings.Split(rest, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("path %q does not point to a value", path)
		}
		if v, ok = m[k]; !ok {
			return nil, fmt.Errorf("path %q does not point to a value", path)
		}
	}
	return v, nil
}

// applyTemplate evaluates Parameters or ResultSelector: fields ending in
// .$ take the value their path names.
func applyTemplate(tmpl, data, ctxObj any) (any, error) {
	switch t := tmpl.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, v := range t {
			if name, ok := strings.CutSuffix(k, ".$"); ok {
				p, _ := v.(string)
				val, err := pathValue(p, data, ctxObj)
				if err != nil {
					return nil, err
				}
				out[name] = val
				continue
			}
			val, err := applyTemplate(v, data, ctxObj)
			if err != nil {
				return nil, err
			}
			out[k] = val
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, v := range t {
			val, err := applyTemplate(v, data, ctxObj)
			if err != nil {
				return nil, err
			}
			out[i] = val
		}
		return out, nil
	}
	return tmpl, nil
}

// applyResultPath places result into input: nil path (ResultPath null)
// keeps input, $ replaces it, $.a.b sets that field of a copy.
func applyResultPath(path *string, input, result any) (any, error) {
	if path == nil {
		return input, nil
	}
	if *path == "$" {
		return result, nil
	}
	rest, ok := strings.CutPrefix(*path, "$.")
	if !ok {
		return nil, fmt.Errorf("ResultPath %q is not supported", *path)
	}
	out := copyMap(input)
	m := out
	keys := strings.Split(rest, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
		} else {
			next = copyMap(next)
		}
		m[k] = next
		m = next
	}
	m[keys[len(keys)-1]] = result
	return out, nil
}

func copyMap(v any) map[string]any {
	out := map[string]any{}
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			out[k] = x
		}
	}
	return out
}

// matches reports whether a retrier's or catcher's ErrorEquals covers the
// error name: States.ALL covers every error, States.TaskFailed every error
// but States.Timeout.
func matches(errorEquals []string, name string) bool {
	for _, e := range errorEquals {
		switch {
		case e == name, e == "States.ALL":
			return true
		case e == "States.TaskFailed" && name != "States.Timeout":
			return true
		}
	}
	return false
}
