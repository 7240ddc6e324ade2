package boltstore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/execrecord"
)

// An execution is stored in parts (execrecord.Split): its head in
// the executions bucket, which the lists read alone, its input and
// workflow in the starts bucket and one part per step in the steps
// bucket, each under the execution's key, a 0x00 and the part's name. A
// write puts the head and only the parts that changed, so a step writes
// its own output and log, never the steps before it. The input lives
// apart from the steps because bbolt rewrites a leaf page whole, with
// every value in it: a step's part must not share a page with a 60 KB
// input.

// partKey returns the key of part name of the execution at k.
func partKey(k []byte, name string) []byte {
	return append(append(k[:len(k):len(k)], 0), name...)
}

// partBucket returns the bucket of the part name.
func partBucket(tx *bolt.Tx, name string) *bolt.Bucket {
	if strings.HasPrefix(name, execrecord.PartStep) {
		return tx.Bucket(bExecutionSteps)
	}
	return tx.Bucket(bExecutionStarts)
}

// writeExecution writes w as the execution at k with revision, and keeps
// the index of open executions.
func writeExecution(tx *bolt.Tx, k []byte, open bool, w *execrecord.Write, revision int64) error {
	if err := indexOpen(tx.Bucket(bOpenExecutions), k, open); err != nil {
		return err
	}
	if err := tx.Bucket(bExecutionRevisions).Put(k, binary.BigEndian.AppendUint64(nil, uint64(revision))); err != nil {
		return err
	}
	for _, p := range w.Parts {
		if err := partBucket(tx, p.Name).Put(partKey(k, p.Name), p.Value); err != nil {
			return err
		}
	}
	for _, name := range w.Gone {
		if err := partBucket(tx, name).Delete(partKey(k, name)); err != nil {
			return err
		}
	}
	return tx.Bucket(bExecutions).Put(k, w.Head)
}

// indexOpen keeps k in the index of open executions while open. A put
// of what is there already is skipped: bbolt rewrites every page a put
// lands on, and an open execution's writes mostly leave it open.
func indexOpen(b *bolt.Bucket, k []byte, open bool) error {
	if !open {
		return b.Delete(k) // deleting what is not there changes nothing
	}
	if hasKey(b, k) {
		return nil
	}
	return b.Put(k, nil)
}

// hasKey reports whether b holds k, whatever its value.
func hasKey(b *bolt.Bucket, k []byte) bool {
	found, _ := b.Cursor().Seek(k)
	return bytes.Equal(found, k)
}

// readParts returns the parts of the execution at k; their values are
// valid only in tx.
func readParts(tx *bolt.Tx, k []byte) []execrecord.Part {
	// Room for the input, the workflow and a few steps without regrowing.
	parts := make([]execrecord.Part, 0, 8)
	p := partKey(k, "")
	for _, b := range [][]byte{bExecutionStarts, bExecutionSteps} {
		c := tx.Bucket(b).Cursor()
		for pk, v := c.Seek(p); pk != nil && bytes.HasPrefix(pk, p); pk, v = c.Next() {
			parts = append(parts, execrecord.Part{Name: string(pk[len(p):]), Value: v})
		}
	}
	return parts
}

// readExecution joins the head and parts of the execution at k.
func readExecution(tx *bolt.Tx, k, head []byte) (*cardflow.Execution, error) {
	parts := readParts(tx, k)
	rev := tx.Bucket(bExecutionRevisions).Get(k)
	if len(rev) != 8 {
		return nil, &cardflow.UnreadableError{Err: fmt.Errorf("boltstore: execution %s has no revision", k[len(k)-min(len(k), 26):])}
	}
	e, err := execrecord.Join(head, parts, int64(binary.BigEndian.Uint64(rev)))
	if err != nil {
		return nil, fmt.Errorf("boltstore: %w", err)
	}
	return e, nil
}

// decodeHead gives a list item: the execution's head.
func decodeHead(v []byte) (*cardflow.Execution, error) {
	e, err := execrecord.DecodeHead(v)
	if err != nil {
		return nil, fmt.Errorf("boltstore: %w", err)
	}
	return e, nil
}

// File formats, in the meta bucket: Open brings an older file up to
// fileFormat and records it.
const (
	// formatParts: executions are stored in parts (format 1 held JSON
	// object payloads).
	formatParts = 2
	fileFormat  = formatParts
)

var formatKey = []byte("format")

// formatOf returns the format of an open file; 0 for files from before
// formats were recorded.
func formatOf(tx *bolt.Tx) int {
	b := tx.Bucket(bMeta)
	if b == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(b.Get(formatKey)))
	return n
}

// Buckets of the layouts before parts: the engine's state of each
// execution beside its view, and the list summaries.
var (
	bExecutionStates    = []byte("execution_states")
	bExecutionSummaries = []byte("execution_summaries")
)

// splitParts rewrites the executions of a file from before parts into
// parts. Such a file holds, per execution, the record as the API shows it,
// with the engine's state in the states bucket, or, older still, the whole
// record with state and revision inside; payloads that are not objects
// read as cardflow.PayloadOf makes them. Open calls it in the transaction
// that records the new format, then drops the old buckets.
func splitParts(tx *bolt.Tx) error {
	executions, states, revisions := tx.Bucket(bExecutions), tx.Bucket(bExecutionStates), tx.Bucket(bExecutionRevisions)
	// Collected first: a bucket must not change while ForEach walks it.
	var keys, records [][]byte
	err := executions.ForEach(func(k, v []byte) error {
		keys, records = append(keys, bytes.Clone(k)), append(records, bytes.Clone(v))
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		e, err := execrecord.Unmarshal(records[i])
		if err != nil {
			return fmt.Errorf("boltstore: decode execution: %w", err)
		}
		if states != nil {
			if st := states.Get(k); st != nil {
				if err := json.Unmarshal(st, &e.State); err != nil {
					return fmt.Errorf("boltstore: decode execution state: %w", err)
				}
			}
		}
		if rev := revisions.Get(k); len(rev) == 8 {
			e.Revision = int64(binary.BigEndian.Uint64(rev))
		}
		w, err := execrecord.Split(e)
		if err != nil {
			return err
		}
		if err := writeExecution(tx, k, e.Open(), w, e.Revision); err != nil {
			return err
		}
	}
	return nil
}
