package cards

// Checker is the card check saveCard runs (app.CardChecker): the card must
// be a valid Adaptive Card, and as it is a template, its bindings must
// parse now rather than when a card step first sends it.
type Checker struct{}

// CheckCard runs Validate, then Check.
func (Checker) CheckCard(payload map[string]any) error {
	if err := Validate(payload); err != nil {
		return err
	}
	return Check(payload)
}
