package cards

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// JavaScript's toLocaleUpperCase and toLocaleLowerCase in en-US apply
// Unicode's full case mappings, which Go's strings.ToUpper and ToLower do
// not: ß becomes SS, İ becomes i followed by a combining dot, and a final
// capital sigma becomes ς. The few runes whose full mapping differs from
// the simple one are listed here rather than linking a whole casing
// library; TestCaseMappings holds the list to Unicode's.

// upperSpecial lists, by rune, the upper-case mappings that are longer
// than one rune (Unicode's SpecialCasing.txt, unconditional entries).
var upperSpecial = []caseMapping{
	{0x00DF, "SS"},
	{0x0149, "\u02bcN"},
	{0x01F0, "J\u030c"},
	{0x0390, "\u0399\u0308\u0301"},
	{0x03B0, "\u03a5\u0308\u0301"},
	{0x0587, "\u0535\u0552"},
	{0x1E96, "H\u0331"},
	{0x1E97, "T\u0308"},
	{0x1E98, "W\u030a"},
	{0x1E99, "Y\u030a"},
	{0x1E9A, "A\u02be"},
	{0x1F50, "\u03a5\u0313"},
	{0x1F52, "\u03a5\u0313\u0300"},
	{0x1F54, "\u03a5\u0313\u0301"},
	{0x1F56, "\u03a5\u0313\u0342"},
	{0x1F80, "\u1f08\u0399"},
	{0x1F81, "\u1f09\u0399"},
	{0x1F82, "\u1f0a\u0399"},
	{0x1F83, "\u1f0b\u0399"},
	{0x1F84, "\u1f0c\u0399"},
	{0x1F85, "\u1f0d\u0399"},
	{0x1F86, "\u1f0e\u0399"},
	{0x1F87, "\u1f0f\u0399"},
	{0x1F88, "\u1f08\u0399"},
	{0x1F89, "\u1f09\u0399"},
	{0x1F8A, "\u1f0a\u0399"},
	{0x1F8B, "\u1f0b\u0399"},
	{0x1F8C, "\u1f0c\u0399"},
	{0x1F8D, "\u1f0d\u0399"},
	{0x1F8E, "\u1f0e\u0399"},
	{0x1F8F, "\u1f0f\u0399"},
	{0x1F90, "\u1f28\u0399"},
	{0x1F91, "\u1f29\u0399"},
	{0x1F92, "\u1f2a\u0399"},
	{0x1F93, "\u1f2b\u0399"},
	{0x1F94, "\u1f2c\u0399"},
	{0x1F95, "\u1f2d\u0399"},
	{0x1F96, "\u1f2e\u0399"},
	{0x1F97, "\u1f2f\u0399"},
	{0x1F98, "\u1f28\u0399"},
	{0x1F99, "\u1f29\u0399"},
	{0x1F9A, "\u1f2a\u0399"},
	{0x1F9B, "\u1f2b\u0399"},
	{0x1F9C, "\u1f2c\u0399"},
	{0x1F9D, "\u1f2d\u0399"},
	{0x1F9E, "\u1f2e\u0399"},
	{0x1F9F, "\u1f2f\u0399"},
	{0x1FA0, "\u1f68\u0399"},
	{0x1FA1, "\u1f69\u0399"},
	{0x1FA2, "\u1f6a\u0399"},
	{0x1FA3, "\u1f6b\u0399"},
	{0x1FA4, "\u1f6c\u0399"},
	{0x1FA5, "\u1f6d\u0399"},
	{0x1FA6, "\u1f6e\u0399"},
	{0x1FA7, "\u1f6f\u0399"},
	{0x1FA8, "\u1f68\u0399"},
	{0x1FA9, "\u1f69\u0399"},
	{0x1FAA, "\u1f6a\u0399"},
	{0x1FAB, "\u1f6b\u0399"},
	{0x1FAC, "\u1f6c\u0399"},
	{0x1FAD, "\u1f6d\u0399"},
	{0x1FAE, "\u1f6e\u0399"},
	{0x1FAF, "\u1f6f\u0399"},
	{0x1FB2, "\u1fba\u0399"},
	{0x1FB3, "\u0391\u0399"},
	{0x1FB4, "\u0386\u0399"},
	{0x1FB6, "\u0391\u0342"},
	{0x1FB7, "\u0391\u0342\u0399"},
	{0x1FBC, "\u0391\u0399"},
	{0x1FC2, "\u1fca\u0399"},
	{0x1FC3, "\u0397\u0399"},
	{0x1FC4, "\u0389\u0399"},
	{0x1FC6, "\u0397\u0342"},
	{0x1FC7, "\u0397\u0342\u0399"},
	{0x1FCC, "\u0397\u0399"},
	{0x1FD2, "\u0399\u0308\u0300"},
	{0x1FD3, "\u0399\u0308\u0301"},
	{0x1FD6, "\u0399\u0342"},
	{0x1FD7, "\u0399\u0308\u0342"},
	{0x1FE2, "\u03a5\u0308\u0300"},
	{0x1FE3, "\u03a5\u0308\u0301"},
	{0x1FE4, "\u03a1\u0313"},
	{0x1FE6, "\u03a5\u0342"},
	{0x1FE7, "\u03a5\u0308\u0342"},
	{0x1FF2, "\u1ffa\u0399"},
	{0x1FF3, "\u03a9\u0399"},
	{0x1FF4, "\u038f\u0399"},
	{0x1FF6, "\u03a9\u0342"},
	{0x1FF7, "\u03a9\u0342\u0399"},
	{0x1FFC, "\u03a9\u0399"},
	{0xFB00, "FF"},
	{0xFB01, "FI"},
	{0xFB02, "FL"},
	{0xFB03, "FFI"},
	{0xFB04, "FFL"},
	{0xFB05, "ST"},
	{0xFB06, "ST"},
	{0xFB13, "\u0544\u0546"},
	{0xFB14, "\u0544\u0535"},
	{0xFB15, "\u0544\u053b"},
	{0xFB16, "\u054e\u0546"},
	{0xFB17, "\u0544\u053d"},
}

type caseMapping struct {
	r  rune
	to string
}

// toUpperFull maps s to upper case with Unicode's full case mappings.
func toUpperFull(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		i, ok := slices.BinarySearchFunc(upperSpecial, r, func(m caseMapping, r rune) int { return int(m.r - r) })
		if ok {
			b.WriteString(upperSpecial[i].to)
			continue
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// toLowerFull maps s to lower case with Unicode's full case mappings: İ
// keeps its dot as U+0307, and Σ at the end of a word becomes ς.
func toLowerFull(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch {
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ' && finalSigma(s[:i], s[i+len("Σ"):]):
			b.WriteRune('ς')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma reports Unicode's Final_Sigma condition for a Σ between
// before and after: a cased letter precedes it and none follows, skipping
// case-ignorable characters on both sides.
func finalSigma(before, after string) bool {
	cased := false
	for before != "" {
		r, n := utf8.DecodeLastRuneInString(before)
		before = before[:len(before)-n]
		if !caseIgnorable(r) {
			cased = isCased(r)
			break
		}
	}
	if !cased {
		return false
	}
	for _, r := range after {
		if !caseIgnorable(r) {
			return !isCased(r)
		}
	}
	return true
}

func isCased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.In(r, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: marks, format
// characters, modifier letters and symbols, and the word-internal
// punctuation of word breaking.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', '\u00ad', '\u00b7', '\u0387', '\u055f', '\u05f4',
		'\u2018', '\u2019', '\u2024', '\u2027', '\ufe13', '\ufe52', '\ufe55', '\uff07', '\uff0e', '\uff1a':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
