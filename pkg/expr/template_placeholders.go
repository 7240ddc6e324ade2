package expr

import (
	"context"
	"slices"
)

// Literals returns the template's text around its placeholders, as
// written: element i stands before placeholder i and the last one after
// them all, so there is one more than there are placeholders. With
// EvalPlaceholders it lets a caller write each value its own way, such as
// escaped for where it stands in a URL.
func (t *Template) Literals() []string { return slices.Clone(t.text) }

// EvalPlaceholders evaluates the template's placeholders in order, each as
// Program.Eval does (JSON-native values, each expression within the cost
// limit), for the caller to write between the Literals. An error names the
// placeholder's line and column, as Eval's errors do.
func (t *Template) EvalPlaceholders(ctx context.Context, v Vars) ([]any, error) {
	out := make([]any, len(t.holes))
	for i, h := range t.holes {
		val, err := h.prg.Eval(ctx, v)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, h.locate(err)
		}
		out[i] = val
	}
	return out, nil
}
