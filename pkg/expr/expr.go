// Package expr compiles and evaluates the expressions and "{{ }}" templates
// of workflow definitions.
//
// Expressions are CEL (https://cel.dev), compiled and evaluated by cel-go
// with its standard library and the strings, math, encoders, lists,
// optional and cel.bind extensions, over three variables: input (the
// trigger payload), steps (step id -> {"output": ...}) and execution (facts
// about the running execution). Programs are compiled against declared
// variables, so a misspelt name or a type error fails when a workflow is
// saved, and every evaluation is bounded by a cost limit, by what it
// builds (limits.go), by a deadline and by its context.
//
// Numbers behave as in JSON: every number in the variables is a double,
// integer literals mix with them (input.amount * 2, input.qty + 1,
// input.amount > 1000), dividing a JSON number gives a fraction, int(x)
// truncates and % works on whole numbers (numbers.go says how).
package expr

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"

	"github.com/cardflow/cardflow/pkg/evalslots"
)

// Defaults of the options.
const (
	DefaultCostLimit  = 100_000
	DefaultMaxLength  = 4096
	DefaultMaxNesting = 32
	DefaultCacheSize  = 1024
	// DefaultTimeout bounds one Eval call: far more than any expression
	// within the cost limit takes, and short enough that one that slips
	// past every count holds a step for a second, not minutes.
	DefaultTimeout = time.Second
)

// ErrCostLimit is wrapped by the error of an evaluation that went over the
// cost limit.
var ErrCostLimit = errors.New("expression exceeded its cost limit")

// ErrTimeout is wrapped by the error of an evaluation that ran past its
// deadline (WithTimeout).
var ErrTimeout = errors.New("expression ran too long")

type config struct {
	costLimit  uint64
	maxLength  int
	maxNesting int
	cacheSize  int
	timeout    time.Duration
}

// Option configures an Env.
type Option func(*config)

// WithCostLimit bounds the work of one Eval call. CEL counts a cost of about
// one per operation, variable access and list element visited; a Template or
// Value counts the cost of all its expressions together.
func WithCostLimit(n uint64) Option { return func(c *config) { c.costLimit = n } }

// WithTimeout bounds how long one Eval call may run. cel-go looks at the
// deadline between the steps of comprehensions (macros such as all, map
// and cel.bind), so only a program with one gets a deadline: without, it
// runs a bounded number of steps, and a timer for each evaluation would
// take several times the evaluation's own time.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

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

	// The language is built when the first expression is compiled, so that
	// a function that links pkg/expr starts without building it.
	once sync.Once
	lang *language
	err  error
}

// language is cel-go's environment as configured, with the number rules.
type language struct {
	cel       *cel.Env
	rules     *numberRules
	optimizer *cel.StaticOptimizer // runs rules
	guard     *guard               // sizes what calls build (limits.go)
}

// interruptCheckFrequency is how many steps of a comprehension run between
// two looks at the context.
const interruptCheckFrequency = 100

// NewEnv builds an Env.
func NewEnv(opts ...Option) (*Env, error) {
	cfg := config{
		costLimit:  DefaultCostLimit,
		maxLength:  DefaultMaxLength,
		maxNesting: DefaultMaxNesting,
		cacheSize:  DefaultCacheSize,
		timeout:    DefaultTimeout,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.costLimit == 0 || cfg.maxLength <= 0 || cfg.maxNesting <= 0 || cfg.cacheSize < 0 || cfg.timeout <= 0 {
		return nil, errors.New("expr: cost limit, maximum length, maximum nesting and timeout must be positive, cache size not negative")
	}
	e := &Env{cfg: cfg}
	if cfg.cacheSize > 0 {
		e.cache = newCache(cfg.cacheSize)
	}
	return e, nil
}

func (e *Env) language() (*language, error) {
	e.once.Do(func() { e.lang, e.err = newLanguage(e.cfg) })
	return e.lang, e.err
}

func newLanguage(cfg config) (*language, error) {
	env, err := cel.NewEnv(append([]cel.EnvOption{
		cel.Variable("input", cel.DynType),
		cel.Variable("steps", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("execution", cel.MapType(cel.StringType, cel.DynType)),
		cel.CrossTypeNumericComparisons(true),
		cel.DefaultUTCTimeZone(true),
		cel.OptionalTypes(),
		cel.ParserExpressionSizeLimit(cfg.maxLength),
		cel.ParserRecursionLimit(cfg.maxNesting),
		ext.Strings(),
		ext.Math(),
		ext.Encoders(),
		ext.Lists(),
		ext.Bindings(),
	}, numberOverloads()...)...)
	if err != nil {
		return nil, fmt.Errorf("expr: %w", err)
	}
	rules := newNumberRules(env)
	optimizer, err := cel.NewStaticOptimizer(rules)
	if err != nil {
		return nil, fmt.Errorf("expr: %w", err)
	}
	g, err := newGuard(env)
	if err != nil {
		return nil, fmt.Errorf("expr: %w", err)
	}
	return &language{cel: env, rules: rules, optimizer: optimizer, guard: g}, nil
}

// Vars are what expressions see.
type Vars struct {
	// Input is the trigger payload: any JSON value. Numbers of any Go type
	// are read as doubles, as JSON gives them.
	Input any
	// Steps maps a step id to that step's output; expressions read it as
	// steps.<id>.output.
	Steps map[string]any
	// Execution holds facts about the execution (id, workflow_id,
	// started_on, ...). A time.Time value becomes a CEL timestamp.
	Execution map[string]any
}

// activation binds the variables of one Eval call, which may evaluate
// several programs one after another. It converts each variable once, and
// only if an expression reads it.
type activation struct {
	vars                    Vars
	input, steps, execution ref.Val
	built                   budget
}

func (v Vars) activation() *activation { return &activation{vars: v} }

var noFacts = map[string]any{}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case "input":
		if a.input == nil {
			a.input = jsonAdapter{}.NativeToValue(a.vars.Input)
		}
		return a.input, true
	case "steps":
		if a.steps == nil {
			steps := make(map[string]any, len(a.vars.Steps))
			for id, out := range a.vars.Steps {
				steps[id] = map[string]any{"output": out}
			}
			a.steps = jsonAdapter{}.NativeToValue(steps)
		}
		return a.steps, true
	case "execution":
		if a.execution == nil {
			facts := a.vars.Execution
			if facts == nil {
				facts = noFacts
			}
			a.execution = jsonAdapter{}.NativeToValue(facts)
		}
		return a.execution, true
	case budgetName:
		return &a.built, true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

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
	prg     cel.Program
	out     *cel.Type
	limit   uint64
	timeout time.Duration // 0 for a program without comprehensions
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
	if k := p.out.Kind(); k != types.BoolKind && k != types.DynKind && k != types.AnyKind {
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
	lang, err := e.language()
	if err != nil {
		return nil, &Error{Line: 1, Column: 1, Message: err.Error()}
	}
	p, cerr := e.build(lang, src)
	if cerr != nil {
		return nil, cerr
	}
	if e.cache != nil {
		e.cache.add(src, p)
	}
	return p, nil
}

// build parses, checks, rewrites and plans src. cel-go panics on a few
// sources when it plans them, such as a map literal with a key of bytes,
// which Go cannot hash; such a source is refused, not a crash of the
// caller.
func (e *Env) build(lang *language, src string) (p *Program, cerr *Error) {
	defer func() {
		if r := recover(); r != nil {
			p, cerr = nil, &Error{Line: 1, Column: 1, Message: fmt.Sprintf("expression cannot be compiled: %v", r)}
		}
	}()
	checked, iss := lang.cel.Compile(src)
	if iss.Err() != nil {
		return nil, e.issue(iss)
	}
	tree := checked.NativeRep()
	at := func(id int64, msg string) *Error {
		loc := tree.SourceInfo().GetStartLocation(id)
		return &Error{Line: max(loc.Line(), 1), Column: max(loc.Column()+1, 1), Message: msg}
	}
	if id, lit, found := fractionModulo(tree); found {
		return nil, at(id, fmt.Sprintf("%% needs whole numbers, not %v", lit))
	}
	if id, found := bytesMapKey(tree); found {
		return nil, at(id, "a map key must be an int, uint, bool or string, not bytes")
	}
	rewritten := checked
	if lang.rules.applies(tree) {
		if rewritten, iss = lang.optimizer.Optimize(lang.cel, checked); iss.Err() != nil {
			return nil, e.issue(iss)
		}
	}
	prg, err := lang.cel.Program(rewritten,
		cel.CostLimit(e.cfg.costLimit),
		cel.InterruptCheckFrequency(interruptCheckFrequency),
		cel.EvalOptions(cel.OptOptimize),
		cel.CustomDecoratorV2(lang.guard.decorate),
	)
	if err != nil {
		return nil, &Error{Line: 1, Column: 1, Message: err.Error()}
	}
	p = &Program{prg: prg, out: rewritten.OutputType(), limit: e.cfg.costLimit}
	if loops(rewritten.NativeRep()) {
		p.timeout = e.cfg.timeout
	}
	return p, nil
}

// loops says whether a has a comprehension.
func loops(a *ast.AST) (found bool) {
	ast.PostOrderVisit(a.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		found = found || e.Kind() == ast.ComprehensionKind
	}))
	return found
}

// bytesMapKey finds a map literal's key of type bytes.
func bytesMapKey(a *ast.AST) (id int64, found bool) {
	ast.PostOrderVisit(a.Expr(), ast.NewExprVisitor(func(e ast.Expr) {
		if found || e.Kind() != ast.MapKind {
			return
		}
		for _, entry := range e.AsMap().Entries() {
			if key := entry.AsMapEntry().Key(); a.GetType(key.ID()).Kind() == types.BytesKind {
				id, found = key.ID(), true
				return
			}
		}
	}))
	return id, found
}

// issue turns the first of CEL's issues, in source order, into an Error.
func (e *Env) issue(iss *cel.Issues) *Error {
	var first *Error
	for _, ce := range iss.Errors() {
		line, col := ce.Location.Line(), ce.Location.Column()+1
		if line < 1 || col < 1 {
			line, col = 1, 1
		}
		if first != nil && (line > first.Line || line == first.Line && col >= first.Column) {
			continue
		}
		msg := strings.TrimSuffix(ce.Message, " (in container '')")
		if strings.Contains(msg, "recursion") {
			msg = fmt.Sprintf("expression nests more than %d levels deep", e.cfg.maxNesting)
		}
		first = &Error{Line: line, Column: col, Message: plainSyntaxError(msg)}
	}
	return first
}

// The parser's grammar words, such as "mismatched input '<EOF>' expecting
// {'[', '{', '(', ...}", say what it found in terms of its grammar;
// plainSyntaxError says what it found.
var (
	unexpectedEnd   = regexp.MustCompile(`(mismatched|extraneous) input '<EOF>'( expecting .*)?$`)
	unexpectedToken = regexp.MustCompile(`((mismatched|extraneous) input|no viable alternative at input) ('.*?')( expecting .*)?$`)
	missingAtEnd    = regexp.MustCompile(`(missing '.*?') at '<EOF>'$`)
)

func plainSyntaxError(msg string) string {
	msg = unexpectedEnd.ReplaceAllString(msg, "unexpected end of expression")
	msg = missingAtEnd.ReplaceAllString(msg, "$1 at the end of the expression")
	return unexpectedToken.ReplaceAllString(msg, "unexpected $3")
}

// Eval evaluates the expression. The result is made of JSON-native values:
// map[string]any, []any, string, float64, int64, bool and nil; timestamps
// become RFC 3339 strings, durations strings such as "1h30m0s" and bytes
// base64 strings.
func (p *Program) Eval(ctx context.Context, v Vars) (any, error) {
	ev, err := startEvaluation(ctx, v, p.timeout)
	if err != nil {
		return nil, err
	}
	defer ev.close()
	val, err := p.eval(ev)
	if err != nil {
		return nil, err
	}
	return ev.toJSON(val)
}

// EvalBool evaluates an expression that must yield a bool.
func (p *Program) EvalBool(ctx context.Context, v Vars) (bool, error) {
	ev, err := startEvaluation(ctx, v, p.timeout)
	if err != nil {
		return false, err
	}
	defer ev.close()
	val, err := p.eval(ev)
	if err != nil {
		return false, err
	}
	b, ok := val.(types.Bool)
	if !ok {
		return false, fmt.Errorf("expression must yield a bool, not %s", typeName(val))
	}
	return bool(b), nil
}

// evaluation is one Eval call of a Program, Template or Value: the
// variables, the context and the cost spent, which all the expressions it
// evaluates share. cel-go keeps the cost on the execution frame, so every
// program evaluated on the same frame counts against one limit.
type evaluation struct {
	parent   context.Context // the caller's: a cancel of the execution
	ctx      context.Context // parent with the deadline of the Eval call
	cancel   context.CancelFunc
	timeout  time.Duration
	frame    *interpreter.ExecutionFrame
	built    *budget // what the expressions and templates have built
	returned uint64  // the encoded size of the result so far (toJSON)
	slot     evalslots.Slot
}

// startEvaluation waits for one of the process's evaluation slots
// (pkg/evalslots), or until ctx ends, and then starts the evaluation: its
// deadline runs from then, so the wait does not eat into it.
func startEvaluation(ctx context.Context, v Vars, timeout time.Duration) (*evaluation, error) {
	slot, err := evalslots.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	ev := newEvaluation(ctx, v, timeout)
	ev.slot = slot
	return ev, nil
}

func newEvaluation(parent context.Context, v Vars, timeout time.Duration) *evaluation {
	act := v.activation()
	// An activation is a valid input, so NewExecutionFrame cannot fail.
	frame, _ := interpreter.NewExecutionFrame(act)
	ctx, cancel := parent, context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(parent, timeout)
	}
	if ctx.Done() != nil {
		// The frame looks at the context between the steps of
		// comprehensions, so that a cancel or the deadline stops a long one.
		_ = frame.SetContext(ctx, interruptCheckFrequency)
	}
	return &evaluation{parent: parent, ctx: ctx, cancel: cancel, timeout: timeout, frame: frame, built: &act.built}
}

func (ev *evaluation) close() {
	ev.frame.Close()
	ev.cancel()
	ev.slot.Release()
}

// stopped is why the evaluation was stopped from outside: the caller's
// context ended, or the deadline passed.
func (ev *evaluation) stopped() error {
	if err := ev.parent.Err(); err != nil {
		return err
	}
	if ev.ctx.Err() != nil {
		return fmt.Errorf("%w: it took longer than %s", ErrTimeout, ev.timeout)
	}
	return nil
}

func (p *Program) eval(ev *evaluation) (ref.Val, error) {
	if err := ev.stopped(); err != nil {
		return nil, err
	}
	val, _, err := p.prg.Eval(ev.frame)
	if err == nil {
		return val, nil
	}
	if serr := ev.stopped(); serr != nil {
		return nil, serr
	}
	var cancelled interpreter.EvalCancelledError
	if errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded {
		return nil, fmt.Errorf("%w of %d", ErrCostLimit, p.limit)
	}
	return nil, err
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
