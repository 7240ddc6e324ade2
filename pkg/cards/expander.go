package cards

import "context"

// ExpandCard is ExpandCard as a method, so that Checker is also the
// app.CardExpander previewCard uses: the same templating card steps run.
func (Checker) ExpandCard(ctx context.Context, payload map[string]any, data any) (map[string]any, error) {
	return ExpandCard(ctx, payload, data)
}
