package expr

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Template is a string with "{{ expression }}" placeholders. It is safe for
// concurrent use.
type Template struct {
	text    []string // text[i] stands before holes[i]; the last one after them all
	holes   []hole
	typed   bool          // one placeholder with at most spaces around it
	timeout time.Duration // the longest of its programs'
}

// hole is one placeholder and where its "{{" stands.
type hole struct {
	prg          *Program
	line, column int
}

// CompileTemplate compiles a template. Inside a placeholder, "}}" ends it
// unless it closes a map literal or stands in a string literal, so
// {{ "}}" }} writes a literal "}}"; a "}}" outside any placeholder is an
// error.
func (e *Env) CompileTemplate(src string) (*Template, error) {
	t, cerr := e.compileTemplate(src)
	if cerr != nil {
		return nil, cerr
	}
	return t, nil
}

func (e *Env) compileTemplate(src string) (*Template, *Error) {
	t := &Template{}
	from := 0 // start of the text not yet taken
	for from < len(src) {
		open := strings.Index(src[from:], "{{")
		if stray := strings.Index(src[from:], "}}"); stray >= 0 && (open < 0 || stray < open) {
			line, col := position(src, from+stray)
			return nil, &Error{Line: line, Column: col, Message: `"}}" without a "{{" before it`}
		}
		if open < 0 {
			break
		}
		start := from + open
		line, col := position(src, start)
		end, ok := placeholderEnd(src, start+2)
		if !ok {
			return nil, &Error{Line: line, Column: col, Message: `"{{" is not closed by "}}"`}
		}
		inner := src[start+2 : end]
		if strings.TrimSpace(inner) == "" {
			return nil, &Error{Line: line, Column: col, Message: "placeholder is empty"}
		}
		p, cerr := e.compile(inner)
		if cerr != nil {
			if cerr.Line == 1 {
				return nil, &Error{Line: line, Column: col + 2 + cerr.Column - 1, Message: cerr.Message}
			}
			return nil, &Error{Line: line + cerr.Line - 1, Column: cerr.Column, Message: cerr.Message}
		}
		t.text = append(t.text, src[from:start])
		t.holes = append(t.holes, hole{prg: p, line: line, column: col})
		t.timeout = max(t.timeout, p.timeout)
		from = end + 2
	}
	t.text = append(t.text, src[from:])
	t.typed = len(t.holes) == 1 && strings.TrimSpace(t.text[0]) == "" && strings.TrimSpace(t.text[1]) == ""
	return t, nil
}

// placeholderEnd returns the offset of the "}}" that closes a placeholder
// whose expression starts at from.
func placeholderEnd(src string, from int) (int, bool) {
	depth := 0
	for i := from; i < len(src); i++ {
		switch src[i] {
		case '\'', '"':
			end, ok := stringEnd(src, i)
			if !ok {
				return 0, false
			}
			i = end
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			} else if i+1 < len(src) && src[i+1] == '}' {
				return i, true
			}
		}
	}
	return 0, false
}

// stringEnd returns the offset of the last quote of the CEL string literal
// whose first quote is at q.
func stringEnd(src string, q int) (int, bool) {
	raw := false
	for i := q - 1; i >= 0 && i >= q-2; i-- {
		if c := src[i]; c == 'r' || c == 'R' {
			raw = true
		} else if c != 'b' && c != 'B' {
			break
		}
	}
	delim := src[q : q+1]
	if strings.HasPrefix(src[q:], strings.Repeat(delim, 3)) {
		delim = strings.Repeat(delim, 3)
	}
	for i := q + len(delim); i < len(src); i++ {
		if src[i] == '\\' && !raw {
			i++
			continue
		}
		if strings.HasPrefix(src[i:], delim) {
			return i + len(delim) - 1, true
		}
	}
	return 0, false
}

// Eval renders the template. A template that is one placeholder yields the
// expression's value as Program.Eval does; otherwise the result is a string
// with strings written as they are and other values as JSON. A template
// without placeholders yields its text.
func (t *Template) Eval(ctx context.Context, v Vars) (any, error) {
	if len(t.holes) == 0 {
		return t.text[0], nil
	}
	ev, err := startEvaluation(ctx, v, t.timeout)
	if err != nil {
		return nil, err
	}
	defer ev.close()
	return t.eval(ev)
}

func (t *Template) eval(ev *evaluation) (any, error) {
	if len(t.holes) == 0 {
		return t.text[0], nil
	}
	if t.typed {
		return t.holes[0].eval(ev)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	for i, h := range t.holes {
		if err := ev.grow(&out, uint64(len(t.text[i]))); err != nil {
			return nil, h.locate(err)
		}
		out.WriteString(t.text[i])
		val, err := h.eval(ev)
		if err != nil {
			return nil, err
		}
		if s, ok := val.(string); ok {
			if err := ev.grow(&out, uint64(len(s))); err != nil {
				return nil, h.locate(err)
			}
			out.WriteString(s)
			continue
		}
		if err := ev.grow(&out, jsonLen(val, MaxStringBytes+1)); err != nil {
			return nil, h.locate(err)
		}
		if err := enc.Encode(val); err != nil {
			return nil, h.locate(err)
		}
		out.Truncate(out.Len() - 1) // the newline Encode ends with
	}
	if err := ev.grow(&out, uint64(len(t.text[len(t.holes)]))); err != nil {
		return nil, err
	}
	out.WriteString(t.text[len(t.holes)])
	return out.String(), nil
}

// grow makes room for n more bytes of a rendered template: the string it
// builds is bounded as the strings a program builds are, and counts against
// the same budget, before it is written.
func (ev *evaluation) grow(out *bytes.Buffer, n uint64) error {
	if total := uint64(out.Len()) + n; total > MaxStringBytes {
		return &tooLarge{fmt.Sprintf("the template would build a string of more than %s; a string may hold at most %s",
			size(MaxStringBytes), size(MaxStringBytes))}
	}
	return ev.built.charge("the template", n)
}

// jsonLen bounds the length of the JSON encoding of a value made of
// JSON-native Go values, stopping once past limit.
func jsonLen(v any, limit uint64) uint64 {
	switch v := v.(type) {
	case string:
		return quoted(v, jsonStyle, 0)
	case map[string]any:
		n := uint64(2)
		for k, item := range v {
			if n > limit {
				break
			}
			n += quoted(k, jsonStyle, 0) + 2 + jsonLen(item, limit-n)
		}
		return n
	case []any:
		n := uint64(2)
		for _, item := range v {
			if n > limit {
				break
			}
			n += jsonLen(item, limit-n) + 1
		}
		return n
	}
	// Numbers, bools and null.
	return 32
}

func (h hole) eval(ev *evaluation) (any, error) {
	val, err := h.prg.eval(ev)
	if err != nil {
		if ev.stopped() != nil {
			return nil, err
		}
		return nil, h.locate(err)
	}
	j, err := ev.toJSON(val)
	if err != nil {
		return nil, h.locate(err)
	}
	return j, nil
}

func (h hole) locate(err error) error {
	return fmt.Errorf("line %d, column %d: %w", h.line, h.column, err)
}

// Value is a JSON-like structure whose strings are templates, such as a
// step's config. It is safe for concurrent use.
type Value struct {
	root    node
	timeout time.Duration
}

// CompileValue compiles every string inside v, which is made of
// map[string]any, []any, strings and other JSON scalars. Map keys are taken
// as they are. A compile error carries the Path of the failing string.
func (e *Env) CompileValue(v any) (*Value, error) {
	var timeout time.Duration
	root, err := e.compileNode(v, "", &timeout)
	if err != nil {
		return nil, err
	}
	return &Value{root: root, timeout: timeout}, nil
}

// Eval renders the structure: a new one, with every template evaluated as
// Template.Eval does. An evaluation error names the path of its string.
func (v *Value) Eval(ctx context.Context, vars Vars) (any, error) {
	ev, err := startEvaluation(ctx, vars, v.timeout)
	if err != nil {
		return nil, err
	}
	defer ev.close()
	return v.root.eval(ev)
}

type node interface {
	eval(ev *evaluation) (any, error)
}

// compileNode compiles v and raises timeout to the longest of its
// templates'.
func (e *Env) compileNode(v any, path string, timeout *time.Duration) (node, error) {
	switch v := v.(type) {
	case string:
		t, cerr := e.compileTemplate(v)
		if cerr != nil {
			cerr.Path = path
			return nil, cerr
		}
		if len(t.holes) == 0 {
			return constNode{v}, nil
		}
		*timeout = max(*timeout, t.timeout)
		return templateNode{t: t, path: path}, nil
	case map[string]any:
		n := mapNode{keys: slices.Sorted(maps.Keys(v))}
		n.vals = make([]node, len(n.keys))
		for i, k := range n.keys {
			var err error
			if n.vals[i], err = e.compileNode(v[k], keyPath(path, k), timeout); err != nil {
				return nil, err
			}
		}
		return n, nil
	case []any:
		n := make(listNode, len(v))
		for i, item := range v {
			var err error
			if n[i], err = e.compileNode(item, path+"["+strconv.Itoa(i)+"]", timeout); err != nil {
				return nil, err
			}
		}
		return n, nil
	case nil, bool, float64, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64, json.Number:
		return constNode{v}, nil
	}
	if path == "" {
		return nil, fmt.Errorf("a value of type %T is not JSON", v)
	}
	return nil, fmt.Errorf("%s: a value of type %T is not JSON", path, v)
}

// keyPath extends a path by a map key, quoting keys that are not names.
func keyPath(parent, key string) string {
	name := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			name = false
		}
	}
	switch {
	case !name:
		return parent + "[" + strconv.Quote(key) + "]"
	case parent == "":
		return key
	}
	return parent + "." + key
}

type constNode struct{ v any }

func (n constNode) eval(*evaluation) (any, error) { return n.v, nil }

type templateNode struct {
	t    *Template
	path string
}

func (n templateNode) eval(ev *evaluation) (any, error) {
	out, err := n.t.eval(ev)
	if err != nil && n.path != "" && ev.stopped() == nil {
		return nil, fmt.Errorf("%s: %w", n.path, err)
	}
	return out, err
}

type mapNode struct {
	keys []string
	vals []node
}

func (n mapNode) eval(ev *evaluation) (any, error) {
	out := make(map[string]any, len(n.keys))
	for i, k := range n.keys {
		v, err := n.vals[i].eval(ev)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

type listNode []node

func (n listNode) eval(ev *evaluation) (any, error) {
	out := make([]any, len(n))
	for i, item := range n {
		v, err := item.eval(ev)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
