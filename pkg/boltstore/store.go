// Package boltstore is the embedded single-file cardflow.Store used in local
// mode: one bbolt file holds every record, as JSON.
package boltstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/execrecord"
)

// Store is a cardflow.Store on one bbolt file; its methods follow the port's
// doc comments. It is safe for concurrent use: bbolt runs one write
// transaction at a time, which is what keeps version numbers unique.
type Store struct {
	db  *bolt.DB
	log *slog.Logger
	// commits groups the writes that run often (executions, processes,
	// schemas, deliveries) into shared commits.
	commits *committer
	keys    keyCache
}

var _ cardflow.Store = (*Store)(nil)

// Option configures Open.
type Option func(*options)

type options struct {
	lockTimeout time.Duration
	log         *slog.Logger
}

// WithLockTimeout sets how long Open waits for another process to release
// the store file (default 1s). Zero waits indefinitely, as in bbolt.
func WithLockTimeout(d time.Duration) Option {
	return func(o *options) { o.lockTimeout = d }
}

// WithLogger sets where the store logs the records housekeeping skips
// because they cannot be read (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// Open opens the store file at path, creating it and its directory if needed.
// Only one process can hold the file; while another does, Open fails with an
// UNAVAILABLE *cardflow.Error after the lock timeout instead of hanging.
func Open(path string, opts ...Option) (*Store, error) {
	o := options{lockTimeout: time.Second, log: slog.Default()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		return nil, errors.New("boltstore: logger is nil")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("boltstore: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: o.lockTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, cardflow.Errorf(cardflow.EUNAVAILABLE,
			"store file %s is in use by another process: stop that process or use another data directory", path)
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		// A file written before the housekeeping indexes existed gets them
		// built from its records.
		reindex := tx.Bucket(bProcesses) != nil && tx.Bucket(bProcessDue) == nil
		// A file from before executions were kept in parts (format 2) is
		// rewritten into parts.
		split := tx.Bucket(bExecutions) != nil && formatOf(tx) < formatParts
		// A file from before searches gets its executions indexed.
		search := tx.Bucket(bExecutions) != nil && tx.Bucket(bExecutionSearchOf) == nil
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		if reindex {
			if err := buildHousekeepingIndexes(tx); err != nil {
				return err
			}
		}
		if split {
			if err := splitParts(tx); err != nil {
				return err
			}
		}
		if search {
			if err := buildSearchIndex(tx); err != nil {
				return err
			}
		}
		for _, name := range retiredBuckets {
			if err := tx.DeleteBucket(name); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
				return err
			}
		}
		return tx.Bucket(bMeta).Put(formatKey, []byte(strconv.Itoa(fileFormat)))
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("boltstore: create buckets in %s: %w", path, err)
	}
	return &Store{db: db, log: o.log, commits: newCommitter(db), keys: keyCache{byHash: map[string]*cardflow.APIKey{}}}, nil
}

// Close releases the file; closing twice is not an error.
func (s *Store) Close() error {
	s.commits.close()
	return s.db.Close()
}

// decode unmarshals a stored value. json.Unmarshal copies what it keeps, so
// the result outlives the transaction that owns v.
func decode[T any](v []byte) (*T, error) {
	t := new(T)
	if err := json.Unmarshal(v, t); err != nil {
		return nil, &cardflow.UnreadableError{Err: fmt.Errorf("boltstore: decode %T: %w", t, err)}
	}
	return t, nil
}

// getJSON decodes the value at k in a read-only transaction, or returns
// missing() when there is none. A nil k, for parts that cannot form a key,
// finds nothing.
func getJSON[T any](db *bolt.DB, bucket, k []byte, missing func() error) (*T, error) {
	var rec *T
	err := db.View(func(tx *bolt.Tx) error {
		var v []byte
		if k != nil {
			v = tx.Bucket(bucket).Get(k)
		}
		if v == nil {
			return missing()
		}
		var err error
		rec, err = decode[T](v)
		return err
	})
	return rec, err
}

func put(b *bolt.Bucket, k []byte, rec any) error {
	v, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return b.Put(k, v)
}

// readPage fills one page from a walkBack over bucket. It stops at the first
// key past the page: that key's existence is all LastKey needs, so it is
// never decoded.
func readPage[T, K any](tx *bolt.Tx, bucket, p, from []byte, limit int,
	load func(k, v []byte) (*T, error), keyOf func(*T) K) (cardflow.Page[*T, K], error) {
	limit = cardflow.PageSize(limit)
	page := cardflow.Page[*T, K]{Items: make([]*T, 0, limit)}
	var err error
	walkBack(tx.Bucket(bucket), p, from, func(k, v []byte) bool {
		if len(page.Items) == limit {
			last := keyOf(page.Items[limit-1])
			page.LastKey = &last
			return false
		}
		var item *T
		if item, err = load(k, v); err != nil {
			return false
		}
		page.Items = append(page.Items, item)
		return true
	})
	return page, err
}

// decodeValue is a readPage loader for buckets that hold the records.
func decodeValue[T any](_, v []byte) (*T, error) { return decode[T](v) }

func (s *Store) SaveWorkflowVersion(_ context.Context, w *cardflow.Workflow) error {
	return workflows.save(s.db, w)
}

func (s *Store) GetWorkflow(_ context.Context, org, workflowID string, version int) (*cardflow.Workflow, error) {
	return workflows.get(s.db, org, workflowID, version)
}

func (s *Store) GetLatestWorkflow(_ context.Context, org, workflowID string) (*cardflow.Workflow, error) {
	return workflows.latest(s.db, org, workflowID)
}

func (s *Store) ListWorkflows(_ context.Context, org string, opt cardflow.ListOptions[cardflow.WorkflowKey]) (cardflow.Page[*cardflow.Workflow, cardflow.WorkflowKey], error) {
	return workflows.list(s.db, org, opt)
}

func (s *Store) PublishWorkflow(_ context.Context, org, workflowID string, version int, by string, now int64) (*cardflow.Workflow, error) {
	return workflows.publish(s.db, org, workflowID, version, by, now)
}

func (s *Store) SaveCardVersion(_ context.Context, c *cardflow.Card) error {
	return cards.save(s.db, c)
}

func (s *Store) GetCard(_ context.Context, org, cardID string, version int) (*cardflow.Card, error) {
	return cards.get(s.db, org, cardID, version)
}

func (s *Store) ListCards(_ context.Context, org string, opt cardflow.ListOptions[cardflow.CardKey]) (cardflow.Page[*cardflow.Card, cardflow.CardKey], error) {
	return cards.list(s.db, org, opt)
}

func (s *Store) PublishCard(_ context.Context, org, cardID string, version int, by string, now int64) (*cardflow.Card, error) {
	return cards.publish(s.db, org, cardID, version, by, now)
}

func (s *Store) GetLatestActiveCard(_ context.Context, org, cardID string) (*cardflow.Card, error) {
	c, err := cards.latest(s.db, org, cardID)
	if err != nil {
		return nil, err
	}
	if c.Status != cardflow.StatusActive {
		return nil, cardflow.Errorf(cardflow.ENOTFOUND, "card %s has no active version: publish one first", cardID)
	}
	return c, nil
}

func (s *Store) CreateExecution(_ context.Context, e *cardflow.Execution) error {
	if !validParts(e.OrganizationID, e.WorkflowID, e.WorkflowExecutionID) {
		return cardflow.Errorf(cardflow.EINVALID, "an execution needs an organization, a workflow id and an execution id")
	}
	ew, err := encodeExecution(e)
	if err != nil {
		return err
	}
	if err := s.commits.write(func(tx *bolt.Tx) error { return createExecution(tx, ew) }); err != nil {
		return err
	}
	e.Revision = 1
	execrecord.Wrote(e, ew.w)
	return nil
}

// executionWrite is an execution's change encoded before it enters the
// committer, whose one transaction at a time then only checks and puts
// bytes: the JSON of the head, parts and events and the search entries
// are made by the writer's goroutine, in parallel with the others.
type executionWrite struct {
	org, workflowID, id string
	// processID names the process record a write that ends the
	// execution closes (cardflow.Store's PutExecution); expires is when it
	// may go.
	processID string
	expires   int64
	// k is the key of the head.
	k        []byte
	open     bool
	revision int64
	w        *execrecord.Write
	// search is what indexSearch keeps: searchEntries of the execution.
	search []byte
	events []encodedEvent
}

// encodeExecution splits and encodes e for a write of revision
// e.Revision+1 (1 for a new execution, whose Revision is 0).
func encodeExecution(e *cardflow.Execution) (*executionWrite, error) {
	w, err := execrecord.Split(e)
	if err != nil {
		return nil, err
	}
	events, err := encodeEvents(w.Events)
	if err != nil {
		return nil, err
	}
	return &executionWrite{
		org: e.OrganizationID, workflowID: e.WorkflowID, id: e.WorkflowExecutionID,
		processID: e.State.ProcessID, expires: e.ModifiedOn/1000 + int64(cardflow.ClosedProcessTTL/time.Second),
		k:    under(prefix(e.OrganizationID, e.WorkflowID), e.WorkflowExecutionID),
		open: e.Open(), revision: e.Revision + 1, w: w, search: searchEntries(e), events: events,
	}, nil
}

// createExecution stores a new execution with revision 1 and indexes it.
// Like every function given to the committer it leaves its arguments
// alone, since it may run more than once.
func createExecution(tx *bolt.Tx, ew *executionWrite) error {
	idx := tx.Bucket(bOrgExecutions)
	ik := under(prefix(ew.org), ew.id)
	if idx.Get(ik) != nil {
		return cardflow.Errorf(cardflow.ECONFLICT, "execution %s already exists", ew.id)
	}
	if err := idx.Put(ik, []byte(ew.workflowID)); err != nil {
		return err
	}
	return storeExecution(tx, ew, 1)
}

// storeExecution writes the execution with its events and search entries.
func storeExecution(tx *bolt.Tx, ew *executionWrite, revision int64) error {
	if err := putEvents(tx, ew.events); err != nil {
		return err
	}
	if err := indexSearch(tx, ew.k, ew.workflowID, ew.search); err != nil {
		return err
	}
	return writeExecution(tx, ew.k, ew.open, ew.w, revision)
}

// PutExecution runs in the committer: executions advance one step per
// write, and grouping lets concurrent executions share one disk sync. The revision
// check reads the revisions bucket, not the record.
func (s *Store) PutExecution(ctx context.Context, e *cardflow.Execution) error {
	if !validParts(e.OrganizationID, e.WorkflowID, e.WorkflowExecutionID) {
		return executionNotFound(e.WorkflowExecutionID)
	}
	ew, err := encodeExecution(e)
	if err != nil {
		return err
	}
	maxOpen := cardflow.OpenExecutionLimit(ctx)
	err = s.commits.write(func(tx *bolt.Tx) error {
		rev := tx.Bucket(bExecutionRevisions).Get(ew.k)
		if rev == nil {
			return refuse(executionNotFound(ew.id))
		}
		if got := int64(binary.BigEndian.Uint64(rev)); got != ew.revision-1 {
			return refuse(cardflow.Errorf(cardflow.ECONFLICT, "execution %s changed meanwhile (revision %d, not %d)", ew.id, got, ew.revision-1))
		}
		wasOpen := hasKey(tx.Bucket(bOpenExecutions), ew.k)
		if !ew.open && wasOpen {
			if err := closeProcess(tx, ew); err != nil {
				return err
			}
		}
		// An ended execution opened again (a redrive) takes a place as a
		// start does, under the cap ctx carries.
		if ew.open && !wasOpen {
			if err := checkOpenLimit(tx, ew.org, maxOpen); err != nil {
				return refuse(err)
			}
		}
		return storeExecution(tx, ew, ew.revision)
	})
	if err == nil {
		e.Revision++
		execrecord.Wrote(e, ew.w)
	}
	return err
}

// closeProcess closes the process record of the execution ew ends, as
// cardflow.CloseProcess does: it leaves alone a record that another
// execution took over, or that is closed already.
func closeProcess(tx *bolt.Tx, ew *executionWrite) error {
	if !validParts(ew.processID) {
		return nil
	}
	b := tx.Bucket(bProcesses)
	k := under(prefix(ew.org), ew.processID)
	v := b.Get(k)
	if v == nil {
		return nil
	}
	old, err := decode[cardflow.Process](v)
	if err != nil {
		// Left as it is, as cardflow.FailUnreadable leaves it: an
		// execution is not kept from ending by a record it cannot read.
		return nil
	}
	if old.ExecutionID != ew.id || old.Closed {
		return nil
	}
	rec := *old
	rec.Closed, rec.ExpiresAt = true, ew.expires
	rec.Revision++
	if err := indexProcess(tx, old, &rec); err != nil {
		return err
	}
	return put(b, k, &rec)
}

func executionNotFound(id string) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "execution %s not found", id)
}

// viewExecution calls fn with the key and head of an execution in a read
// transaction, or gives NOT_FOUND.
func (s *Store) viewExecution(org, workflowID, executionID string, fn func(tx *bolt.Tx, k, head []byte) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		var k, v []byte
		if validParts(org, workflowID, executionID) {
			k = under(prefix(org, workflowID), executionID)
			v = tx.Bucket(bExecutions).Get(k)
		}
		if v == nil {
			return executionNotFound(executionID)
		}
		return fn(tx, k, v)
	})
}

func (s *Store) GetExecution(_ context.Context, org, workflowID, executionID string) (*cardflow.Execution, error) {
	var e *cardflow.Execution
	err := s.viewExecution(org, workflowID, executionID, func(tx *bolt.Tx, k, v []byte) error {
		var err error
		e, err = readExecution(tx, k, v)
		return err
	})
	return e, err
}

// GetExecutionJSON encodes the execution as the API shows it, copying its
// input, logs and steps from the parts without decoding them.
func (s *Store) GetExecutionJSON(_ context.Context, org, workflowID, executionID string) ([]byte, error) {
	var out []byte
	err := s.viewExecution(org, workflowID, executionID, func(tx *bolt.Tx, k, v []byte) error {
		var err error
		out, err = execrecord.JSON(v, readParts(tx, k))
		return err
	})
	return out, err
}

// GetExecutionHead decodes the head and checks the parts
// (execrecord.CheckedHead).
func (s *Store) GetExecutionHead(_ context.Context, org, workflowID, executionID string) (*cardflow.Execution, error) {
	var e *cardflow.Execution
	err := s.viewExecution(org, workflowID, executionID, func(tx *bolt.Tx, k, v []byte) error {
		var err error
		if e, err = execrecord.CheckedHead(v, readParts(tx, k)); err != nil {
			return fmt.Errorf("boltstore: %w", err)
		}
		return nil
	})
	return e, err
}

// GetExecutionRevision reads the revision alone, which every write of the
// execution sets (writeExecution).
func (s *Store) GetExecutionRevision(_ context.Context, org, workflowID, executionID string) (int64, error) {
	var rev int64
	err := s.db.View(func(tx *bolt.Tx) error {
		var v []byte
		if validParts(org, workflowID, executionID) {
			v = tx.Bucket(bExecutionRevisions).Get(under(prefix(org, workflowID), executionID))
		}
		if len(v) != 8 {
			return executionNotFound(executionID)
		}
		rev = int64(binary.BigEndian.Uint64(v))
		return nil
	})
	return rev, err
}

// GetExecutionStatus reads the status and modified_on from the head alone.
func (s *Store) GetExecutionStatus(_ context.Context, org, workflowID, executionID string) (status string, modifiedOn int64, err error) {
	err = s.viewExecution(org, workflowID, executionID, func(_ *bolt.Tx, _, v []byte) error {
		var err error
		if status, modifiedOn, err = execrecord.HeadStatus(v); err != nil {
			return fmt.Errorf("boltstore: %w", err)
		}
		return nil
	})
	return status, modifiedOn, err
}

func executionKey(e *cardflow.Execution) cardflow.ExecutionKey {
	return cardflow.ExecutionKey{WorkflowID: e.WorkflowID, WorkflowExecutionID: e.WorkflowExecutionID}
}

// ListWorkflowExecutions walks the workflow's range of the heads;
// the page key's workflow_id is ignored, the range already fixes it.
func (s *Store) ListWorkflowExecutions(_ context.Context, org, workflowID string, opt cardflow.ListOptions[cardflow.ExecutionKey]) (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error) {
	var page cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey]
	err := s.db.View(func(tx *bolt.Tx) error {
		p := prefix(org, workflowID)
		if !validParts(org, workflowID) || !hasPrefix(tx.Bucket(bWorkflows), p) {
			return cardflow.Errorf(cardflow.ENOTFOUND, "workflow %s not found", workflowID)
		}
		var from []byte
		if opt.After != nil {
			from = under(p, opt.After.WorkflowExecutionID)
		}
		var err error
		page, err = readPage(tx, bExecutions, p, from, opt.Limit, func(_, v []byte) (*cardflow.Execution, error) { return decodeHead(v) }, executionKey)
		return err
	})
	return page, err
}

// ListExecutions walks the organization's index by execution id; each entry
// names the workflow, which completes the key of the execution's head.
func (s *Store) ListExecutions(_ context.Context, org string, opt cardflow.ListOptions[cardflow.ExecutionKey]) (cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey], error) {
	page := cardflow.Page[*cardflow.Execution, cardflow.ExecutionKey]{Items: []*cardflow.Execution{}}
	if !validParts(org) {
		return page, nil
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		p := prefix(org)
		var from []byte
		if opt.After != nil {
			from = under(p, opt.After.WorkflowExecutionID)
		}
		heads := tx.Bucket(bExecutions)
		load := func(k, workflowID []byte) (*cardflow.Execution, error) {
			return decodeHead(heads.Get(under(prefix(org, string(workflowID)), string(k[len(p):]))))
		}
		var err error
		page, err = readPage(tx, bOrgExecutions, p, from, opt.Limit, load, executionKey)
		return err
	})
	return page, err
}

func (s *Store) PutSchema(_ context.Context, sc *cardflow.Schema) error {
	if !validParts(sc.OrganizationID, sc.WorkflowID) || sc.WorkflowVersion < 1 {
		return cardflow.Errorf(cardflow.EINVALID, "a schema needs an organization, a workflow id and a version")
	}
	v, err := sc.MarshalRecord()
	if err != nil {
		return err
	}
	// Every trigger writes its version's schema sample: batch it.
	return s.commits.write(func(tx *bolt.Tx) error {
		return tx.Bucket(bSchemas).Put(versionKey(sc.OrganizationID, sc.WorkflowID, sc.WorkflowVersion), v)
	})
}

func (s *Store) GetSchema(_ context.Context, org, workflowID string, version int) (*cardflow.Schema, error) {
	var sc *cardflow.Schema
	err := s.db.View(func(tx *bolt.Tx) error {
		var v []byte
		if validParts(org, workflowID) {
			v = tx.Bucket(bSchemas).Get(versionKey(org, workflowID, version))
		}
		if v == nil {
			return cardflow.Errorf(cardflow.ENOTFOUND, "schema of workflow %s version %d not found", workflowID, version)
		}
		sc = new(cardflow.Schema)
		return sc.UnmarshalRecord(v)
	})
	return sc, err
}

func (s *Store) CreateAPIKey(_ context.Context, k *cardflow.APIKey) error {
	if !validParts(k.Hash, k.KeyID, k.OrganizationID) {
		return cardflow.Errorf(cardflow.EINVALID, "an API key needs a hash, a key id and an organization")
	}
	v, err := json.Marshal(k)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		byHash, byID := tx.Bucket(bAPIKeys), tx.Bucket(bAPIKeyIDs)
		if byHash.Get([]byte(k.Hash)) != nil || byID.Get([]byte(k.KeyID)) != nil {
			return cardflow.Errorf(cardflow.ECONFLICT, "an API key with this hash or key id already exists")
		}
		if err := byHash.Put([]byte(k.Hash), v); err != nil {
			return err
		}
		if err := byID.Put([]byte(k.KeyID), []byte(k.Hash)); err != nil {
			return err
		}
		return tx.Bucket(bOrgAPIKeys).Put(under(prefix(k.OrganizationID), k.KeyID), []byte(k.Hash))
	})
}

// GetAPIKeyByHash answers from the key cache when it can: every request
// reads its key.
func (s *Store) GetAPIKeyByHash(_ context.Context, hash string) (*cardflow.APIKey, error) {
	if k, ok := s.keys.get(hash); ok {
		return k, nil
	}
	gen := s.keys.generation()
	k, err := getJSON[cardflow.APIKey](s.db, bAPIKeys, []byte(hash), func() error {
		return cardflow.Errorf(cardflow.ENOTFOUND, "API key not found")
	})
	if err == nil {
		s.keys.put(hash, k, gen)
	}
	return k, err
}

// ListAPIKeys walks an index by key id (of one organization, or of all), so
// keys come in descending key id order.
func (s *Store) ListAPIKeys(_ context.Context, org string) ([]*cardflow.APIKey, error) {
	keys := []*cardflow.APIKey{}
	index, p := bAPIKeyIDs, []byte(nil)
	if org != "" {
		if !validParts(org) {
			return keys, nil
		}
		index, p = bOrgAPIKeys, prefix(org)
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		byHash := tx.Bucket(bAPIKeys)
		var err error
		walkBack(tx.Bucket(index), p, nil, func(_, hash []byte) bool {
			var k *cardflow.APIKey
			if k, err = decode[cardflow.APIKey](byHash.Get(hash)); err != nil {
				return false
			}
			keys = append(keys, k)
			return true
		})
		return err
	})
	return keys, err
}

// RevokeAPIKey keeps the first revocation time when a key is revoked again.
func (s *Store) RevokeAPIKey(_ context.Context, keyID string, now int64) (*cardflow.APIKey, error) {
	var k *cardflow.APIKey
	err := s.db.Update(func(tx *bolt.Tx) error {
		hash := tx.Bucket(bAPIKeyIDs).Get([]byte(keyID))
		if hash == nil {
			return cardflow.Errorf(cardflow.ENOTFOUND, "API key %s not found", keyID)
		}
		byHash := tx.Bucket(bAPIKeys)
		var err error
		if k, err = decode[cardflow.APIKey](byHash.Get(hash)); err != nil {
			return err
		}
		if k.RevokedOn != 0 {
			return nil
		}
		k.RevokedOn = now
		return put(byHash, hash, k)
	})
	if err == nil {
		// After the commit: a read that began before it cannot put the
		// key back unrevoked (see keyCache).
		s.keys.drop(k.Hash)
	}
	return k, err
}
