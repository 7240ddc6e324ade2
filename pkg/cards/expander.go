package cards

// ExpandCard is ExpandCard as a method, so that Checker is also the
// app.CardExpander previewCard uses: the same templating card steps run.
func (Checker) ExpandCard(payload map[string]any, data any) (map[string]any, error) {
	return ExpandCard(payload, data)
}
