package expr

// The syntax tree of a CEL expression, as parse builds it, check annotates
// it and the evaluator runs it. Every node records the byte offset in the
// source where it starts, so that errors point at the right character.
//
// Operators are calls of functions with CEL's operator names:
//
//	_+_ _-_ _*_ _/_ _%_ _==_ _!=_ _<_ _<=_ _>_ _>=_ @in
//	_&&_ _||_ !_ -_ _?_:_ _[_] _[?_]
//
// Macros (has, all, exists, exists_one, map, filter, cel.bind, optMap,
// optFlatMap, sortBy) are nodes of their own rather than expanded comprehensions:
// they are few, and a node per macro keeps checking and evaluation short.
type exprNode interface {
	// Pos is the byte offset where errors about the node point. It is where
	// the node starts, except that a binary or ternary operator points at its
	// operator, a call or macro (global or member-style, has() included) at
	// its '(' and a select at its '.', as in CEL's reference parser.
	Pos() int
}

// literal is a constant: nil (null), bool, int64, uint64, float64, string,
// or []byte.
type literal struct {
	Offset int
	Value  any
}

// ident is a name: a variable, a macro's variable, or a type name such as
// int or string.
type ident struct {
	Offset int
	Name   string
}

// selectExpr is operand.field. Optional marks operand.?field; Test marks
// has(operand.field), which yields whether the field is present.
type selectExpr struct {
	Offset   int
	Operand  exprNode
	Field    string
	Optional bool
	Test     bool
}

// call is a function call: Func(Args...) when Target is nil, otherwise the
// receiver-style Target.Func(Args...). A call whose target is a chain of
// names that spells a namespace, such as math.greatest(...) or
// optional.of(...), is parsed as receiver-style; check rewrites it into a
// global call of "math.greatest" when the first name is not a variable.
type call struct {
	Offset int
	Func   string
	Target exprNode
	Args   []exprNode
}

// listExpr is [a, b, ?c]; Optional[i] marks an element written ?e, which is
// left out when e is an empty optional.
type listExpr struct {
	Offset   int
	Elems    []exprNode
	Optional []bool
}

// mapExpr is {k: v, ?k2: v2}.
type mapExpr struct {
	Offset  int
	Entries []mapEntry
}

type mapEntry struct {
	Key, Value exprNode
	Optional   bool
}

// macro is one of the comprehension macros. Range is the list or map
// iterated (for cel.bind, the bound value; for optMap and optFlatMap, the
// optional); Var is the variable the body sees; Body is the predicate or
// transform (for cel.bind, the expression evaluated with Var bound). Filter
// is map's optional middle argument in range.map(x, filter, transform).
type macro struct {
	Offset int
	Kind   macroKind
	Range  exprNode
	Var    string
	Filter exprNode
	Body   exprNode
}

type macroKind int

const (
	macroAll macroKind = iota
	macroExists
	macroExistsOne
	macroMap
	macroFilter
	macroBind
	macroOptMap
	macroOptFlatMap
	macroSortBy // list.sortBy(x, key), of ext.Lists: the list ordered by key
)

func (n *literal) Pos() int    { return n.Offset }
func (n *ident) Pos() int      { return n.Offset }
func (n *selectExpr) Pos() int { return n.Offset }
func (n *call) Pos() int       { return n.Offset }
func (n *listExpr) Pos() int   { return n.Offset }
func (n *mapExpr) Pos() int    { return n.Offset }
func (n *macro) Pos() int      { return n.Offset }
