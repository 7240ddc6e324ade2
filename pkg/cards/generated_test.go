package cards

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Generated bindings for the differential test: random expressions over
// the functions and operators of this package, always the same ones, each
// expanded as a whole value, inside text and as a $when.

var generatedData = json.RawMessage(`{
	"n": 7, "f": 2.5, "neg": -3, "zero": 0, "s": "Hello", "e": "", "num": "42", "t": true, "no": false, "z": null,
	"list": [3, 1, 2], "words": ["b", "a", "c"], "o": {"k": "v", "n": 1}, "ts": "2026-03-05T14:07:09.500Z",
	"people": [{"age": 30, "name": "Ann"}, {"age": 12, "name": "Ben"}]
}`)

// The keys of generatedData's objects are in sorted order, the order in
// which Expand writes objects into strings (docs/DECISIONS.md).

var (
	genAtoms = []string{
		"n", "f", "neg", "zero", "s", "e", "num", "t", "no", "z", "list", "words", "o", "ts", "people", "missing",
		"o.k", "o.missing", "list[0]", "people[1].name", "$root.s", "1", "2.5", "0", "-1", "'a'", "''", "'Hello'",
		"true", "false", "null", "[1, 2]", "'2026-01-31T00:00:00.000Z'", "'yyyy-MM-dd'",
		// Inside the repetition of people (every fourth case).
		"name", "age", "$index", "$data", "$data.name", "$root.people[0].age",
	}
	genFunctions = map[string]int{ // name: number of arguments
		"add": 2, "sub": 2, "mul": 2, "div": 2, "mod": 2, "exp": 2, "min": 2, "max": 2, "round": 1, "floor": 1,
		"ceiling": 1, "abs": 1, "sqrt": 1, "sum": 1, "average": 1, "equals": 2, "greater": 2,
		"greaterOrEquals": 2, "less": 2, "lessOrEquals": 2, "and": 2, "or": 2, "not": 1, "if": 3, "coalesce": 2,
		"exists": 1, "empty": 1, "bool": 1, "concat": 2, "length": 1, "toUpper": 1, "toLower": 1, "trim": 1,
		"substring": 3, "replace": 3, "split": 2, "join": 2, "startsWith": 2, "endsWith": 2, "indexOf": 2,
		"lastIndexOf": 2, "contains": 2, "count": 1, "first": 1, "last": 1, "createArray": 2, "string": 1,
		"int": 1, "float": 1, "formatNumber": 2, "formatDateTime": 2, "addDays": 2, "addHours": 2, "dayOfWeek": 1,
		"month": 1, "year": 1,
	}
	genOperators = []string{"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "&", "??"}
)

// genPieces make up the strings of generatedTexts: bits of bindings,
// quotes, escapes and backticks, to test where a binding starts and ends.
var genPieces = []string{
	"${", "}", "{", "$", "s", "n", " ", "'", "\"", "`", "\\", "\\$", "\\`", "'a}'", "\"}\"", "(", ")", "+", "1", ".",
	"{a: 1}", "${s}", "${n}", "\n", "\u00e9", "x",
}

// generatedTexts returns n cases of random template strings.
func generatedTexts(n int) []templatingCase {
	rng := rand.New(rand.NewPCG(5, 3))
	out := make([]templatingCase, n)
	for i := range out {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			b.WriteString(genPieces[rng.IntN(len(genPieces))])
		}
		tmpl, _ := json.Marshal(map[string]any{"v": b.String()})
		out[i] = templatingCase{Name: fmt.Sprintf("generated text %d: %q", i, b.String()), Template: tmpl, Data: generatedData}
	}
	return out
}

// genFormatPieces make up the date formats of generatedFormats: .NET
// specifiers, quoting and escapes, and letters that day.js reads itself.
var genFormatPieces = []string{
	"d", "dd", "ddd", "dddd", "M", "MM", "MMM", "MMMM", "y", "yy", "yyyy", "H", "HH", "h", "hh", "m", "mm", "s", "ss",
	"f", "fff", "FFF", "t", "tt", "K", "z", "zzz", "g", "%", "'at'", "`x`", "\\d", ":", "/", "-", " ", ".", "T",
	"Y", "D", "A", "a", "S", "Z", "[", "]", "o", "'", "R", "u",
}

// generatedFormats returns n cases of formatDateTime with random formats,
// and of formatNumber and string with random numbers.
func generatedFormats(n int) []templatingCase {
	rng := rand.New(rand.NewPCG(4, 2))
	stamps := []string{"2026-03-05T14:07:09.500Z", "2026-12-31T00:00:00Z", "1999-01-01T23:59:59.999+02:00", "2026-07-04"}
	numbers := []string{"0", "1", "-1", "0.5", "1.005", "2.5", "-2.5", "1234567.891", "0.000001", "1e21", "123456789012345680000", "-0.0001", "999.999", "0.1 + 0.2"}
	out := make([]templatingCase, n)
	for i := range out {
		var f strings.Builder
		for range 1 + rng.IntN(6) {
			f.WriteString(genFormatPieces[rng.IntN(len(genFormatPieces))])
		}
		format, _ := json.Marshal(f.String())
		num := numbers[rng.IntN(len(numbers))]
		tmpl, _ := json.Marshal(map[string]any{
			"date":   "${formatDateTime('" + stamps[rng.IntN(len(stamps))] + "', " + strings.ReplaceAll(string(format), "'", "\\'") + ")}",
			"number": fmt.Sprintf("${formatNumber(%s, %d)}", num, rng.IntN(6)),
			"string": "${string(" + num + ")}",
		})
		out[i] = templatingCase{Name: fmt.Sprintf("generated format %d: %s", i, tmpl), Template: tmpl, Data: generatedData}
	}
	return out
}

// generatedCases returns n cases of random bindings from a fixed seed.
func generatedCases(n int) []templatingCase {
	rng := rand.New(rand.NewPCG(7, 11))
	names := make([]string, 0, len(genFunctions))
	for name := range genFunctions {
		names = append(names, name)
	}
	// Map order is random: sort for the same cases every run.
	slices.Sort(names)
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth > 2 {
			return genAtoms[rng.IntN(len(genAtoms))]
		}
		switch rng.IntN(5) {
		case 0:
			return genAtoms[rng.IntN(len(genAtoms))]
		case 1:
			op := genOperators[rng.IntN(len(genOperators))]
			return gen(depth+1) + " " + op + " " + gen(depth+1)
		case 2:
			return "!" + gen(depth+1)
		default:
			name := names[rng.IntN(len(names))]
			args := make([]string, genFunctions[name])
			for i := range args {
				args[i] = gen(depth + 1)
			}
			return name + "(" + strings.Join(args, ", ") + ")"
		}
	}
	out := make([]templatingCase, n)
	for i := range out {
		e := gen(0)
		tmpl := map[string]any{
			"whole": "${" + e + "}",
			"text":  "<${" + e + "}>",
			"when":  map[string]any{"$when": "${" + e + "}", "kept": true},
		}
		if i%4 == 3 {
			tmpl = map[string]any{"rows": []any{
				map[string]any{"$data": "${people}", "$when": "${" + gen(1) + "}", "whole": "${" + e + "}", "text": "<${" + e + "}>"},
			}}
		}
		b, _ := json.Marshal(tmpl)
		out[i] = templatingCase{Name: fmt.Sprintf("generated %d: %s", i, e), Template: b, Data: generatedData}
	}
	return out
}
