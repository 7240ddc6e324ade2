package cardflow

// MaxNesting is how many levels deep the JSON the service takes in and
// stores may nest: request bodies, card answers and step outputs. JSON
// decoders stop at some depth (Go's at 10,000 levels), and a record holds
// what it stores a few levels deeper still, so a value accepted close to
// that depth would make its record unreadable. Business data nests a
// handful of levels; 64 leaves room for any of it.
const MaxNesting = 64

// Nesting returns how many levels deep the JSON b nests: 0 for a scalar,
// 1 for [] and {"a": 1}, 2 for [[1]], and so on. It reads the bytes once,
// without recursion, and skips brackets inside strings; for malformed JSON
// it returns a number no larger than len(b), which the decoder's own error
// makes moot.
func Nesting(b []byte) int {
	depth, deepest := 0, 0
	var s jsonScan
	for _, c := range b {
		switch s.step(c) {
		case '[':
			depth++
			deepest = max(deepest, depth)
		case ']':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}

// CheckNesting refuses JSON that nests deeper than MaxNesting. what names
// the JSON in the message, as in "the request body".
func CheckNesting(what string, b []byte) error {
	if n := Nesting(b); n > MaxNesting {
		return Errorf(EINVALID, "%s nests %d levels deep; the limit is %d", what, n, MaxNesting)
	}
	return nil
}

// pruneDepth is the depth below which Prune keeps everything: four times
// what MaxNesting lets in, so that values let in are kept wherever a record
// holds them, and far above the depth decoders refuse.
const pruneDepth = 4 * MaxNesting

// Prune returns a copy of the JSON b in which every array or object that
// starts more than 256 levels deep is replaced by null. A record that
// nests too deep to decode decodes once pruned, less the values that lay
// too deep. Like Nesting it reads the bytes once, without recursion.
func Prune(b []byte) []byte {
	out := make([]byte, 0, len(b))
	depth := 0
	// cut is the depth of the array or object being left out; 0 while
	// none is.
	cut := 0
	var s jsonScan
	for _, c := range b {
		keep := cut == 0
		switch s.step(c) {
		case '[':
			depth++
			if keep && depth > pruneDepth {
				cut, keep = depth, false
				out = append(out, "null"...)
			}
		case ']':
			if depth == cut {
				cut = 0
			}
			depth = max(depth-1, 0)
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

// jsonScan tells the brackets of JSON from the same bytes inside strings.
type jsonScan struct {
	inString, escaped bool
}

// step reads the next byte and returns '[' when it opens an array or an
// object, ']' when it closes one, and 0 otherwise. Bytes of multi-byte
// UTF-8 sequences never equal these ASCII characters.
func (s *jsonScan) step(c byte) byte {
	switch {
	case s.escaped:
		s.escaped = false
	case s.inString:
		switch c {
		case '\\':
			s.escaped = true
		case '"':
			s.inString = false
		}
	case c == '"':
		s.inString = true
	case c == '[' || c == '{':
		return '['
	case c == ']' || c == '}':
		return ']'
	}
	return 0
}
