// Package cards validates Microsoft Adaptive Cards, version 1.5 and older,
// and expands card templates (the Adaptive Cards Template Language).
//
// The rules follow the Adaptive Cards 1.5 schema, and in matters the schema
// leaves open (case of enumeration values, column widths, fallback) they
// follow Microsoft's own parser, the adaptivecards npm package, which the
// tests run as a reference: see TestAgreesWithMicrosoftParser. Templates
// expand as Microsoft's adaptivecards-templating package expands them: see
// TestExpandAgreesWithMicrosoftTemplating.
package cards

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// root names the card in messages: it is the field of the API that carries it.
const root = "card_payload"

// maxReported bounds the problems one error lists, to keep it readable.
const maxReported = 5

// Validate reports whether payload is an Adaptive Card of version 1.5 or
// older. It returns nil or a *cardflow.Error with code EINVALID whose message
// lists the problems found, each after the JSON path where it lies, such as
//
//	card_payload.body[2].columns[0].items[1]: TextBlock requires "text"
//
// A card template passes where its bindings stand: a value such as
// "${if(urgent, 'Attention', 'Default')}" is checked once expanded.
func Validate(payload map[string]any) error {
	v := &validator{ids: make(map[string][]string)}
	v.card(root, payload, rootCard)
	v.checkIDs()
	v.checkTargets()
	if len(v.problems) == 0 {
		return nil
	}
	msg := v.problems
	if len(msg) > maxReported {
		msg = append(msg[:maxReported:maxReported], fmt.Sprintf("and %d more problems", len(v.problems)-maxReported))
	}
	return cardflow.Errorf(cardflow.EINVALID, "%s", strings.Join(msg, "; "))
}

type validator struct {
	problems []string
	// ids maps each id to the paths that declare it, in order.
	ids     map[string][]string
	idOrder []string
	// targets are the ids that Action.ToggleVisibility names.
	targets []target
}

type target struct{ path, id string }

// scope is what an object inherits from the objects around it.
type scope struct {
	// fallbackAbove tells whether an enclosing element or action of the same
	// card has a fallback, which then stands in for an unknown type inside.
	fallbackAbove bool
}

func (v *validator) addf(p, format string, args ...any) {
	v.problems = append(v.problems, p+": "+fmt.Sprintf(format, args...))
}

func (v *validator) wrongType(p, want string, val any) {
	v.addf(p, "must be %s, got %s", want, describe(val))
}

// card validates a card, or the card of an Action.ShowCard.
func (v *validator) card(p string, obj map[string]any, sch *schema) {
	v.required(p, obj, sch)
	if t, ok := obj["type"]; ok && t != "AdaptiveCard" {
		v.addf(p+".type", "must be \"AdaptiveCard\", got %s", describe(t))
	}
	if ver, ok := obj["version"]; ok && sch == rootCard {
		v.version(p+".version", ver)
	}
	// An unknown type must find a fallback within its own card.
	v.props(p, obj, sch, scope{})
}

var versionPattern = regexp.MustCompile(`^([0-9]{1,9})\.([0-9]{1,9})$`)

func (v *validator) version(p string, val any) {
	s, ok := val.(string)
	if !ok {
		v.wrongType(p, `a version string such as "1.5"`, val)
		return
	}
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		v.addf(p, `must be a version such as "1.5", got %s`, describe(val))
		return
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major > 1 || major == 1 && minor > 5 {
		v.wrongType(p, `"1.5" or older`, val)
	}
}

// isBinding reports whether val is a string with a template binding, ${...}:
// its value is known only once the card is expanded with data, and then
// the expanded card is validated.
func isBinding(val any) bool {
	s, ok := val.(string)
	return ok && strings.Contains(s, "${")
}

// cardObject validates an element or an action found at position pos.
func (v *validator) cardObject(p string, val any, pos *position, s scope) {
	if isBinding(val) {
		return
	}
	obj, ok := val.(map[string]any)
	if !ok {
		v.addf(p, "must be an %s, got %s", pos.what, describe(val))
		return
	}
	fb, hasFallback := obj["fallback"]
	sch := v.schemaOf(p, obj, pos, hasFallback || s.fallbackAbove)
	if sch != nil {
		inner := s
		inner.fallbackAbove = s.fallbackAbove || hasFallback && pos.canFallback
		v.properties(p, obj, sch, inner)
	}
	if hasFallback {
		v.fallback(p+".fallback", fb, pos, s)
	}
}

// schemaOf returns the schema of obj, or nil after reporting why there is
// none. An unknown type is no problem where a fallback replaces it.
func (v *validator) schemaOf(p string, obj map[string]any, pos *position, fallback bool) *schema {
	t, ok := obj["type"]
	if !ok {
		if pos.implied == nil {
			v.addf(p, "%s requires \"type\"", pos.what)
		}
		return pos.implied
	}
	name, ok := t.(string)
	switch {
	case !ok:
		v.wrongType(p+".type", "a string", t)
	case pos.types[name] != nil:
		return pos.types[name]
	case known[name]:
		// A fallback is for types a host may not know, not for misplaced ones.
		v.addf(p+".type", "%q is not allowed here", name)
	case !pos.canFallback || !fallback:
		v.addf(p+".type", "unknown %s type %q", pos.what, name)
	}
	return nil
}

func (v *validator) fallback(p string, val any, pos *position, s scope) {
	if str, ok := val.(string); ok && strings.EqualFold(str, "drop") {
		return
	}
	if _, ok := val.(map[string]any); ok {
		v.cardObject(p, val, pos, s)
		return
	}
	v.addf(p, "must be \"drop\" or an %s, got %s", pos.what, describe(val))
}

// required reports the properties of sch missing from obj.
func (v *validator) required(p string, obj map[string]any, sch *schema) {
	for _, name := range sch.required {
		if _, ok := obj[name]; !ok {
			v.addf(p, "%s requires %q", sch.typ, name)
		}
	}
}

// properties validates obj, which sch describes.
func (v *validator) properties(p string, obj map[string]any, sch *schema, s scope) {
	v.required(p, obj, sch)
	v.props(p, obj, sch, s)
}

// props validates the properties of obj that sch describes.
func (v *validator) props(p string, obj map[string]any, sch *schema, s scope) {
	for _, pr := range sch.props {
		if val, ok := obj[pr.name]; ok && !isBinding(val) {
			pr.check(v, key(p, pr.name), val, s)
		}
	}
	for _, name := range sch.newer {
		if _, ok := obj[name]; ok {
			v.addf(key(p, name), "is new in Adaptive Cards 1.6; cards must be 1.5 or older")
		}
	}
}

func (v *validator) declareID(p, id string) {
	if _, ok := v.ids[id]; !ok {
		v.idOrder = append(v.idOrder, id)
	}
	v.ids[id] = append(v.ids[id], p)
}

// checkIDs reports ids declared twice, unless one declaration stands in the
// fallback of an object that holds the other: then only one is rendered, and
// a fallback commonly keeps the id of what it replaces.
func (v *validator) checkIDs() {
	for _, id := range v.idOrder {
		paths := v.ids[id]
		for j := 1; j < len(paths); j++ {
			for i := 0; i < j; i++ {
				if !exclusive(paths[i], paths[j]) {
					v.addf(paths[j], "duplicate id %q, also used at %s", id, paths[i])
					break
				}
			}
		}
	}
}

// exclusive reports whether paths a and b are alternatives: whether some
// object holds one of them in its fallback and the other elsewhere.
func exclusive(a, b string) bool {
	return inOtherBranch(a, b) || inOtherBranch(b, a)
}

func inOtherBranch(a, b string) bool {
	const seg = ".fallback"
	for i := strings.Index(a, seg); i >= 0; {
		end := i + len(seg)
		if under(a, a[:end]) && under(b, a[:i]) && !under(b, a[:end]) {
			return true
		}
		next := strings.Index(a[end:], seg)
		if next < 0 {
			break
		}
		i = end + next
	}
	return false
}

// under reports whether path p lies at or under path q.
func under(p, q string) bool {
	return strings.HasPrefix(p, q) && (len(p) == len(q) || p[len(q)] == '.' || p[len(q)] == '[')
}

func (v *validator) checkTargets() {
	for _, t := range v.targets {
		if _, ok := v.ids[t.id]; !ok {
			v.addf(t.path, "no element has id %q", t.id)
		}
	}
}

// describe shows a JSON value in a message.
func describe(val any) string {
	switch x := val.(type) {
	case nil:
		return "null"
	case string:
		if r := []rune(x); len(r) > 40 {
			x = string(r[:40]) + "…"
		}
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		return x.String()
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	if isNumber(val) {
		return fmt.Sprint(val)
	}
	return fmt.Sprintf("a %T", val)
}

func isNumber(val any) bool {
	switch val.(type) {
	case float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
		return true
	}
	return false
}

func index(p string, i int) string { return p + "[" + strconv.Itoa(i) + "]" }

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

// key returns the path of property name of the object at path p.
func key(p, name string) string {
	if identifier.MatchString(name) {
		return p + "." + name
	}
	return p + "[" + strconv.Quote(name) + "]"
}

// Checks of property values.

func str(v *validator, p string, val any, _ scope) {
	if _, ok := val.(string); !ok {
		v.wrongType(p, "a string", val)
	}
}

func nonEmpty(v *validator, p string, val any, _ scope) {
	s, ok := val.(string)
	switch {
	case !ok:
		v.wrongType(p, "a string", val)
	case s == "":
		v.addf(p, "must not be empty")
	}
}

func boolean(v *validator, p string, val any, _ scope) {
	if _, ok := val.(bool); !ok {
		v.wrongType(p, "true or false", val)
	}
}

func number(v *validator, p string, val any, _ scope) {
	if !isNumber(val) {
		v.wrongType(p, "a number", val)
	}
}

func anything(*validator, string, any, scope) {}

func enum(values ...string) check {
	quoted := make([]string, len(values))
	for i, w := range values {
		quoted[i] = strconv.Quote(w)
	}
	want := "one of " + strings.Join(quoted, ", ")
	if len(values) == 1 {
		want = quoted[0]
	}
	return func(v *validator, p string, val any, _ scope) {
		if s, ok := val.(string); ok {
			for _, w := range values {
				if strings.EqualFold(s, w) {
					return
				}
			}
		}
		v.wrongType(p, want, val)
	}
}

var (
	pixelPattern  = regexp.MustCompile(`^[0-9]+px$`)
	widthPattern  = regexp.MustCompile(`^[0-9]+(px|\*)?$`)
	langPattern   = regexp.MustCompile(`^[a-zA-Z]{2,3}$`)
	capabilityVer = regexp.MustCompile(`^[0-9]+\.[0-9]+(\.[0-9]+)?$`)
)

func matches(pattern *regexp.Regexp, val any) bool {
	s, ok := val.(string)
	return ok && pattern.MatchString(s)
}

func pixels(v *validator, p string, val any, _ scope) {
	if !matches(pixelPattern, val) {
		v.wrongType(p, `a size in pixels such as "50px"`, val)
	}
}

func imageHeight(v *validator, p string, val any, _ scope) {
	if s, ok := val.(string); ok && (strings.EqualFold(s, "auto") || strings.EqualFold(s, "stretch")) {
		return
	}
	if !matches(pixelPattern, val) {
		v.wrongType(p, `"auto", "stretch" or a size in pixels such as "50px"`, val)
	}
}

// columnWidth takes "auto" and "stretch" in lower case only, as Microsoft's
// parser does.
func columnWidth(v *validator, p string, val any, _ scope) {
	if val == "auto" || val == "stretch" || isNumber(val) || matches(widthPattern, val) {
		return
	}
	v.wrongType(p, `"auto", "stretch", a weight such as 2 or a size in pixels such as "50px"`, val)
}

func tableColumnWidth(v *validator, p string, val any, _ scope) {
	if !isNumber(val) && !matches(widthPattern, val) {
		v.wrongType(p, `a weight such as 2 or a size in pixels such as "50px"`, val)
	}
}

func lang(v *validator, p string, val any, _ scope) {
	if !matches(langPattern, val) {
		v.wrongType(p, `a language code such as "en"`, val)
	}
}

func date(v *validator, p string, val any, _ scope) {
	if s, ok := val.(string); ok {
		if _, err := time.Parse(time.DateOnly, s); err == nil {
			return
		}
	}
	v.wrongType(p, `a date such as "2024-01-31"`, val)
}

func clock(v *validator, p string, val any, _ scope) {
	if s, ok := val.(string); ok && len(s) == len("15:04") {
		if _, err := time.Parse("15:04", s); err == nil {
			return
		}
	}
	v.wrongType(p, `a time such as "09:30"`, val)
}

func id(v *validator, p string, val any, _ scope) {
	s, ok := val.(string)
	if !ok {
		v.wrongType(p, "a string", val)
		return
	}
	if s != "" {
		v.declareID(p, s)
	}
}

// inputID is the id of an input, which names its value when the card is
// submitted, so it may not be empty.
func inputID(v *validator, p string, val any, s scope) {
	nonEmpty(v, p, val, s)
	if id, ok := val.(string); ok && id != "" {
		v.declareID(p, id)
	}
}

func requires(v *validator, p string, val any, _ scope) {
	obj, ok := val.(map[string]any)
	if !ok {
		v.wrongType(p, "an object", val)
		return
	}
	for _, name := range sortedKeys(obj) {
		if obj[name] != "*" && !matches(capabilityVer, obj[name]) {
			v.wrongType(key(p, name), `"*" or a version such as "1.0"`, obj[name])
		}
	}
}

func object(sch *schema) check {
	return func(v *validator, p string, val any, s scope) {
		obj, ok := val.(map[string]any)
		if !ok {
			v.wrongType(p, "an object", val)
			return
		}
		v.properties(p, obj, sch, s)
	}
}

func arrayOf(c check) check {
	return func(v *validator, p string, val any, s scope) {
		items, ok := val.([]any)
		if !ok {
			v.wrongType(p, "an array", val)
			return
		}
		for i, item := range items {
			c(v, index(p, i), item, s)
		}
	}
}

// collection checks an array of elements or actions at position pos.
func collection(pos *position) check {
	return arrayOf(func(v *validator, p string, val any, s scope) { v.cardObject(p, val, pos, s) })
}

func selectAction(v *validator, p string, val any, s scope) {
	v.cardObject(p, val, selectActions, s)
}

// inlineAction takes the same actions as selectAction.
func inlineAction(v *validator, p string, val any, s scope) {
	v.cardObject(p, val, selectActions, s)
}

func inlines(v *validator, p string, val any, s scope) {
	arrayOf(func(v *validator, p string, val any, s scope) {
		switch val.(type) {
		case string:
		case map[string]any:
			v.cardObject(p, val, inlineObjects, s)
		default:
			v.wrongType(p, "a string or a TextRun", val)
		}
	})(v, p, val, s)
}

func choices(v *validator, p string, val any, s scope) {
	if items, ok := val.([]any); ok && len(items) == 0 {
		v.addf(p, "must hold at least one choice")
		return
	}
	arrayOf(object(choice))(v, p, val, s)
}

func backgroundImage(v *validator, p string, val any, s scope) {
	if _, ok := val.(string); ok {
		return
	}
	if _, ok := val.(map[string]any); !ok {
		v.wrongType(p, "a URL or a BackgroundImage object", val)
		return
	}
	object(backgroundImageObject)(v, p, val, s)
}

func nestedCard(v *validator, p string, val any, _ scope) {
	obj, ok := val.(map[string]any)
	if !ok {
		v.wrongType(p, "an AdaptiveCard object", val)
		return
	}
	v.card(p, obj, innerCard)
}

// toggleTarget is an id, or an object naming an id and the visibility to set.
var toggleTarget = &schema{
	typ:      "TargetElement",
	required: []string{"elementId"},
	props:    []prop{{"elementId", nonEmpty}, {"isVisible", boolean}},
}

func targetElements(v *validator, p string, val any, s scope) {
	arrayOf(func(v *validator, p string, val any, s scope) {
		switch x := val.(type) {
		case string:
			nonEmpty(v, p, x, s)
			if x != "" {
				v.targets = append(v.targets, target{p, x})
			}
		case map[string]any:
			object(toggleTarget)(v, p, x, s)
			if id, ok := x["elementId"].(string); ok && id != "" {
				v.targets = append(v.targets, target{p + ".elementId", id})
			}
		default:
			v.wrongType(p, "an element id or a TargetElement object", val)
		}
	})(v, p, val, s)
}

// teamsEntity is an entity of msteams. Teams defines the mention; others are
// left to Teams.
func teamsEntity(v *validator, p string, val any, s scope) {
	obj, ok := val.(map[string]any)
	if !ok {
		v.wrongType(p, "an object", val)
		return
	}
	t, ok := obj["type"]
	if !ok {
		v.addf(p, "entity requires \"type\"")
		return
	}
	str(v, p+".type", t, s)
	if t == "mention" {
		v.properties(p, obj, mention, s)
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
