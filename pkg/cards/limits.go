package cards

import (
	"fmt"
	"strconv"
	"strings"
)

// maxCardBytes bounds what one expansion produces, as JSON: the largest
// request body the API takes, so that any card one can save expands as
// written, and several times the 28 KB Teams accepts in a message (see
// docs/DECISIONS.md). It is charged as the template expands, with the
// size of every value a binding inserts and of every repetition $data
// makes, so the refusal comes before anything of that size is built.
const maxCardBytes = 256 << 10

var errCardTooLarge = thrownError(fmt.Sprintf("the card would be larger than %d KB as JSON; an expanded card may hold at most %d KB", maxCardBytes>>10, maxCardBytes>>10))

// jsonLen is the length of v written as JSON, escapes counted as
// encoding/json writes them (it escapes <, > and &). It stops once past
// limit, returning a partial length above it.
func jsonLen(v any, limit int) int {
	switch x := v.(type) {
	case string:
		return quotedLen(x, limit)
	case float64:
		var buf [32]byte
		return len(strconv.AppendFloat(buf[:0], x, 'g', -1, 64))
	case bool:
		if x {
			return 4
		}
		return 5
	case []any:
		n := 1 + max(len(x)-1, 0) // brackets and commas
		for _, item := range x {
			if n > limit {
				break
			}
			n += jsonLen(item, limit-n)
		}
		return n + 1
	case map[string]any:
		n := 1 + max(len(x)-1, 0) // braces and commas
		for k, item := range x {
			if n > limit {
				break
			}
			n += quotedLen(k, limit) + 1
			n += jsonLen(item, limit-n)
		}
		return n + 1
	}
	// null and undefined.
	return 4
}

// quotedLen is the length of s written as a JSON string; past limit, a
// partial length above it.
func quotedLen(s string, limit int) int {
	if len(s)+2 > limit {
		return len(s) + 2
	}
	n := 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			n += 2
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 6
		default:
			n++
		}
	}
	return n
}

// textLenJS is the length of toJSString(v), stopping once past limit.
func textLenJS(v any, limit int) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case []any:
		n := 0
		for _, item := range x {
			if n > limit {
				break
			}
			if !isNullish(item) {
				n += textLenJS(item, limit-n)
			}
			n++
		}
		return n
	case map[string]any:
		return len("[object Object]")
	}
	return len(toJSString(v))
}

// The functions that build a string or a list larger than their arguments
// (+, concat and the interpolation of "${a}${b}", replace, join, split,
// string, toUpper, toLower, setProperty) size their result from their
// evaluated arguments and refuse it before building it: cost.charge counts
// what a call built only after it returned, so a single replace could
// allocate gigabytes before the expansion's limit spoke.
const (
	maxString = 1 << 20 // bytes of one string a function builds
	maxList   = 100_000 // elements of one list, or entries of one object, a function builds
)

// measured is the size of what a function is about to build: n bytes of
// a string, or n elements of a list (list true). A walk that stops once past
// the cap gives a partial n.
type measured struct {
	n       int
	list    bool
	partial bool
}

// reserve refuses what the function name is about to build when it passes
// its cap, or when it would take the expansion past maxBuilt.
func (c *cost) reserve(name string, m measured) error {
	bytes := m.n
	if m.list {
		if m.n > maxList {
			return thrownError(fmt.Sprintf("%s would build a list of %d elements; a list may hold at most %d", name, m.n, maxList))
		}
		bytes = 8 * m.n
	} else if m.n > maxString {
		of := size(m.n)
		if m.partial {
			of = "more than 1 MiB"
		}
		return thrownError(fmt.Sprintf("%s would build a string of %s; a string may hold at most 1 MiB", name, of))
	}
	if c.built+bytes > maxBuilt {
		return errTooCostly
	}
	return nil
}

// sized evaluates the arguments, then has the cost reserve what measure
// says f will build, and only then calls f.
func sized(name string, measure func(args []any) measured, f func(args []any) (any, error), verify verifier) func(*expr, *state) (any, error) {
	return func(e *expr, s *state) (any, error) {
		args, err := evalArgs(e, s, verify)
		if err != nil {
			return nil, err
		}
		if m := measure(args); m.n > 0 {
			if err := s.cost.reserve(name, m); err != nil {
				return nil, err
			}
		}
		return f(args)
	}
}

// textLen bounds the length of v written as text, by toJSString or, for a
// list or object, as JSON (commonStringify), where a string in a container
// may take six bytes a byte once escaped. It stops once past limit.
func textLen(v any, nested bool, limit int) int {
	switch x := v.(type) {
	case string:
		if nested {
			return 6*len(x) + 2
		}
		return len(x)
	case []any:
		n := 2
		for _, item := range x {
			if n > limit {
				break
			}
			n += textLen(item, true, limit-n) + 1
		}
		return n
	case map[string]any:
		n := 2
		for k, item := range x {
			if n > limit {
				break
			}
			n += 6*len(k) + 3 + textLen(item, true, limit-n)
		}
		return n
	}
	// Numbers, bools, null and undefined.
	return 32
}

// textTotal bounds the text + or concat builds out of its arguments; none
// for a sum of numbers.
func textTotal(args []any) measured {
	n, text := 0, false
	for _, a := range args {
		if !isJSNumber(a) {
			text = true
		}
		n += textLen(a, false, maxString+1)
	}
	if !text {
		return measured{}
	}
	return measured{n: n, partial: true}
}

// concatSize bounds concat: lists (and null) give a list, anything else
// text.
func concatSize(args []any) measured {
	n := 0
	for _, a := range args {
		switch x := a.(type) {
		case []any:
			n += len(x)
		case nil, undefinedValue:
		default:
			return textTotal(args)
		}
	}
	return measured{n: n, list: true}
}

func replaceSize(args []any) measured {
	s, old, repl := stringOrEmpty(args[0]), stringOrEmpty(args[1]), stringOrEmpty(args[2])
	if old == "" || len(repl) <= len(old) {
		return measured{n: len(s)}
	}
	return measured{n: len(s) + strings.Count(s, old)*(len(repl)-len(old))}
}

func splitSize(args []any) measured {
	s, sep := stringOrEmpty(args[0]), ""
	if len(args) == 2 {
		sep = stringOrEmpty(args[1])
	}
	if sep == "" {
		// One element per UTF-16 unit: at most one a byte.
		return measured{n: len(s), list: true}
	}
	return measured{n: strings.Count(s, sep) + 1, list: true}
}

func joinSize(args []any) measured {
	list, ok := args[0].([]any)
	if !ok {
		return measured{}
	}
	n := 0
	for _, a := range args[1:] {
		n += len(list) * textLen(a, false, maxString+1)
	}
	for _, v := range list {
		n += textLen(v, false, maxString+1)
	}
	return measured{n: n, partial: true}
}

// propertiesSize bounds setProperty, which copies an object.
func propertiesSize(args []any) measured {
	obj, _ := args[0].(map[string]any)
	return measured{n: len(obj) + 1, list: true}
}

func stringSize(args []any) measured {
	return measured{n: textLen(args[0], false, maxString+1), partial: true}
}

// size writes a number of bytes for people.
func size(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
