package httpapi

import "unicode/utf8"

// maxPersonLength bounds a person's id in a query: an e-mail address or
// UPN is at most 320 characters, as the spec's approver says.
const maxPersonLength = 320

// person reads an optional person's id (an approver filter).
func (q *query) person(name string) string {
	q.known[name] = true
	v := q.values.Get(name)
	if q.values.Has(name) && (v == "" || utf8.RuneCountInString(v) > maxPersonLength) {
		q.fail("query parameter %s must name a person in 1 to %d characters", name, maxPersonLength)
		return ""
	}
	return v
}

// optionalID reads an optional id filter, which must be an id the service
// gives out when it is given: an empty or malformed one matches nothing
// and is a mistake of the caller.
func (q *query) optionalID(name string) string {
	v := q.str(name, false)
	if q.values.Has(name) && !ulidPattern.MatchString(v) {
		q.fail("query parameter %s must be an id (26 characters, 0-9 and A-Z), got %q", name, v)
		return ""
	}
	return v
}
