package steps

import (
	"reflect"
	"slices"
	"strings"
)

// ConfigFields lists the JSON fields a kind's config decodes, sorted.
func ConfigFields(k Kind) []string {
	c, err := k.decode(map[string]any{})
	if err != nil {
		panic(err)
	}
	var names []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case f.Anonymous && name == "":
				walk(f.Type)
			case name != "" && name != "-":
				names = append(names, name)
			}
		}
	}
	walk(reflect.TypeOf(c))
	slices.Sort(names)
	return names
}

// DefineBroken defines a kind with the condition's config and the schema given.
func DefineBroken(name string, schema Schema) Kind {
	return Define[conditionConfig](name, Condition.traits, schema)
}
