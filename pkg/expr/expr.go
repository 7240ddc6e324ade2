// Package expr compiles and evaluates the expressions and "{{ }}" templates
// of workflow definitions.
//
// Expressions are CEL (https://cel.dev) over three variables: input (the
// trigger payload), steps (step id -> {"output": ...}) and execution (facts
// about the running execution). Programs are compiled against declared
// variables, so a misspelt name fails when a workflow is saved, and every
// evaluation is bounded by a cost limit and by its context.
//
// JSON numbers are doubles: they compare freely with integer literals
// (input.amount > 1000), but arithmetic needs operands of one type
// (input.amount * 2.0, or int(input.amount) * 2).
package expr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Defaults of the options.
const (
	DefaultCostLimit  = 100_000
	DefaultMaxLength  = 4096
	DefaultMaxNesting = 32
	DefaultCacheSize  = 1024
)

// ErrCostLimit is wrapped by the error of an evaluation that went over the
// cost limit.
var ErrCostLimit = errors.New("expression exceeded its cost limit")

type config struct {
	costLimit  uint64
	maxLength  int
	maxNesting int
	cacheSize  int
}

// Option configures an Env.
type Option func(*config)

// WithCostLimit bounds the work of one Eval call. CEL counts a cost of about
// one per operation, variable access and list element visited; a Template or
// Value counts the cost of all its expressions together.
func WithCostLimit(n uint64) Option { return func(c *config) { c.costLimit = n } }

// WithMaxLength bounds the length of one expression in characters.
func WithMaxLength(n int) Option { return func(c *config) { c.maxLength = n } }

// WithMaxNesting bounds how deeply an expression may nest.
func WithMaxNesting(n int) Option { return func(c *config) { c.maxNesting = n } }

// WithCacheSize sets how many compiled expressions the Env keeps, least
// recently used first out; 0 turns the cache off.
func WithCacheSize(n int) Option { return func(c *config) { c.cacheSize = n } }

// Env compiles expressions. It is safe for concurrent use.
type Env struct {
	cfg   config
	cache *cache
}

// NewEnv builds an Env.
func NewEnv(opts ...Option) (*Env, error) {
	cfg := config{
		costLimit:  DefaultCostLimit,
		maxLength:  DefaultMaxLength,
		maxNesting: DefaultMaxNesting,
		cacheSize:  DefaultCacheSize,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.costLimit == 0 || cfg.maxLength <= 0 || cfg.maxNesting <= 0 || cfg.cacheSize < 0 {
		return nil, errors.New("expr: cost limit, maximum length and maximum nesting must be positive, cache size not negative")
	}
	e := &Env{cfg: cfg}
	if cfg.cacheSize > 0 {
		e.cache = newCache(cfg.cacheSize)
	}
	return e, nil
}

// Vars are what expressions see.
type Vars struct {
	// Input is the trigger payload: any JSON value.
	Input any
	// Steps maps a step id to that step's output; expressions read it as
	// steps.<id>.output.
	Steps map[string]any
	// Execution holds facts about the execution (id, workflow_id,
	// started_on, ...). A time.Time value becomes a CEL timestamp.
	Execution map[string]any
}

// activation binds the variables of one Eval call, which may evaluate
// several programs one after another. It builds steps only if an expression
// reads it.
type activation struct {
	vars  Vars
	steps map[string]any
}

func (v Vars) activation() *activation { return &activation{vars: v} }

var noFacts = map[string]any{}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case "input":
		return a.vars.Input, true
	case "steps":
		if a.steps == nil {
			a.steps = make(map[string]any, len(a.vars.Steps))
			for id, out := range a.vars.Steps {
				a.steps[id] = map[string]any{"output": out}
			}
		}
		return a.steps, true
	case "execution":
		if a.vars.Execution == nil {
			return noFacts, true
		}
		return a.vars.Execution, true
	}
	return nil, false
}

// Error is a compile error at a position of the source.
type Error struct {
	// Path locates the failing string inside a Value, as in
	// "headers.Authorization" or "items[2]"; it is empty elsewhere.
	Path string
	// Line and Column are 1-based and count characters of the original
	// expression or template.
	Line, Column int
	Message      string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
	if e.Path != "" {
		return e.Path + ": " + msg
	}
	return msg
}

// Program is a compiled expression. It is safe for concurrent use.
type Program struct {
	root  exprNode
	out   celType
	limit uint64
}

// Compile compiles a bare expression.
func (e *Env) Compile(src string) (*Program, error) {
	p, cerr := e.compile(src)
	if cerr != nil {
		return nil, cerr
	}
	return p, nil
}

// CompileBool compiles an expression that must yield a bool, such as a
// connection's when; one whose type is known not to be bool is an error.
func (e *Env) CompileBool(src string) (*Program, error) {
	p, cerr := e.compile(src)
	if cerr != nil {
		return nil, cerr
	}
	if !p.out.mayBeBool() {
		return nil, &Error{Line: 1, Column: 1, Message: fmt.Sprintf("expression must yield a bool, not %s", p.out)}
	}
	return p, nil
}

// compile is Compile with a concrete error type, whose position templates
// move to where the placeholder stands.
func (e *Env) compile(src string) (*Program, *Error) {
	if n := utf8.RuneCountInString(src); n > e.cfg.maxLength {
		line, col := position(src, runeOffset(src, e.cfg.maxLength))
		return nil, &Error{Line: line, Column: col,
			Message: fmt.Sprintf("expression is %d characters long; the limit is %d", n, e.cfg.maxLength)}
	}
	if strings.TrimSpace(src) == "" {
		return nil, &Error{Line: 1, Column: 1, Message: "expression is empty"}
	}
	if e.cache != nil {
		if p, ok := e.cache.get(src); ok {
			return p, nil
		}
	}
	root, err := parse(src, e.cfg.maxNesting)
	if err != nil {
		return nil, err
	}
	out, err := check(root, src)
	if err != nil {
		return nil, err
	}
	if cerr := constantError(root); cerr != nil {
		return nil, &Error{Line: 1, Column: 1, Message: cerr.msg}
	}
	p := &Program{root: root, out: out, limit: e.cfg.costLimit}
	if e.cache != nil {
		e.cache.add(src, p)
	}
	return p, nil
}

// Eval evaluates the expression. The result is made of JSON-native values:
// map[string]any, []any, string, float64, int64, bool and nil; timestamps
// become RFC 3339 strings, durations strings such as "1h30m0s" and bytes
// base64 strings.
func (p *Program) Eval(ctx context.Context, v Vars) (any, error) {
	val, err := p.eval(ctx, v.activation(), &budget{limit: p.limit})
	if err != nil {
		return nil, err
	}
	return toJSON(val)
}

// EvalBool evaluates an expression that must yield a bool.
func (p *Program) EvalBool(ctx context.Context, v Vars) (bool, error) {
	val, err := p.eval(ctx, v.activation(), &budget{limit: p.limit})
	if err != nil {
		return false, err
	}
	b, ok := val.(bool)
	if !ok {
		return false, fmt.Errorf("expression must yield a bool, not %s", kindName(val))
	}
	return b, nil
}

// budget is the cost left to one Eval call of a Program, Template or Value.
type budget struct{ limit, used uint64 }

func (p *Program) eval(ctx context.Context, act *activation, b *budget) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ev := &evaluator{ctx: ctx, act: act, b: b}
	return ev.run(p.root)
}

// position returns the 1-based line and column (in characters) of a byte
// offset of s.
func position(s string, off int) (line, col int) {
	line, col = 1, 1
	for _, r := range s[:off] {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// runeOffset returns the byte offset of the n-th character of s.
func runeOffset(s string, n int) int {
	for off := range s {
		if n == 0 {
			return off
		}
		n--
	}
	return len(s)
}
