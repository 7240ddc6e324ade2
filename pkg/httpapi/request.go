package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// query reads and checks query parameters, keeping the first problem. The
// parameters read are the ones the endpoint knows: done refuses the others.
type query struct {
	values url.Values
	known  map[string]bool
	err    error
}

func newQuery(r *http.Request) *query {
	return &query{values: r.URL.Query(), known: map[string]bool{}}
}

func (q *query) fail(format string, args ...any) {
	if q.err == nil {
		q.err = cardflow.Errorf(cardflow.EINVALID, format, args...)
	}
}

// done returns the first problem: of the parameters read, else a parameter
// the endpoint does not know (a typo such as limt=5 is not dropped
// silently) or one given twice.
func (q *query) done() error {
	if q.err != nil {
		return q.err
	}
	names := make([]string, 0, len(q.values))
	for name := range q.values {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch {
		case !q.known[name]:
			known := make([]string, 0, len(q.known))
			for k := range q.known {
				known = append(known, k)
			}
			sort.Strings(known)
			return cardflow.Errorf(cardflow.EINVALID, "unknown query parameter %q; this endpoint takes %s", name, strings.Join(known, ", "))
		case len(q.values[name]) > 1:
			return cardflow.Errorf(cardflow.EINVALID, "query parameter %s is given %d times; give it once", name, len(q.values[name]))
		}
	}
	return nil
}

// str returns a parameter; required ones must be present and not blank.
func (q *query) str(name string, required bool) string {
	q.known[name] = true
	v := q.values.Get(name)
	if required && cardflow.TrimSpecSpace(v) == "" {
		q.fail("query parameter %s is required", name)
	}
	if len(v) > 200 {
		q.fail("query parameter %s is too long", name)
	}
	return v
}

// MaxVersion is the highest version number the API reads.
const MaxVersion = 999_999_999

// wholeNumber matches a positive whole number as the API writes one: digits
// only, no sign, no leading zero.
var wholeNumber = regexp.MustCompile(`^[1-9][0-9]*$`)

// version reads a version, 1 to MaxVersion; 0 means absent (when optional).
func (q *query) version(name string, required bool) int {
	v := q.str(name, required)
	if !q.values.Has(name) || required && cardflow.TrimSpecSpace(v) == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if !wholeNumber.MatchString(v) || err != nil || n > MaxVersion {
		q.fail("query parameter %s must be a whole number from 1 to %d, got %q", name, MaxVersion, v)
		return 0
	}
	return n
}

// ulidPattern matches an id the service gives out: a ULID as it writes one.
var ulidPattern = regexp.MustCompile(`^[0-7][0-9A-HJKMNP-TV-Z]{25}$`)

// pageID reads the id of a page key, which must be one the service gives
// out: an id no record can have would silently start the list over.
func (q *query) pageID(name string) string {
	v := q.str(name, false)
	if q.values.Has(name) && !ulidPattern.MatchString(v) {
		q.fail("query parameter %s of the page key must be an id as lastKey gave it (26 characters, 0-9 and A-Z), got %q", name, v)
		return ""
	}
	return v
}

// versionedPageKey reads the page key of a list of versioned records
// (organization_id, an id, a version); ok is false when none was sent. The
// organization defaults to the caller's.
func (q *query) versionedPageKey(r *http.Request, idName, versionName string) (org, id string, version int, ok bool) {
	org, id, version = q.str("organization_id", false), q.pageID(idName), q.version(versionName, false)
	if q.err != nil {
		return "", "", 0, false
	}
	if (id == "") != (version == 0) || org != "" && id == "" {
		q.fail("the page key needs both %s and %s (and organization_id, if any, beside them), as lastKey gave them", idName, versionName)
		return "", "", 0, false
	}
	if id == "" {
		return "", "", 0, false
	}
	if org == "" {
		org = cardflow.PrincipalFromContext(r.Context()).OrganizationID
	}
	return org, id, version, true
}

// oneOf reads a parameter that takes one of the values given; def when
// it is absent.
func (q *query) oneOf(name, def string, values ...string) string {
	q.known[name] = true
	if !q.values.Has(name) {
		return def
	}
	v := q.values.Get(name)
	for _, ok := range values {
		if v == ok {
			return v
		}
	}
	q.fail("query parameter %s must be %s, got %q", name, strings.Join(values, " or "), v)
	return def
}

// wholeOrZero matches a whole number from 0 as the API writes one, of at
// most 18 digits.
var wholeOrZero = regexp.MustCompile(`^(0|[1-9][0-9]{0,17})$`)

// count reads a whole number from 0 to most, which what describes in an
// error; given is false when it is absent.
func (q *query) count(name, what string, most int64) (n int64, given bool) {
	q.known[name] = true
	if !q.values.Has(name) {
		return 0, false
	}
	v := q.values.Get(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if !wholeOrZero.MatchString(v) || err != nil || n > most {
		q.fail("query parameter %s must be %s, a whole number from 0 to %d, got %q", name, what, most, v)
		return 0, false
	}
	return n, true
}

// limit reads the page size: default 20; a whole number above 30, however
// large, is read as 30; anything else (empty, zero, signed, not digits) is
// refused.
func (q *query) limit() int {
	q.known["limit"] = true
	if !q.values.Has("limit") {
		return cardflow.DefaultLimit
	}
	v := q.values.Get("limit")
	if !wholeNumber.MatchString(v) {
		q.fail("query parameter limit must be a whole number from 1 up (above %d reads as %d), got %q", cardflow.MaxLimit, cardflow.MaxLimit, v)
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n < cardflow.MaxLimit {
		return n
	}
	return cardflow.MaxLimit
}

// decodeBody reads a JSON object body into v. It refuses bodies over
// MaxBodyBytes, malformed JSON (saying where it broke), unknown fields and
// trailing data.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return cardflow.Errorf(cardflow.EINVALID, "a JSON object body is required")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "%s", describeJSONError(body, err, dec.InputOffset()))
	}
	if err := trailingData(body, dec); err != nil {
		return err
	}
	var tree any
	if err := json.Unmarshal(body, &tree); err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "%s", describeJSONError(body, err, 0))
	}
	if tree == nil {
		return cardflow.Errorf(cardflow.EINVALID, "the request body must be a JSON object, not null")
	}
	if path := nullPath(tree, reflect.TypeOf(v), ""); path != "" {
		return cardflow.Errorf(cardflow.EINVALID, "field %s must not be null; leave it out instead", path)
	}
	return nil
}

// nullPath returns where tree, decoded from the same body as a value of
// type t, holds a null that t has no place for. Decoding leaves such a
// field at its zero value, as if it had been left out, which would hide a
// mistake; free-form values (any) may hold null.
func nullPath(tree any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || t == reflect.TypeFor[json.RawMessage]() {
		return ""
	}
	switch x := tree.(type) {
	case nil:
		return path
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "" {
					name = f.Name
				}
				if v, ok := x[name]; ok && f.IsExported() && name != "-" {
					if p := nullPath(v, f.Type, joinPath(path, name)); p != "" {
						return p
					}
				}
			}
		case reflect.Map:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if p := nullPath(x[k], t.Elem(), joinPath(path, k)); p != "" {
					return p
				}
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, v := range x {
				if p := nullPath(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// readJSON reads a body that may be empty or any JSON value, refusing
// malformed JSON the way decodeBody does, with where it broke.
func readJSON(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := readBody(w, r)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return body, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil, cardflow.Errorf(cardflow.EINVALID, "%s", describeJSONError(body, err, dec.InputOffset()))
	}
	if err := trailingData(body, dec); err != nil {
		return nil, err
	}
	return body, nil
}

// trailingData refuses anything but white space after the first JSON
// value, saying where the rest starts.
func trailingData(body []byte, dec *json.Decoder) error {
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		rest := bytes.TrimLeft(body[end:], " \t\r\n")
		line, col := position(body, int64(len(body)-len(rest)))
		return cardflow.Errorf(cardflow.EINVALID, "the request body holds more than one JSON value (line %d, column %d)", line, col)
	}
	return nil
}

// readBody reads the whole body, refusing more than MaxBodyBytes and JSON
// that nests deeper than what is stored may.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, cardflow.Errorf(cardflow.ETOOLARGE, "the request body is larger than %d KB", MaxBodyBytes>>10)
		}
		return nil, cardflow.Errorf(cardflow.EINVALID, "the request body could not be read")
	}
	if err := cardflow.CheckNesting("the request body", body); err != nil {
		return nil, err
	}
	return body, nil
}

// describeJSONError turns a decoding error into a message for a person.
func describeJSONError(body []byte, err error, offset int64) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		// Offset counts the offending byte too.
		line, col := position(body, syntax.Offset-1)
		return fmt.Sprintf("the request body is not valid JSON: %s (line %d, column %d)", syntax.Error(), line, col)
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := position(body, int64(len(body)))
		return fmt.Sprintf("the request body is not valid JSON: it ends too early (line %d, column %d)", line, col)
	case errors.As(err, &typ):
		line, col := position(body, typ.Offset)
		field := typ.Field
		if field == "" {
			return fmt.Sprintf("the request body must be a JSON object, not %s", typ.Value)
		}
		if number, ok := strings.CutPrefix(typ.Value, "number "); ok && typ.Type.Kind() == reflect.Int {
			// The integer fields of the bodies are versions.
			return fmt.Sprintf("field %s must be a whole number (versions are 1 to %d), not %s (line %d, column %d)", field, MaxVersion, number, line, col)
		}
		return fmt.Sprintf("field %s must be %s, not %s (line %d, column %d)", field, jsonKind(typ.Type.Kind().String()), typ.Value, line, col)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		line, col := position(body, offset)
		return fmt.Sprintf("unknown field %s in the request body (line %d, column %d)", strings.TrimPrefix(err.Error(), "json: unknown field "), line, col)
	}
	line, col := position(body, offset)
	return fmt.Sprintf("the request body could not be read as JSON near line %d, column %d: %v", line, col, err)
}

// jsonKind names a Go kind the way a JSON user thinks of it.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "int", "int64", "float64", "uint", "int32":
		return "a number"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	}
	return "of another type"
}

// position turns a byte offset into a 1-based line and column.
func position(body []byte, offset int64) (line, col int) {
	if offset < 0 {
		offset = 0
	}
	if offset > int64(len(body)) {
		offset = int64(len(body))
	}
	before := body[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}
