package cards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/evalslots"
)

// This file implements the Adaptive Cards Template Language as Microsoft's
// adaptivecards-templating npm package (2.3.1) does; the tests compare the
// two on every case of testdata/templating and on generated ones.
//
//   - A string holding ${...} is parsed as a string interpolation. When it
//     is a single binding, "${expression}", the value keeps its type (an
//     object, a number); otherwise the parts are written into a string.
//   - A property that is missing becomes the text of its binding, "${name}",
//     and a binding that fails inside a longer string stays in it as a
//     binding.
//     A single binding that fails makes the expansion fail.
//   - "$data" binds an object to other data; bound to an array it repeats
//     the object once per item, with $index the item's position. "$when"
//     keeps the object only where it evaluates to true. $root is the data
//     given to Expand, $host the host data.
//   - Arrays drop null items and flatten items that expand to arrays.

// maxTemplateDepth bounds the nesting of the template itself; what it
// expands to is bounded by maxCardBytes (limits.go).
const maxTemplateDepth = 64

// Template is a card template parsed once for many expansions, which may
// run concurrently.
type Template struct {
	root node
}

// node is a prepared part of a template: a value without bindings, a
// binding, an object or an array.
type node struct {
	kind   nodeKind
	path   string           // where the node lies in the template, for errors
	value  any              // literal, or a binding's source text
	expr   *expr            // binding
	keys   []string         // object: keys in order
	fields map[string]*node // object
	items  []*node          // array
}

type nodeKind int

const (
	nodeLiteral nodeKind = iota
	nodeBinding
	nodeObject
	nodeArray
)

// reserved are the properties that steer expansion and never reach the
// output.
var reserved = []string{"$data", "$when", "$root", "$index", "$host", "$_acTemplateVersion"}

// TemplateError is a template whose bindings do not parse.
type TemplateError struct {
	Path string // JSON path of the string, such as card_payload.body[2].text
	Err  *ParseError
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("%s: %s", e.Path, e.Err.Error())
}

// Compile parses every ${...} binding of a template, a JSON value: raw
// JSON, or a value as encoding/json decodes one. A binding that does not
// parse is a *TemplateError naming where it lies.
func Compile(template any) (*Template, error) {
	v, err := jsonValue(template)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	n, err := prepare(root, v, 0)
	if err != nil {
		return nil, err
	}
	return &Template{root: *n}, nil
}

// Expand binds template to data and returns the expanded JSON value.
func Expand(ctx context.Context, template, data any) (any, error) {
	t, err := Compile(template)
	if err != nil {
		return nil, err
	}
	return t.Expand(ctx, data)
}

// Expand binds the template to data: $root and, at first, $data.
func (t *Template) Expand(ctx context.Context, data any) (any, error) {
	return t.ExpandHost(ctx, data, nil)
}

// ExpandHost binds the template to data and to host data, which bindings
// reach as $host. It waits for one of the process's evaluation slots
// (pkg/evalslots), or until ctx ends, and holds it while it expands.
func (t *Template) ExpandHost(ctx context.Context, data, host any) (any, error) {
	slot, err := evalslots.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer slot.Release()
	d, err := jsonValue(data)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	h := undefined
	if host != nil {
		if h, err = jsonValue(host); err != nil {
			return nil, fmt.Errorf("host data: %w", err)
		}
	}
	x := &expansion{root: d, host: h, data: undefined, index: undefined, cost: &cost{}}
	out, err := x.expand(&t.root)
	if err != nil {
		return nil, err
	}
	return jsonOut(out), nil
}

// ExpandCard expands a card template, a card_payload, with data into the
// card to send. It fails with a *cardflow.Error (EINVALID) when a binding
// fails, when the template expands to no card or to several (a $when or a
// $data on the card itself), or when the card it gives is not a valid
// Adaptive Card.
func ExpandCard(ctx context.Context, payload map[string]any, data any) (map[string]any, error) {
	t, err := Compile(payload)
	if err != nil {
		return nil, cardflow.Errorf(cardflow.EINVALID, "the card template does not expand: %v", err)
	}
	return t.ExpandCard(ctx, data)
}

// ExpandCard is ExpandCard of the card template t was compiled from.
func (t *Template) ExpandCard(ctx context.Context, data any) (map[string]any, error) {
	out, err := t.Expand(ctx, data)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			return nil, err // cancelled while waiting for a slot
		}
		return nil, cardflow.Errorf(cardflow.EINVALID, "the card template does not expand: %v", err)
	}
	switch x := out.(type) {
	case map[string]any:
		if err := Validate(x); err != nil {
			return nil, cardflow.Errorf(cardflow.EINVALID, "the expanded card is not valid: %s", cardflow.ErrorMessage(err))
		}
		return x, nil
	case nil:
		return nil, cardflow.Errorf(cardflow.EINVALID, "the card template expands to no card: its $when is not true")
	case []any:
		return nil, cardflow.Errorf(cardflow.EINVALID, "the card template expands to %d cards: its $data is a list, and a card step sends one card", len(x))
	}
	return nil, cardflow.Errorf(cardflow.EINVALID, "the card template expands to %s, not a card", describe(out))
}

// jsonValue turns raw JSON or any value encoding/json can write into the
// generic JSON values expressions work on. Those it is given already are
// used as they are: expansion never changes them.
func jsonValue(v any) (any, error) {
	var data []byte
	switch x := v.(type) {
	case json.RawMessage:
		data = x
	case []byte:
		data = x
	default:
		if isJSONValue(v, 0) {
			return v, nil
		}
		var err error
		if data, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// isJSONValue reports whether v is made of the values encoding/json
// decodes into an any, and nests no deeper than JSON decoding allows.
func isJSONValue(v any, depth int) bool {
	if depth > 10000 {
		return false
	}
	switch x := v.(type) {
	case nil, string, bool:
		return true
	case float64:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	case map[string]any:
		for _, item := range x {
			if !isJSONValue(item, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, item := range x {
			if !isJSONValue(item, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// jsonOut turns undefined, which JSON cannot hold, into what
// JSON.stringify writes: no property in an object, null elsewhere. Only
// values that functions built can hold undefined, so the data given to
// Expand is never written to.
func jsonOut(v any) any {
	switch x := v.(type) {
	case undefinedValue:
		return nil
	case map[string]any:
		for k, item := range x {
			if isUndefined(item) {
				delete(x, k)
			} else if hasUndefined(item) {
				x[k] = jsonOut(item)
			}
		}
	case []any:
		for i, item := range x {
			if hasUndefined(item) {
				x[i] = jsonOut(item)
			}
		}
	}
	return v
}

func hasUndefined(v any) bool {
	switch x := v.(type) {
	case undefinedValue:
		return true
	case map[string]any:
		for _, item := range x {
			if hasUndefined(item) {
				return true
			}
		}
	case []any:
		for _, item := range x {
			if hasUndefined(item) {
				return true
			}
		}
	}
	return false
}

func prepare(path string, v any, depth int) (*node, error) {
	if depth > maxTemplateDepth {
		return nil, &TemplateError{path, &ParseError{"", fmt.Sprintf("the template nests deeper than %d levels", maxTemplateDepth)}}
	}
	switch x := v.(type) {
	case string:
		e, err := parseString(x)
		if err != nil {
			return nil, &TemplateError{path, err}
		}
		if e == nil {
			return &node{kind: nodeLiteral, path: path, value: x}, nil
		}
		return &node{kind: nodeBinding, path: path, value: x, expr: e}, nil
	case []any:
		n := &node{kind: nodeArray, path: path}
		for i, item := range x {
			c, err := prepare(path+"["+strconv.Itoa(i)+"]", item, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, c)
		}
		return n, nil
	case map[string]any:
		n := &node{kind: nodeObject, path: path, fields: make(map[string]*node, len(x))}
		n.keys = slices.Sorted(maps.Keys(x))
		for _, k := range n.keys {
			c, err := prepare(path+"."+k, x[k], depth+1)
			if err != nil {
				return nil, err
			}
			n.fields[k] = c
		}
		return n, nil
	}
	return &node{kind: nodeLiteral, path: path, value: v}, nil
}

// parseString parses a string of the template: nil if it holds no ${, the
// single binding if it is one, else the interpolation.
func parseString(s string) (*expr, *ParseError) {
	if !strings.Contains(s, "${") {
		return nil, nil
	}
	e, err := parseExpression("`"+s+"`", 0)
	if err != nil {
		pe, ok := err.(*ParseError)
		if !ok {
			pe = &ParseError{s, err.Error()}
		}
		if pe.Expression == "`"+s+"`" {
			pe.Expression = s
		}
		return nil, pe
	}
	if e.op == "concat" {
		if len(e.args) == 2 && e.args[0].op == opConstant && e.args[0].val == "" && e.args[1].op != opConstant {
			return e.args[1], nil
		}
	}
	return e, nil
}

// expansion is the state of one Expand call.
type expansion struct {
	root, host  any
	data, index any // undefined until $data or an array binds them
	// bytes is what the output holds so far, as JSON: every value a
	// binding inserts is counted whole each time it is inserted, though
	// the data shares one copy, because the answer and the stored card
	// write it out each time.
	bytes int
	cost  *cost
}

var templateVersion = map[string]any{"major": 2.0, "minor": 3.0, "patch": 1.0, "suffix": ""}

// templateMemory resolves a path: names that do not start with $ are
// properties of $data.
type templateMemory struct{ x *expansion }

func (m templateMemory) getValue(path string) any {
	parts := splitPath(path)
	if len(parts) == 0 {
		return undefined
	}
	var start any
	if !strings.HasPrefix(path, "$") {
		start = m.data()
	} else {
		switch first := parts[0]; {
		case strings.EqualFold(first, "$data"):
			start = m.data()
		case strings.EqualFold(first, "$root"):
			start = m.x.root
		case strings.EqualFold(first, "$index"):
			start = m.x.index
		case strings.EqualFold(first, "$host"):
			start = m.x.host
		case strings.EqualFold(first, "$_acTemplateVersion"):
			start = templateVersion
		default:
			return undefined
		}
		parts = parts[1:]
	}
	if len(parts) == 0 {
		return start
	}
	return walkPath(start, parts)
}

// data is $data: the data bound last, else $root.
func (m templateMemory) data() any {
	if isUndefined(m.x.data) {
		return m.x.root
	}
	return m.x.data
}

// charge counts n more bytes of output, refusing the expansion once past
// maxCardBytes.
func (x *expansion) charge(n int) error {
	x.bytes += n
	if x.bytes > maxCardBytes {
		return errCardTooLarge
	}
	return nil
}

// insert counts v, which the expansion is about to put into its output,
// by its size as JSON; the walk stops once past the budget, so a value
// shared a million times costs no more to refuse than to write once.
func (x *expansion) insert(v any) error {
	return x.charge(jsonLen(v, maxCardBytes-x.bytes+1))
}

// evaluate evaluates a binding; subst replaces missing values by their
// binding text, and the parts of an interpolation that fail by theirs.
// The text of an interpolation counts against the output as it is
// written.
func (x *expansion) evaluate(e *expr, subst bool) (any, error) {
	s := &state{mem: templateMemory{x}, subst: subst, cost: x.cost}
	if e.op != "concat" || !subst {
		v, err := e.eval(s)
		if x.cost.exceeded() {
			return nil, errTooCostly
		}
		return v, err
	}
	var b strings.Builder
	for _, part := range e.args {
		v, err := part.eval(s)
		if x.cost.exceeded() {
			return nil, errTooCostly
		}
		if err != nil {
			v = "${" + part.String() + "}"
		}
		if isNullish(v) {
			return nil, fmt.Errorf("a binding in %q gives %s, which cannot be written into text", "${"+part.String()+"}", toJSString(v))
		}
		// A list is written item by item: sized first, as it may hold
		// one value many times.
		left := maxCardBytes - x.bytes - b.Len()
		if _, ok := v.(string); !ok && textLenJS(v, left+1) > left {
			return nil, errCardTooLarge
		}
		b.WriteString(toJSString(v))
		if x.bytes+b.Len() > maxCardBytes {
			return nil, errCardTooLarge
		}
	}
	return b.String(), nil
}

func (x *expansion) expand(n *node) (any, error) {
	data, index := x.data, x.index
	defer func() { x.data, x.index = data, index }()
	switch n.kind {
	case nodeLiteral:
		if err := x.insert(n.value); err != nil {
			return nil, fmt.Errorf("%s: %w", n.path, err)
		}
		return n.value, nil
	case nodeBinding:
		v, err := x.evaluate(n.expr, true)
		if err == nil {
			err = x.insert(v)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", n.path, n.value, err)
		}
		return v, nil
	case nodeArray:
		out := []any{}
		if err := x.charge(2); err != nil {
			return nil, fmt.Errorf("%s: %w", n.path, err)
		}
		for _, item := range n.items {
			v, err := x.expand(item)
			if err != nil {
				return nil, err
			}
			if err := x.charge(1); err != nil { // the comma
				return nil, fmt.Errorf("%s: %w", n.path, err)
			}
			switch e := v.(type) {
			case nil:
			case []any:
				out = append(out, e...)
			default:
				out = append(out, v)
			}
		}
		return out, nil
	}
	return x.expandObject(n)
}

func (x *expansion) expandObject(n *node) (any, error) {
	contexts := []any{undefined}
	isArray := false
	if d, ok := n.fields["$data"]; ok {
		var v any
		switch d.kind {
		case nodeBinding:
			var err error
			if v, err = x.evaluate(d.expr, true); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", d.path, d.value, err)
			}
		case nodeLiteral:
			v = d.value
		default:
			// A literal object or array: its strings stay prepared but
			// unexpanded, and bindings reading them find the raw text.
			v = literal(d)
		}
		if list, ok := v.([]any); ok {
			contexts, isArray = list, true
		} else {
			contexts = []any{v}
		}
	}
	var out []any
	for i, c := range contexts {
		if isArray {
			x.index = float64(i)
		}
		if !isUndefined(c) {
			x.data = c
		}
		if w, ok := n.fields["$when"]; ok {
			keep := false
			switch w.kind {
			case nodeBinding:
				v, err := x.evaluate(w.expr, false)
				if err != nil && !swallowed(err) {
					return nil, fmt.Errorf("%s: %s: %w", w.path, w.value, err)
				}
				keep = err == nil && v == true
			case nodeLiteral:
				// Only a binding can keep the object; a literal false
				// keeps it, as in the npm package, anything else truthy
				// drops it.
				keep = !jsTruthy(w.value)
			}
			if !keep {
				continue
			}
		}
		// Each repetition of the object is counted: its braces, and each
		// key with its quotes, colon and comma.
		if err := x.charge(2); err != nil {
			return nil, fmt.Errorf("%s: %w", n.path, err)
		}
		obj := make(map[string]any, len(n.keys))
		for _, k := range n.keys {
			if slices.Contains(reserved, k) {
				continue
			}
			if err := x.charge(quotedLen(k, maxCardBytes) + 2); err != nil {
				return nil, fmt.Errorf("%s.%s: %w", n.path, k, err)
			}
			v, err := x.expand(n.fields[k])
			if err != nil {
				return nil, err
			}
			if !isUndefined(v) {
				obj[k] = v
			}
		}
		out = append(out, obj)
	}
	switch len(out) {
	case 0:
		return nil, nil
	case 1:
		return out[0], nil
	}
	return out, nil
}

// jsTruthy is JavaScript's truthiness of a JSON value.
func jsTruthy(v any) bool {
	switch x := v.(type) {
	case nil, undefinedValue:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && x == x
	case string:
		return x != ""
	}
	return true
}

// literal rebuilds the value of a node as written: a string with bindings
// reads as its source text.
func literal(n *node) any {
	switch n.kind {
	case nodeBinding:
		return n.value
	case nodeArray:
		out := make([]any, len(n.items))
		for i, item := range n.items {
			out[i] = literal(item)
		}
		return out
	case nodeObject:
		out := make(map[string]any, len(n.keys))
		for _, k := range n.keys {
			out[k] = literal(n.fields[k])
		}
		return out
	}
	return n.value
}

// Check reports whether every ${...} binding of a card's payload parses
// and calls only functions this package implements. It returns nil or a
// *cardflow.Error with code EINVALID naming the JSON path and the problem.
func Check(payload map[string]any) error {
	t, err := Compile(payload)
	if err != nil {
		if te, ok := err.(*TemplateError); ok {
			return cardflow.Errorf(cardflow.EINVALID, "%s: the binding does not parse: %s", te.Path, te.Err.Error())
		}
		return cardflow.Errorf(cardflow.EINVALID, "%s: %v", root, err)
	}
	if path, name := t.root.unknownFunction(root); name != "" {
		return cardflow.Errorf(cardflow.EINVALID, "%s: unknown function %q in a binding", path, name)
	}
	return nil
}

func (n *node) unknownFunction(path string) (string, string) {
	switch n.kind {
	case nodeBinding:
		return path, n.expr.unknownFunction()
	case nodeArray:
		for i, item := range n.items {
			if p, name := item.unknownFunction(path + "[" + strconv.Itoa(i) + "]"); name != "" {
				return p, name
			}
		}
	case nodeObject:
		for _, k := range n.keys {
			if p, name := n.fields[k].unknownFunction(path + "." + k); name != "" {
				return p, name
			}
		}
	}
	return "", ""
}

func (e *expr) unknownFunction() string {
	if e.fn != nil && e.fn.unknown {
		return e.fn.name
	}
	for _, a := range e.args {
		if name := a.unknownFunction(); name != "" {
			return name
		}
	}
	return ""
}
