package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"log/slog"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// processDueKey returns the housekeeping index key of a process record:
// kind, due time and the record's key, so that one cursor walk per kind
// finds the most overdue first. nil when nothing is due.
func processDueKey(p *cardflow.Process) []byte {
	kind, at, ok := p.Due()
	if !ok {
		return nil
	}
	k := binary.BigEndian.AppendUint64(prefix(kind), uint64(max(at, 0)))
	return append(k, under(prefix(p.OrganizationID), p.ProcessID)...)
}

// indexProcess moves a process record's housekeeping index entry from what
// old needed (nil: no record before) to what p needs.
func indexProcess(tx *bolt.Tx, old, p *cardflow.Process) error {
	b := tx.Bucket(bProcessDue)
	var had []byte
	if old != nil {
		had = processDueKey(old)
	}
	want := processDueKey(p)
	if bytes.Equal(had, want) {
		// Unchanged (or nothing due either way): bbolt would rewrite
		// the page all the same.
		return nil
	}
	if had != nil {
		if err := b.Delete(had); err != nil {
			return err
		}
	}
	if want != nil {
		return b.Put(want, under(prefix(p.OrganizationID), p.ProcessID))
	}
	return nil
}

func idempotencyDueKey(i *cardflow.Idempotency) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(max(i.ExpiresAt, 0)))
	return append(k, under(prefix(i.OrganizationID), i.Key)...)
}

// indexIdempotency moves an idempotency record's expiry index entry.
func indexIdempotency(tx *bolt.Tx, old, i *cardflow.Idempotency) error {
	b := tx.Bucket(bIdempotencyDue)
	if old != nil {
		if err := b.Delete(idempotencyDueKey(old)); err != nil {
			return err
		}
	}
	return b.Put(idempotencyDueKey(i), under(prefix(i.OrganizationID), i.Key))
}

// buildHousekeepingIndexes indexes every process and idempotency record.
func buildHousekeepingIndexes(tx *bolt.Tx) error {
	err := tx.Bucket(bProcesses).ForEach(func(_, v []byte) error {
		p, err := decode[cardflow.Process](v)
		if err != nil {
			return err
		}
		return indexProcess(tx, nil, p)
	})
	if err != nil {
		return err
	}
	return tx.Bucket(bIdempotency).ForEach(func(_, v []byte) error {
		i, err := decode[cardflow.Idempotency](v)
		if err != nil {
			return err
		}
		return indexIdempotency(tx, nil, i)
	})
}

// dueProcesses walks the index of one kind in due order and returns up to
// limit records due at or before until (epoch ms). A record that cannot be
// read is logged and left out, so that it holds up none of the others.
func (s *Store) dueProcesses(kind string, until int64, limit int) ([]*cardflow.Process, error) {
	out := []*cardflow.Process{}
	err := s.db.View(func(tx *bolt.Tx) error {
		p := prefix(kind)
		procs := tx.Bucket(bProcesses)
		c := tx.Bucket(bProcessDue).Cursor()
		for k, v := c.Seek(p); k != nil && len(out) < limit && len(k) >= len(p)+8 && bytes.HasPrefix(k, p); k, v = c.Next() {
			if int64(binary.BigEndian.Uint64(k[len(p):])) > until {
				break
			}
			rec, err := decode[cardflow.Process](procs.Get(v))
			if err != nil {
				s.skipUnreadable(v)
				continue
			}
			out = append(out, rec)
		}
		return nil
	})
	return out, err
}

// skipUnreadable logs a process record housekeeping leaves out, by its ids
// only: its content may hold business data.
func (s *Store) skipUnreadable(key []byte) {
	org, processID, _ := strings.Cut(string(key), "\x00")
	s.log.Warn("housekeeping skips a process record that cannot be read", slog.String("organization", org), slog.String("process_id", processID))
}

func (s *Store) ListOverdueWaits(_ context.Context, now int64, limit int) ([]*cardflow.Process, error) {
	return s.dueProcesses(cardflow.DueWait, now, limit)
}

func (s *Store) ListStaleEarlyResumes(_ context.Context, before int64, limit int) ([]*cardflow.Process, error) {
	return s.dueProcesses(cardflow.DueEarly, before, limit)
}

// DeleteExpiredProcesses deletes in one transaction: a record is deleted
// only as the index says it is, closed and expired.
func (s *Store) DeleteExpiredProcesses(_ context.Context, now int64, limit int) (int, error) {
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		n = 0
		p := prefix(cardflow.DueClosed)
		procs := tx.Bucket(bProcesses)
		c := tx.Bucket(bProcessDue).Cursor()
		for k, v := c.Seek(p); k != nil && n < limit && len(k) >= len(p)+8 && bytes.HasPrefix(k, p); k, v = c.Seek(p) {
			if int64(binary.BigEndian.Uint64(k[len(p):])) > now {
				break
			}
			if err := procs.Delete(v); err != nil {
				return err
			}
			if err := c.Delete(); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

func (s *Store) DeleteExpiredIdempotency(_ context.Context, now int64, limit int) (int, error) {
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		n = 0
		recs := tx.Bucket(bIdempotency)
		c := tx.Bucket(bIdempotencyDue).Cursor()
		for k, v := c.First(); k != nil && n < limit; k, v = c.First() {
			if int64(binary.BigEndian.Uint64(k[:8]))*1000 > now {
				break
			}
			if err := recs.Delete(v); err != nil {
				return err
			}
			if err := c.Delete(); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
