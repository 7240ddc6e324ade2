package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Search indexes (cardflow.SearchIndex): one entry per index an execution
// has a place in, in the same transaction as its head, keyed
// index 0 org 0 values... 0 then the 8-byte created_on and the execution
// id, so one backwards walk over a prefix yields a search's order. The
// value is the workflow id, which completes the key of the head. The
// second bucket remembers, per head key, which entries the execution has,
// so a write that changes its status moves them.
var (
	bExecutionSearch   = []byte("execution_search")    // index 0 org 0 value 0 ... 8-byte created_on id -> workflow_id
	bExecutionSearchOf = []byte("execution_search_of") // org 0 workflow_id 0 execution_id -> its entries' keys, each uvarint length and key
)

// searchPrefix returns the key range of a partition of idx.
func searchPrefix(idx cardflow.SearchIndex, org string, values []string) []byte {
	return prefix(append([]string{string(idx), org}, values...)...)
}

// searchEntry returns the key of an execution's entry under p.
func searchEntry(p []byte, created int64, id string) []byte {
	return append(binary.BigEndian.AppendUint64(p[:len(p):len(p)], uint64(created)), id...)
}

// searchEntries returns the keys of e's entries, encoded as the second
// bucket keeps them.
func searchEntries(e *cardflow.Execution) []byte {
	var out []byte
	for _, idx := range cardflow.SearchIndexes {
		values, ok := cardflow.SearchValues(e, idx)
		if !ok || !validParts(values...) {
			continue
		}
		k := searchEntry(searchPrefix(idx, e.OrganizationID, values), e.CreatedOn, e.WorkflowExecutionID)
		out = append(binary.AppendUvarint(out, uint64(len(k))), k...)
	}
	return out
}

// indexSearch keeps the search entries of the execution at k, of
// workflowID, as want (searchEntries of the execution); a write that
// changes none of what they hold changes nothing, and one that changes the
// status moves only the entries that hold it.
func indexSearch(tx *bolt.Tx, k []byte, workflowID string, want []byte) error {
	of, entries := tx.Bucket(bExecutionSearchOf), tx.Bucket(bExecutionSearch)
	had := of.Get(k)
	if bytes.Equal(had, want) {
		return nil
	}
	hadKeys, err := entryKeys(had)
	if err != nil {
		return fmt.Errorf("boltstore: search entries of %q do not decode", k)
	}
	wantKeys, _ := entryKeys(want) // encoded just now
	for _, hk := range hadKeys {
		if !slices.ContainsFunc(wantKeys, func(wk []byte) bool { return bytes.Equal(wk, hk) }) {
			if err := entries.Delete(hk); err != nil {
				return err
			}
		}
	}
	for _, wk := range wantKeys {
		if !slices.ContainsFunc(hadKeys, func(hk []byte) bool { return bytes.Equal(hk, wk) }) {
			if err := entries.Put(wk, []byte(workflowID)); err != nil {
				return err
			}
		}
	}
	return of.Put(k, want)
}

// entryKeys splits entries as searchEntries encodes them.
func entryKeys(entries []byte) ([][]byte, error) {
	keys := make([][]byte, 0, len(cardflow.SearchIndexes))
	for rest := entries; len(rest) > 0; {
		n, size := binary.Uvarint(rest)
		if size <= 0 || n > uint64(len(rest)-size) {
			return nil, errors.New("search entries do not decode")
		}
		keys = append(keys, rest[size:size+int(n)])
		rest = rest[size+int(n):]
	}
	return keys, nil
}

// buildSearchIndex indexes every stored execution: Open calls it on a file
// written before search existed, in the transaction that makes the
// buckets.
func buildSearchIndex(tx *bolt.Tx) error {
	heads := tx.Bucket(bExecutions)
	var keys, values [][]byte
	err := heads.ForEach(func(k, v []byte) error {
		keys, values = append(keys, bytes.Clone(k)), append(values, bytes.Clone(v))
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		e, err := decodeHead(values[i])
		if err != nil {
			// An unreadable head stays out of searches, as it stays
			// out of nothing else: the lists show it as they can.
			continue
		}
		if err := indexSearch(tx, k, e.WorkflowID, searchEntries(e)); err != nil {
			return err
		}
	}
	return nil
}

// SearchExecutions walks the partition of the index f selects, backwards
// from the page key or the end of the time range, and keeps the heads f
// matches until the page is full: local reads are cheap, so pages are
// always full.
func (s *Store) SearchExecutions(_ context.Context, org string, f cardflow.ExecutionFilter, opt cardflow.ListOptions[cardflow.SearchKey]) (cardflow.Page[*cardflow.Execution, cardflow.SearchKey], error) {
	page := cardflow.Page[*cardflow.Execution, cardflow.SearchKey]{Items: []*cardflow.Execution{}}
	idx, _ := f.Index()
	values := f.FilterValues(idx)
	if !validParts(org) || !validParts(values...) {
		return page, nil
	}
	limit := cardflow.PageSize(opt.Limit)
	p := searchPrefix(idx, org, values)
	var from []byte
	if f.CreatedBefore > 0 {
		from = binary.BigEndian.AppendUint64(p[:len(p):len(p)], uint64(f.CreatedBefore))
	}
	if a := opt.After; a != nil {
		if k := searchEntry(p, a.CreatedOn, a.WorkflowExecutionID); from == nil || bytes.Compare(k, from) < 0 {
			from = k
		}
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		heads := tx.Bucket(bExecutions)
		var err error
		walkBack(tx.Bucket(bExecutionSearch), p, from, func(k, v []byte) bool {
			if len(k) < len(p)+8 || int64(binary.BigEndian.Uint64(k[len(p):])) < f.CreatedAfter {
				return false
			}
			id := string(k[len(p)+8:])
			head := heads.Get(under(prefix(org, string(v)), id))
			if head == nil {
				return true
			}
			var e *cardflow.Execution
			if e, err = decodeHead(head); err != nil {
				return false
			}
			if !f.Matches(e) {
				return true
			}
			if len(page.Items) == limit {
				last := cardflow.SearchKeyOf(page.Items[limit-1])
				page.LastKey = &last
				return false
			}
			page.Items = append(page.Items, e)
			return true
		})
		return err
	})
	return page, err
}
