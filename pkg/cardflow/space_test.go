package cardflow

import "testing"

func TestTrimSpecSpace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{" \t\n\r\v\f", ""},
		{"\u00a0\u2003\u3000\ufeff\u2028\u2029", ""},
		{" Leave request ", "Leave request"},
		// Go counts U+0085 as a space; ECMAScript's \s does not.
		{"\u0085", "\u0085"},
		{" \u0085 ", "\u0085"},
	} {
		if got := TrimSpecSpace(tc.in); got != tc.want {
			t.Errorf("TrimSpecSpace(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}
