package steps

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// decode reads a step's config into a kind's struct through JSON, so the
// struct's json tags are the config's field names; fields it does not name
// are ignored. A value of the wrong type reads "config.<field> must be
// <what the field holds>", or what the field's want tag says.
func decode(config map[string]any, into any) error {
	b, err := json.Marshal(config)
	if err != nil {
		return fmt.Errorf("config is not JSON: %v", err)
	}
	err = json.Unmarshal(b, into)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path, want := field(reflect.TypeOf(into), te.Field)
		if want == "" {
			want = kindOf(te.Type)
		}
		return fmt.Errorf("config.%s must be %s", path, want)
	}
	return err
}

// field follows the path of a type error through t: its JSON path, without
// the embedded structs encoding/json names in it, and the want tag of the
// field it ends at.
func field(t reflect.Type, path string) (jsonPath, want string) {
	var names []string
	var f reflect.StructField
	for name := range strings.SplitSeq(path, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return path, ""
		}
		if e, ok := t.FieldByName(name); ok && e.Anonymous {
			t = e.Type
			continue
		}
		found := false
		for i := range t.NumField() {
			if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); tag == name {
				f, found = t.Field(i), true
				break
			}
		}
		if !found {
			return path, ""
		}
		names = append(names, name)
		t = f.Type
	}
	return strings.Join(names, "."), f.Tag.Get("want")
}

// kindOf says what a value of Go type t is, in JSON's words.
func kindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return "an object"
}

// optional is a config field that tells a null from an absent field: set
// is true for a null too.
type optional[T any] struct {
	value T
	set   bool
}

// UnmarshalJSON reads the field's value; encoding/json calls it for a
// null as well.
func (o *optional[T]) UnmarshalJSON(b []byte) error {
	o.set = true
	return json.Unmarshal(b, &o.value)
}

// required checks a string field a step of kind cannot do without: absent
// or null, or blank.
func required(kind, key string, v *string) error {
	if v == nil {
		return fmt.Errorf("config.%s is required for a %s step", key, kind)
	}
	if strings.TrimSpace(*v) == "" {
		return fmt.Errorf("config.%s must not be empty", key)
	}
	return nil
}

// duration reads an ISO 8601 duration field; empty is 0.
func duration(key, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := cardflow.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("config.%s: %v", key, err)
	}
	return d, nil
}

// compileValue compiles a template value of the config; nil compiles to
// nil, which steps take as absent.
func compileValue(env *expr.Env, key string, v any) (*expr.Value, error) {
	if v == nil {
		return nil, nil
	}
	c, err := env.CompileValue(v)
	if err != nil {
		return nil, fmt.Errorf("config.%s: %w", key, err)
	}
	return c, nil
}
