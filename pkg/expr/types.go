package expr

import "strings"

// typeKind is the kind of a celType.
type typeKind uint8

const (
	kindDyn typeKind = iota
	kindNull
	kindBool
	kindInt
	kindUint
	kindDouble
	kindString
	kindBytes
	kindTimestamp
	kindDuration
	kindList     // Args: element
	kindMap      // Args: key, value
	kindType     // Args: none, or the type the value denotes
	kindOptional // Args: the wrapped type
	kindParam    // a type parameter of an overload, named by Name
	kindError    // the type of a subexpression that failed to check
)

// celType is the static type of an expression as the checker infers it.
type celType struct {
	Kind typeKind
	Args []celType
	Name string
}

var (
	dynType       = celType{Kind: kindDyn}
	nullType      = celType{Kind: kindNull}
	boolType      = celType{Kind: kindBool}
	intType       = celType{Kind: kindInt}
	uintType      = celType{Kind: kindUint}
	doubleType    = celType{Kind: kindDouble}
	stringType    = celType{Kind: kindString}
	bytesType     = celType{Kind: kindBytes}
	timestampType = celType{Kind: kindTimestamp}
	durationType  = celType{Kind: kindDuration}
	errorType     = celType{Kind: kindError}
)

func listOf(elem celType) celType    { return celType{Kind: kindList, Args: []celType{elem}} }
func mapOf(k, v celType) celType     { return celType{Kind: kindMap, Args: []celType{k, v}} }
func optionalOf(t celType) celType   { return celType{Kind: kindOptional, Args: []celType{t}} }
func typeOf(t celType) celType       { return celType{Kind: kindType, Args: []celType{t}} }
func paramType(name string) celType  { return celType{Kind: kindParam, Name: name} }
func (t celType) isDynOrError() bool { return t.Kind == kindDyn || t.Kind == kindError }

// names of the kinds as CEL spells the types; timestamp and duration are
// the protobuf well-known types.
var kindNames = [...]string{"dyn", "null_type", "bool", "int", "uint", "double", "string", "bytes",
	"google.protobuf.Timestamp", "google.protobuf.Duration", "list", "map", "type", "optional_type", "", "*error*"}

// String names the type as CEL does: "int", "list(dyn)",
// "map(string, dyn)", "google.protobuf.Timestamp".
func (t celType) String() string { return t.format(false) }

// mayBeBool reports whether a value of the type may be a bool.
func (t celType) mayBeBool() bool { return t.Kind == kindBool || t.Kind == kindDyn }

// format spells the type; in error messages (msg) CEL shortens the
// well-known types to timestamp and duration, null_type to null and writes
// error as !error!.
func (t celType) format(msg bool) string {
	name := kindNames[t.Kind]
	switch {
	case t.Kind == kindParam:
		if msg {
			return t.Name
		}
		return "<" + t.Name + ">"
	case !msg:
	case t.Kind == kindTimestamp:
		name = "timestamp"
	case t.Kind == kindDuration:
		name = "duration"
	case t.Kind == kindNull:
		name = "null"
	case t.Kind == kindError:
		name = "!error!"
	}
	if len(t.Args) == 0 {
		return name
	}
	args := make([]string, len(t.Args))
	for i, a := range t.Args {
		args[i] = a.format(msg)
	}
	return name + "(" + strings.Join(args, ", ") + ")"
}

// equal reports whether two types are exactly the same.
func (t celType) equal(u celType) bool {
	if t.Kind != u.Kind || t.Name != u.Name || len(t.Args) != len(u.Args) {
		return false
	}
	for i := range t.Args {
		if !t.Args[i].equal(u.Args[i]) {
			return false
		}
	}
	return true
}

func (t celType) hasParam() bool {
	if t.Kind == kindParam {
		return true
	}
	for _, a := range t.Args {
		if a.hasParam() {
			return true
		}
	}
	return false
}

// substitution binds type parameters while an expression is checked.
type substitution map[string]celType

// assignable reports whether a value of type t1 may stand where t2 is
// expected, binding type parameters so that it does. A failed attempt
// leaves the bindings as they were.
func (s substitution) assignable(t1, t2 celType) bool {
	return s.attempt(func() bool { return s.unify(t1, t2) })
}

func (s substitution) assignableAll(l1, l2 []celType) bool {
	return s.attempt(func() bool { return s.unifyAll(l1, l2) })
}

func (s substitution) attempt(f func() bool) bool {
	var saved substitution
	if len(s) > 0 {
		saved = make(substitution, len(s))
		for k, v := range s {
			saved[k] = v
		}
	}
	if f() {
		return true
	}
	clear(s)
	for k, v := range saved {
		s[k] = v
	}
	return false
}

func (s substitution) unifyAll(l1, l2 []celType) bool {
	if len(l1) != len(l2) {
		return false
	}
	for i := range l1 {
		if !s.unify(l1[i], l2[i]) {
			return false
		}
	}
	return true
}

// unify follows the rules of CEL's reference checker: type parameters
// bind, dyn and error match anything, null goes where a nullable type
// does, and parameterized types match argument by argument.
func (s substitution) unify(t1, t2 celType) bool {
	if t2.Kind == kindParam {
		valid, bound := s.bind(t1, t2)
		if valid || bound {
			return valid
		}
	}
	if t1.Kind == kindParam {
		valid, _ := s.bind(t2, t1)
		return valid
	}
	if t1.isDynOrError() || t2.isDynOrError() {
		return true
	}
	if t1.Kind == kindNull {
		return t2.nullable()
	}
	if t2.Kind == kindNull {
		return t1.nullable()
	}
	switch t1.Kind {
	case kindType:
		if t2.Kind != kindType {
			return false
		}
		if len(t1.Args) == 0 || len(t2.Args) == 0 {
			return len(t2.Args) == 0
		}
		if t1.Args[0].hasParam() || t2.Args[0].hasParam() {
			return s.unify(t1.Args[0], t2.Args[0])
		}
		return true
	case kindList, kindMap, kindOptional:
		return t1.Kind == t2.Kind && s.unifyAll(t1.Args, t2.Args)
	}
	return t1.Kind == t2.Kind
}

func (t celType) nullable() bool {
	switch t.Kind {
	case kindNull, kindOptional, kindTimestamp, kindDuration:
		return true
	}
	return false
}

// bind reports whether t is a valid substitution for the parameter p, and
// whether p was bound already.
func (s substitution) bind(t, p celType) (valid, bound bool) {
	if t.equal(p) {
		return true, true
	}
	if sub, ok := s[p.Name]; ok {
		if t.equal(sub) {
			return true, true
		}
		if s.unify(t, sub) {
			if g := mostGeneral(t, sub); s.notIn(p, g) {
				s[p.Name] = g
			}
			return true, true
		}
		return false, true
	}
	if s.notIn(p, t) {
		s[p.Name] = t
		return true, false
	}
	return false, false
}

// notIn is the occurs check: p appears nowhere in t.
func (s substitution) notIn(p, t celType) bool {
	if p.equal(t) {
		return false
	}
	if t.Kind == kindParam {
		if sub, ok := s[t.Name]; ok {
			return s.notIn(p, sub)
		}
		return true
	}
	for _, a := range t.Args {
		if !s.notIn(p, a) {
			return false
		}
	}
	return true
}

func mostGeneral(t1, t2 celType) celType {
	if lessSpecific(t1, t2) {
		return t1
	}
	return t2
}

// lessSpecific reports whether t1 is t2 or matches it only through dyn.
func lessSpecific(t1, t2 celType) bool {
	if t1.Kind == kindDyn || t1.Kind == kindParam {
		return true
	}
	if t2.Kind == kindDyn || t2.Kind == kindParam || t1.Kind != t2.Kind {
		return false
	}
	switch t1.Kind {
	case kindType:
		if len(t1.Args) > 0 && len(t2.Args) > 0 {
			return lessSpecific(t1.Args[0], t2.Args[0])
		}
		return len(t1.Args) == 0
	case kindList, kindMap, kindOptional:
		for i := range t1.Args {
			if !lessSpecific(t1.Args[i], t2.Args[i]) {
				return false
			}
		}
		return true
	}
	return t1.equal(t2)
}

// apply replaces bound type parameters by their bindings, and unbound ones
// by dyn if toDyn.
func (s substitution) apply(t celType, toDyn bool) celType {
	if t.Kind == kindParam {
		if sub, ok := s[t.Name]; ok {
			return s.apply(sub, toDyn)
		}
		if toDyn {
			return dynType
		}
		return t
	}
	if len(t.Args) == 0 {
		return t
	}
	args := make([]celType, len(t.Args))
	for i, a := range t.Args {
		args[i] = s.apply(a, toDyn)
	}
	return celType{Kind: t.Kind, Args: args}
}
