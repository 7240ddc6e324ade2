package boltstore

import (
	"bytes"
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// versioned stores a record kind that is saved in numbered versions and
// published: workflows and cards share one implementation through it.
type versioned[T, K any] struct {
	noun   string
	bucket []byte
	// fields returns the record's organization and the fields the store owns.
	fields    func(*T) (org string, id *string, version *int, latest *cardflow.Flag)
	setStatus func(*T, string)
	touch     func(rec *T, by string, now int64)
	pageKey   func(*T) K
	after     func(K) (id string, version int)
}

var workflows = versioned[cardflow.Workflow, cardflow.WorkflowKey]{
	noun:      "workflow",
	bucket:    bWorkflows,
	fields:    (*cardflow.Workflow).VersionFields,
	setStatus: (*cardflow.Workflow).SetStatus,
	touch:     (*cardflow.Workflow).Touch,
	pageKey:   (*cardflow.Workflow).PageKey,
	after:     cardflow.WorkflowKey.Position,
}

var cards = versioned[cardflow.Card, cardflow.CardKey]{
	noun:      "card",
	bucket:    bCards,
	fields:    (*cardflow.Card).VersionFields,
	setStatus: (*cardflow.Card).SetStatus,
	touch:     (*cardflow.Card).Touch,
	pageKey:   (*cardflow.Card).PageKey,
	after:     cardflow.CardKey.Position,
}

func (kd *versioned[T, K]) notFound(id string, version int) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "%s %s version %d not found", kd.noun, id, version)
}

// save stores rec as a new DRAFT version. The next version number is read
// from the highest key inside the write transaction, and bbolt runs one write
// transaction at a time, so concurrent saves cannot share a number.
func (kd *versioned[T, K]) save(db *bolt.DB, rec *T) error {
	org, id, version, latest := kd.fields(rec)
	if !validParts(org) {
		return cardflow.Errorf(cardflow.EINVALID, "a %s needs an organization", kd.noun)
	}
	return db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(kd.bucket)
		if *id == "" {
			*id = cardflow.NewID(time.Now())
			*version, *latest = 1, true
		} else {
			last := 0
			if validParts(*id) {
				walkBack(b, prefix(org, *id), nil, func(k, _ []byte) bool {
					last = keyVersion(k)
					return false
				})
			}
			if last == 0 {
				return cardflow.Errorf(cardflow.ENOTFOUND, "%s %s not found", kd.noun, *id)
			}
			// latest stays on the version in force until one is published.
			*version, *latest = last+1, false
		}
		kd.setStatus(rec, cardflow.StatusDraft)
		return put(b, versionKey(org, *id, *version), rec)
	})
}

func (kd *versioned[T, K]) get(db *bolt.DB, org, id string, version int) (*T, error) {
	var k []byte
	if validParts(org, id) {
		k = versionKey(org, id, version)
	}
	return getJSON[T](db, kd.bucket, k, func() error { return kd.notFound(id, version) })
}

// latest returns the version marked latest. It walks the versions from the
// newest; the latest one is usually the newest or close to it. Of the
// versions it passes over it reads the flag alone: every trigger and card
// step asks, and drafts newer than the latest version are common.
func (kd *versioned[T, K]) latest(db *bolt.DB, org, id string) (*T, error) {
	var rec *T
	err := db.View(func(tx *bolt.Tx) error {
		if !validParts(org, id) {
			return nil
		}
		var err error
		walkBack(tx.Bucket(kd.bucket), prefix(org, id), nil, func(_, v []byte) bool {
			// Workflows and cards both carry the flag as "latest".
			var flag struct {
				Latest cardflow.Flag `json:"latest"`
			}
			if json.Unmarshal(v, &flag) == nil && !flag.Latest {
				return true
			}
			// The latest version, or one the flag could not be read of:
			// decoded whole, which says why it cannot be read.
			var probe *T
			if probe, err = decode[T](v); err != nil {
				return false
			}
			if _, _, _, latest := kd.fields(probe); *latest {
				rec = probe
				return false
			}
			return true
		})
		return err
	})
	if err == nil && rec == nil {
		return nil, cardflow.Errorf(cardflow.ENOTFOUND, "%s %s not found", kd.noun, id)
	}
	return rec, err
}

func (kd *versioned[T, K]) list(db *bolt.DB, org string, opt cardflow.ListOptions[K]) (cardflow.Page[*T, K], error) {
	page := cardflow.Page[*T, K]{Items: []*T{}}
	if !validParts(org) {
		return page, nil
	}
	// The walk stays inside org's range whatever the page key says, so a key
	// naming another organization cannot reach its records.
	var from []byte
	if opt.After != nil {
		id, version := kd.after(*opt.After)
		from = versionKey(org, id, version)
	}
	err := db.View(func(tx *bolt.Tx) error {
		var err error
		page, err = readPage(tx, kd.bucket, prefix(org), from, opt.Limit, decodeValue[T], kd.pageKey)
		return err
	})
	return page, err
}

// publish makes one version ACTIVE and the only latest one, in a single write
// transaction, so no reader ever sees two latest versions or none.
func (kd *versioned[T, K]) publish(db *bolt.DB, org, id string, version int, by string, now int64) (*T, error) {
	if !validParts(org, id) {
		return nil, kd.notFound(id, version)
	}
	var rec *T
	err := db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(kd.bucket)
		k := versionKey(org, id, version)
		v := b.Get(k)
		if v == nil {
			return kd.notFound(id, version)
		}
		var err error
		if rec, err = decode[T](v); err != nil {
			return err
		}
		if err := kd.clearLatest(b, prefix(org, id), k); err != nil {
			return err
		}
		_, _, _, latest := kd.fields(rec)
		*latest = true
		kd.setStatus(rec, cardflow.StatusActive)
		kd.touch(rec, by, now)
		return put(b, k, rec)
	})
	return rec, err
}

// clearLatest unsets latest on the versions under p other than keep.
// Publishing is rare and a record has few versions, so reading them all is
// simpler than keeping a pointer to the latest one in step.
func (kd *versioned[T, K]) clearLatest(b *bolt.Bucket, p, keep []byte) error {
	var stale [][]byte
	var err error
	walkBack(b, p, nil, func(k, v []byte) bool {
		// Workflows and cards both carry the flag as "latest".
		var probe struct {
			Latest cardflow.Flag `json:"latest"`
		}
		if err = json.Unmarshal(v, &probe); err != nil {
			return false
		}
		if bool(probe.Latest) && !bytes.Equal(k, keep) {
			// Cursor keys are only valid until the bucket changes.
			stale = append(stale, bytes.Clone(k))
		}
		return true
	})
	if err != nil {
		return err
	}
	for _, k := range stale {
		rec, err := decode[T](b.Get(k))
		if err != nil {
			return err
		}
		_, _, _, latest := kd.fields(rec)
		*latest = false
		if err := put(b, k, rec); err != nil {
			return err
		}
	}
	return nil
}
