package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// query reads and checks query parameters, keeping the first problem.
type query struct {
	values url.Values
	err    error
}

func newQuery(r *http.Request) *query { return &query{values: r.URL.Query()} }

func (q *query) fail(format string, args ...any) {
	if q.err == nil {
		q.err = cardflow.Errorf(cardflow.EINVALID, format, args...)
	}
}

// str returns a parameter; required ones must be present and not blank.
func (q *query) str(name string, required bool) string {
	v := q.values.Get(name)
	if required && strings.TrimSpace(v) == "" {
		q.fail("query parameter %s is required", name)
	}
	if len(v) > 200 {
		q.fail("query parameter %s is too long", name)
	}
	return v
}

// version reads a positive whole number; 0 means absent (when optional).
func (q *query) version(name string, required bool) int {
	v := q.str(name, required)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		q.fail("query parameter %s must be a positive whole number, got %q", name, v)
		return 0
	}
	return n
}

// versionedPageKey reads the page key of a list of versioned records
// (organization_id, an id, a version); ok is false when none was sent. The
// organization defaults to the caller's.
func (q *query) versionedPageKey(r *http.Request, idName, versionName string) (org, id string, version int, ok bool) {
	org, id, version = q.str("organization_id", false), q.str(idName, false), q.version(versionName, false)
	if (id == "") != (version == 0) {
		q.fail("the page key needs both %s and %s, as lastKey gave them", idName, versionName)
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

// limit reads the page size: default 20, above 30 means 30, anything not a
// positive whole number is refused.
func (q *query) limit() int {
	v := q.values.Get("limit")
	if v == "" {
		return cardflow.DefaultLimit
	}
	n, err := strconv.Atoi(v)
	if err != nil && errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(v, "-") {
		return cardflow.MaxLimit
	}
	if err != nil || n < 1 {
		q.fail("query parameter limit must be a positive whole number (1 to %d), got %q", cardflow.MaxLimit, v)
		return 0
	}
	return min(n, cardflow.MaxLimit)
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
	if _, err := dec.Token(); err != io.EOF {
		line, col := position(body, dec.InputOffset())
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
		return "the request body is not valid JSON: it ends too early"
	case errors.As(err, &typ):
		line, col := position(body, typ.Offset)
		field := typ.Field
		if field == "" {
			return fmt.Sprintf("the request body must be a JSON object, not %s", typ.Value)
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
