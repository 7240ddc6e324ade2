// Package jsonschema infers a JSON Schema (draft 2020-12) from a JSON value,
// for instance to describe the payload a workflow was triggered with.
package jsonschema

import (
	"encoding/json"
	"math"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Draft is the meta-schema of the schemas Infer returns.
const Draft = "https://json-schema.org/draft/2020-12/schema"

// Infer returns a schema that v is valid against. It takes the values
// encoding/json decodes to (map[string]any, []any, string, float64, bool,
// nil), Go integers and json.Number; other values are read as their JSON
// encoding.
//
// A float64 without a fraction is an "integer". Objects list their keys as
// required. The items of an array share one schema: objects merge their
// properties and require the keys every one of them has, integers and
// numbers make "number", and other mixes make a list of types. Strings get a
// format when every one of them has it: date-time, date, time, email, uri,
// uuid, ipv4 or ipv6. The result is built of map[string]any, []any and
// strings, as encoding/json would decode it.
func Infer(v any) map[string]any {
	var s shape
	s.add(v)
	out := s.schema()
	out["$schema"] = Draft
	return out
}

// kind is a bit set of JSON Schema types; its order is the order of a list
// of types.
type kind uint8

const (
	kindObject kind = 1 << iota
	kindArray
	kindString
	kindNumber
	kindInteger
	kindBoolean
	kindNull
)

var kindNames = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

// shape is what the values seen at one place of a document have in common.
type shape struct {
	kinds   kind
	strings int    // strings seen
	format  string // the format all of them have, or ""
	objects int    // objects seen
	props   map[string]*shape
	seen    map[string]int // how many objects have each key
	items   *shape         // nil until an array has an item
}

func (s *shape) add(v any) {
	switch v := v.(type) {
	case nil:
		s.kinds |= kindNull
	case bool:
		s.kinds |= kindBoolean
	case float64:
		s.addNumber(v)
	case float32:
		s.addNumber(float64(v))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		s.kinds |= kindInteger
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			f = math.Inf(1)
		}
		s.addNumber(f)
	case string:
		s.kinds |= kindString
		f := format(v)
		if s.strings == 0 {
			s.format = f
		} else if f != s.format {
			s.format = ""
		}
		s.strings++
	case []any:
		s.kinds |= kindArray
		for _, item := range v {
			if s.items == nil {
				s.items = &shape{}
			}
			s.items.add(item)
		}
	case map[string]any:
		s.kinds |= kindObject
		s.objects++
		if s.props == nil {
			s.props, s.seen = map[string]*shape{}, map[string]int{}
		}
		for k, item := range v {
			p := s.props[k]
			if p == nil {
				p = &shape{}
				s.props[k] = p
			}
			p.add(item)
			s.seen[k]++
		}
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return // nothing is known, so the schema allows anything
		}
		var decoded any
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.UseNumber()
		if dec.Decode(&decoded) == nil {
			s.add(decoded)
		}
	}
}

func (s *shape) addNumber(f float64) {
	if f == math.Trunc(f) && !math.IsInf(f, 0) {
		s.kinds |= kindInteger
	} else {
		s.kinds |= kindNumber
	}
}

func (s *shape) schema() map[string]any {
	out := map[string]any{}
	kinds := s.kinds
	if kinds&kindNumber != 0 {
		kinds &^= kindInteger // every integer is a number
	}
	var types []any
	for i, name := range kindNames {
		if kinds&(1<<i) != 0 {
			types = append(types, name)
		}
	}
	switch len(types) {
	case 0:
	case 1:
		out["type"] = types[0]
	default:
		out["type"] = types
	}
	if s.strings > 0 && s.format != "" {
		out["format"] = s.format
	}
	if len(s.props) > 0 {
		props := make(map[string]any, len(s.props))
		var required []any
		for k, p := range s.props {
			props[k] = p.schema()
			if s.seen[k] == s.objects {
				required = append(required, k)
			}
		}
		out["properties"] = props
		if required != nil {
			slices.SortFunc(required, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
			out["required"] = required
		}
	}
	if s.items != nil {
		out["items"] = s.items.schema()
	}
	return out
}

var (
	dateTimeRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)
	dateRE     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	timeRE     = regexp.MustCompile(`^\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)
	uuidRE     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	ipv4RE     = regexp.MustCompile(`^(0|[1-9]\d{0,2})(\.(0|[1-9]\d{0,2})){3}$`)
	emailRE    = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+/=?^_` + "`" + `{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_` + "`" + `{|}~-]+)*@` +
		`([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}$`)
	// uriRE is an absolute URI with an authority, in characters RFC 3986
	// allows unescaped.
	uriRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$`)
)

// format names the format of s, or returns "". It claims only what a
// validator asserting formats accepts.
func format(s string) string {
	parses := func(layout string) bool { _, err := time.Parse(layout, s); return err == nil }
	switch {
	case dateTimeRE.MatchString(s) && parses(time.RFC3339Nano):
		return "date-time"
	case dateRE.MatchString(s) && parses(time.DateOnly):
		return "date"
	case timeRE.MatchString(s) && parses("15:04:05.999999999Z07:00"):
		return "time"
	case uuidRE.MatchString(s):
		return "uuid"
	case ipv4RE.MatchString(s):
		if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
			return "ipv4"
		}
	case uriRE.MatchString(s):
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			return "uri"
		}
	case strings.Contains(s, ":"):
		if a, err := netip.ParseAddr(s); err == nil && a.Is6() && a.Zone() == "" {
			return "ipv6"
		}
	case isEmail(s):
		return "email"
	}
	return ""
}

func isEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if len(s) > 254 || at < 0 || at > 64 || !emailRE.MatchString(s) {
		return false
	}
	for label := range strings.SplitSeq(s[at+1:], ".") {
		if len(label) > 63 {
			return false
		}
	}
	return true
}
