package cardflow

// Workflows and cards are both saved in numbered versions and published;
// stores keep them with one implementation through these accessors.

// VersionFields returns the organization and the fields a store owns.
func (w *Workflow) VersionFields() (org string, id *string, version *int, latest *Flag) {
	return w.OrganizationID, &w.WorkflowID, &w.WorkflowVersion, &w.Latest
}

// Touch records who changed the version and when.
func (w *Workflow) Touch(by string, now int64) { w.ModifiedBy, w.ModifiedOn = &by, now }

// PageKey is the lastKey of a list that ends with w.
func (w *Workflow) PageKey() WorkflowKey {
	return WorkflowKey{OrganizationID: w.OrganizationID, WorkflowID: w.WorkflowID, WorkflowVersion: w.WorkflowVersion}
}

// Position returns the id and version a page key points at.
func (k WorkflowKey) Position() (string, int) { return k.WorkflowID, k.WorkflowVersion }

// VersionFields returns the organization and the fields a store owns.
func (c *Card) VersionFields() (org string, id *string, version *int, latest *Flag) {
	return c.OrganizationID, &c.CardID, &c.CardVersion, &c.Latest
}

// Touch records who changed the version and when.
func (c *Card) Touch(by string, now int64) { c.ModifiedBy, c.ModifiedOn = by, now }

// PageKey is the lastKey of a list that ends with c.
func (c *Card) PageKey() CardKey {
	return CardKey{OrganizationID: c.OrganizationID, CardID: c.CardID, CardVersion: c.CardVersion}
}

// Position returns the id and version a page key points at.
func (k CardKey) Position() (string, int) { return k.CardID, k.CardVersion }
