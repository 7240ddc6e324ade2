package boltstore

import (
	"bytes"
	"encoding/binary"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Buckets. Keys of organization records start with the organization, so a
// lookup can only reach the caller's records: one of another organization is
// simply absent. Key parts are terminated by 0x00 (ids may not contain it) and
// versions are 8-byte big-endian, so byte order is id order, then version
// order, and every list is a backwards cursor walk over one key range.
var (
	bWorkflows     = []byte("workflows")      // org 0 workflow_id 0 version -> Workflow
	bCards         = []byte("cards")          // org 0 card_id 0 version -> Card
	bExecutions    = []byte("executions")     // org 0 workflow_id 0 execution_id -> the execution's head
	bOrgExecutions = []byte("org_executions") // org 0 execution_id -> workflow_id
	bSchemas       = []byte("schemas")        // org 0 workflow_id 0 version -> Schema record
	bAPIKeys       = []byte("apikeys")        // hash -> APIKey
	bAPIKeyIDs     = []byte("apikey_ids")     // key_id -> hash
	bOrgAPIKeys    = []byte("org_apikeys")    // org 0 key_id -> hash

	bOpenExecutions     = []byte("open_executions")     // org 0 workflow_id 0 execution_id -> "", RUNNING or WAITING only
	bExecutionRevisions = []byte("execution_revisions") // org 0 workflow_id 0 execution_id -> 8-byte revision
	bExecutionStarts    = []byte("execution_starts")    // org 0 workflow_id 0 execution_id 0 "input" or "workflow" -> part
	bExecutionSteps     = []byte("execution_steps")     // org 0 workflow_id 0 execution_id 0 "step/" step_id -> part
	bProcesses          = []byte("processes")           // org 0 process_id -> Process
	bIdempotency        = []byte("idempotency")         // org 0 key -> Idempotency
	bSchedules          = []byte("schedules")           // org 0 workflow_id 0 version -> Schedule
	bDeliveries         = []byte("deliveries")          // org 0 delivery_id -> Delivery (the local outbox)
	bMeta               = []byte("meta")                // "format" -> the file's format (fileFormat), decimal
	bApprovals          = []byte("approvals")           // org 0 approval_id -> Approval
	bPendingApprovals   = []byte("pending_approvals")   // org 0 approval_id -> "", PENDING approvals only
	bApprovalStats      = []byte("approval_stats")      // org 0 workflow_id or "" 0 day -> ApprovalDayStats

	// Housekeeping indexes; the value is the record's key.
	bProcessDue     = []byte("process_due")        // kind 0 8-byte due (ms) org 0 process_id -> org 0 process_id
	bIdempotencyDue = []byte("idempotency_expiry") // 8-byte expires_at (s) org 0 key -> org 0 key

	allBuckets = [][]byte{bWorkflows, bCards, bExecutions, bOrgExecutions, bSchemas, bAPIKeys, bAPIKeyIDs, bOrgAPIKeys,
		bOpenExecutions, bExecutionRevisions, bProcesses, bIdempotency, bSchedules, bDeliveries, bProcessDue, bIdempotencyDue,
		bExecutionStarts, bExecutionSteps, bMeta, bApprovals, bPendingApprovals, bEvents, bWebhooks, bLimits,
		bExecutionSearch, bExecutionSearchOf, bBulkOperations, bBulkTokens, bRunningBulk, bConversations, bOrgConversations, bApprovalStats, bDelegations}

	// retiredBuckets were written by earlier versions and are read no more;
	// Open drops them. active_cards indexed ACTIVE card versions, when
	// getLatestActiveCard answered the highest of them; the states and
	// summaries of executions were kept beside them before parts.
	retiredBuckets = [][]byte{[]byte("active_cards"), bExecutionStates, bExecutionSummaries}
)

// validParts reports whether every part can be a key part: not empty and
// without 0x00, which would blur the boundary between parts. Writes reject
// such parts, so reads with them can match nothing and answer "not found".
func validParts(parts ...string) bool {
	for _, p := range parts {
		if p == "" || strings.IndexByte(p, 0) >= 0 {
			return false
		}
	}
	return true
}

// prefix returns the parts, each terminated by 0x00: the key range of
// everything stored under them.
func prefix(parts ...string) []byte {
	n := 8 // room for a version, so versionKey does not reallocate
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(append(b, p...), 0)
	}
	return b
}

// under returns p followed by id. The full slice expression makes append copy,
// so p stays usable as a range prefix.
func under(p []byte, id string) []byte {
	return append(p[:len(p):len(p)], id...)
}

// versionKey returns the key of one version of a workflow or card.
func versionKey(org, id string, version int) []byte {
	return binary.BigEndian.AppendUint64(prefix(org, id), uint64(version))
}

// keyVersion reads the version back from a versionKey.
func keyVersion(k []byte) int {
	return int(binary.BigEndian.Uint64(k[len(k)-8:]))
}

// walkBack calls fn on the keys of b that start with p, newest (highest)
// first, until fn returns false. A nil from starts at the end of the range;
// otherwise the walk starts just below from (the last key of the previous
// page), so from itself is skipped.
func walkBack(b *bolt.Bucket, p, from []byte, fn func(k, v []byte) bool) {
	c := b.Cursor()
	var k, v []byte
	switch {
	case from != nil:
		k, v = seekBefore(c, from)
	case len(p) == 0:
		k, v = c.Last()
	default:
		// Every prefix ends with the 0x00 terminator, so raising it to 0x01
		// gives the first key past the range.
		end := append(p[:len(p)-1:len(p)-1], 1)
		k, v = seekBefore(c, end)
	}
	for ; k != nil && bytes.HasPrefix(k, p); k, v = c.Prev() {
		if !fn(k, v) {
			return
		}
	}
}

// seekBefore moves c to the last key below limit.
func seekBefore(c *bolt.Cursor, limit []byte) ([]byte, []byte) {
	if k, _ := c.Seek(limit); k == nil {
		return c.Last()
	}
	return c.Prev()
}

// hasPrefix reports whether b holds any key starting with p.
func hasPrefix(b *bolt.Bucket, p []byte) bool {
	k, _ := b.Cursor().Seek(p)
	return k != nil && bytes.HasPrefix(k, p)
}

// splitKey splits a key made by prefix and under back into its parts.
func splitKey(k []byte) []string {
	return strings.Split(string(k), "\x00")
}
