package cardflow

import (
	"strings"
	"unicode"
)

// IsSpecSpace reports whether r is white space as openapi.yaml's patterns
// count it (JSON Schema patterns are ECMAScript's, whose \s is narrower
// than Go's unicode.IsSpace: U+0085, for one, is no space there). A value
// the spec's \S accepts is then never refused as empty.
func IsSpecSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', '\ufeff', '\u2028', '\u2029':
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// TrimSpecSpace trims the white space IsSpecSpace names from both ends.
func TrimSpecSpace(s string) string { return strings.TrimFunc(s, IsSpecSpace) }
