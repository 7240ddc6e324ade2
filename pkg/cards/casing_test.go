package cards

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// TestCaseMappings holds toUpperFull and toLowerFull to Unicode's full case
// mappings as golang.org/x/text implements them: every rune alone, and
// words that test the final-sigma rule.
func TestCaseMappings(t *testing.T) {
	upper, lower := cases.Upper(language.AmericanEnglish), cases.Lower(language.AmericanEnglish)
	check := func(s string) {
		t.Helper()
		if got, want := toUpperFull(s), upper.String(s); got != want {
			t.Errorf("toUpperFull(%+q) = %+q, want %+q", s, got, want)
		}
		if got, want := toLowerFull(s), lower.String(s); got != want {
			t.Errorf("toLowerFull(%+q) = %+q, want %+q", s, got, want)
		}
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if utf8.ValidRune(r) {
			check(string(r))
		}
	}
	for _, s := range []string{
		"ΟΔΟΣ", "ΟΔΟΣ ΟΔΟΣ", "ΟΔΟΣ.", "Σ", "ΑΣΑ", "ΑΣ'Α", "Α'Σ", "Α\u0301Σ", "ΑΣ\u0301", "ΑΣ\u0301Α",
		"1Σ", " Σ ", "ΑΣ1", "straße", "İstanbul", "ﬁne", "ǅemal", strings.Repeat("ΑΣ ", 10),
	} {
		check(s)
	}
}
