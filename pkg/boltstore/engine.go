package boltstore

import (
	"context"
	"encoding/json"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/execrecord"
)

func (s *Store) StartExecution(ctx context.Context, e *cardflow.Execution, p *cardflow.Process, idem *cardflow.Idempotency) error {
	return s.start(ctx, e, p, idem, nil)
}

// StartExecutionWithSample is start with the schema sample.
func (s *Store) StartExecutionWithSample(ctx context.Context, e *cardflow.Execution, p *cardflow.Process, idem *cardflow.Idempotency, sc *cardflow.Schema) error {
	return s.start(ctx, e, p, idem, sc)
}

// start stores a new execution with its process record, and its
// idempotency record and schema sample when given, in one transaction.
func (s *Store) start(ctx context.Context, e *cardflow.Execution, p *cardflow.Process, idem *cardflow.Idempotency, sc *cardflow.Schema) error {
	if !validParts(e.OrganizationID, e.WorkflowID, e.WorkflowExecutionID, p.ProcessID) || p.OrganizationID != e.OrganizationID {
		return cardflow.Errorf(cardflow.EINVALID, "an execution needs an organization, a workflow id, an execution id and a process id")
	}
	if idem != nil && (!validParts(idem.Key) || idem.OrganizationID != e.OrganizationID) {
		return cardflow.Errorf(cardflow.EINVALID, "an idempotency record needs a key of the execution's organization")
	}
	ew, err := encodeExecution(e)
	if err != nil {
		return err
	}
	rec := *p
	rec.Revision = 1
	pv, err := json.Marshal(&rec)
	if err != nil {
		return err
	}
	var iv []byte
	if idem != nil {
		if iv, err = json.Marshal(idem); err != nil {
			return err
		}
	}
	var sk, sv []byte
	if sc != nil && validParts(sc.OrganizationID, sc.WorkflowID) && sc.WorkflowVersion >= 1 {
		if sv, err = sc.MarshalRecord(); err != nil {
			return err
		}
		sk = versionKey(sc.OrganizationID, sc.WorkflowID, sc.WorkflowVersion)
	}
	maxOpen := cardflow.OpenExecutionLimit(ctx)
	err = s.commits.write(func(tx *bolt.Tx) error {
		if err := checkOpenLimit(tx, e.OrganizationID, maxOpen); err != nil {
			return refuse(err)
		}
		procs := tx.Bucket(bProcesses)
		pk := under(prefix(p.OrganizationID), p.ProcessID)
		var oldP *cardflow.Process
		if v := procs.Get(pk); v != nil {
			old, err := decode[cardflow.Process](v)
			if err != nil {
				return err
			}
			if !old.Closed {
				return refuse(cardflow.Errorf(cardflow.ECONFLICT, "process id %s belongs to execution %s, which is still open", p.ProcessID, old.ExecutionID))
			}
			oldP = old
		}
		if idem != nil {
			ik := under(prefix(idem.OrganizationID), idem.Key)
			var oldI *cardflow.Idempotency
			if v := tx.Bucket(bIdempotency).Get(ik); v != nil {
				old, err := decode[cardflow.Idempotency](v)
				if err != nil {
					return err
				}
				if old.ExpiresAt*1000 > e.CreatedOn {
					return refuse(cardflow.Errorf(cardflow.ECONFLICT, "idempotency key %s is already used", idem.Key))
				}
				oldI = old
			}
			if err := tx.Bucket(bIdempotency).Put(ik, iv); err != nil {
				return err
			}
			if err := indexIdempotency(tx, oldI, idem); err != nil {
				return err
			}
		}
		if err := createExecution(tx, ew); err != nil {
			return err
		}
		if err := indexProcess(tx, oldP, &rec); err != nil {
			return err
		}
		if sk != nil {
			if err := tx.Bucket(bSchemas).Put(sk, sv); err != nil {
				return err
			}
		}
		return procs.Put(pk, pv)
	})
	if err == nil {
		e.Revision, p.Revision = 1, 1
		execrecord.Wrote(e, ew.w)
	}
	return err
}

func processNotFound(id string) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "no execution has process id %s", id)
}

func (s *Store) GetProcess(_ context.Context, org, processID string) (*cardflow.Process, error) {
	var k []byte
	if validParts(org, processID) {
		k = under(prefix(org), processID)
	}
	return getJSON[cardflow.Process](s.db, bProcesses, k, func() error { return processNotFound(processID) })
}

func (s *Store) PutProcess(_ context.Context, p *cardflow.Process) error {
	if !validParts(p.OrganizationID, p.ProcessID) {
		return processNotFound(p.ProcessID)
	}
	rec := *p
	rec.Revision++
	v, err := json.Marshal(&rec)
	if err != nil {
		return err
	}
	k := under(prefix(p.OrganizationID), p.ProcessID)
	err = s.commits.write(func(tx *bolt.Tx) error {
		b := tx.Bucket(bProcesses)
		stored := b.Get(k)
		if stored == nil {
			return refuse(processNotFound(p.ProcessID))
		}
		old, err := decode[cardflow.Process](stored)
		if err != nil {
			return err
		}
		if old.Revision != p.Revision {
			return refuse(cardflow.Errorf(cardflow.ECONFLICT, "process %s changed meanwhile", p.ProcessID))
		}
		if err := indexProcess(tx, old, &rec); err != nil {
			return err
		}
		return b.Put(k, v)
	})
	if err == nil {
		p.Revision++
	}
	return err
}

func (s *Store) GetIdempotency(_ context.Context, org, key string, now int64) (*cardflow.Idempotency, error) {
	var k []byte
	if validParts(org, key) {
		k = under(prefix(org), key)
	}
	missing := func() error { return cardflow.Errorf(cardflow.ENOTFOUND, "idempotency key %s not found", key) }
	rec, err := getJSON[cardflow.Idempotency](s.db, bIdempotency, k, missing)
	if err == nil && rec.ExpiresAt*1000 <= now {
		return nil, missing()
	}
	return rec, err
}

func (s *Store) ListOpenExecutions(context.Context) ([]cardflow.ExecutionRef, error) {
	refs := []cardflow.ExecutionRef{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bOpenExecutions).ForEach(func(k, _ []byte) error {
			parts := splitKey(k)
			if len(parts) == 3 {
				refs = append(refs, cardflow.ExecutionRef{OrganizationID: parts[0], WorkflowID: parts[1], ExecutionID: parts[2]})
			}
			return nil
		})
	})
	return refs, err
}

func scheduleNotFound(workflowID string, version int) error {
	return cardflow.Errorf(cardflow.ENOTFOUND, "workflow %s version %d has no schedule", workflowID, version)
}

func (s *Store) PutSchedule(_ context.Context, sc *cardflow.Schedule) error {
	if !validParts(sc.OrganizationID, sc.WorkflowID) || sc.WorkflowVersion < 1 {
		return cardflow.Errorf(cardflow.EINVALID, "a schedule needs an organization, a workflow id and a version")
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return put(tx.Bucket(bSchedules), versionKey(sc.OrganizationID, sc.WorkflowID, sc.WorkflowVersion), sc)
	})
}

func (s *Store) GetSchedule(_ context.Context, org, workflowID string, version int) (*cardflow.Schedule, error) {
	var k []byte
	if validParts(org, workflowID) {
		k = versionKey(org, workflowID, version)
	}
	return getJSON[cardflow.Schedule](s.db, bSchedules, k, func() error { return scheduleNotFound(workflowID, version) })
}

func (s *Store) ListWorkflowSchedules(_ context.Context, org, workflowID string) ([]*cardflow.Schedule, error) {
	out := []*cardflow.Schedule{}
	if !validParts(org, workflowID) {
		return out, nil
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		walkBack(tx.Bucket(bSchedules), prefix(org, workflowID), nil, func(_, v []byte) bool {
			var sc *cardflow.Schedule
			if sc, err = decode[cardflow.Schedule](v); err != nil {
				return false
			}
			out = append(out, sc)
			return true
		})
		return err
	})
	return out, err
}

func (s *Store) DeleteSchedule(_ context.Context, org, workflowID string, version int) error {
	if !validParts(org, workflowID) {
		return nil
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bSchedules).Delete(versionKey(org, workflowID, version))
	})
}

func (s *Store) ListSchedules(context.Context) ([]*cardflow.Schedule, error) {
	out := []*cardflow.Schedule{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bSchedules).ForEach(func(_, v []byte) error {
			sc, err := decode[cardflow.Schedule](v)
			if err == nil {
				out = append(out, sc)
			}
			return err
		})
	})
	return out, err
}

// Deliver adds a card delivery to the local outbox; it makes Store the
// cardflow.Deliverer of local mode.
func (s *Store) Deliver(_ context.Context, d *cardflow.Delivery) error {
	if !validParts(d.OrganizationID, d.DeliveryID) {
		return cardflow.Errorf(cardflow.EINVALID, "a delivery needs an organization and an id")
	}
	v, err := json.Marshal(d)
	if err != nil {
		return err
	}
	k := under(prefix(d.OrganizationID), d.DeliveryID)
	return s.commits.write(func(tx *bolt.Tx) error { return tx.Bucket(bDeliveries).Put(k, v) })
}

// ListDeliveries lists the organization's outbox, newest first, limit
// deliveries after the one with id after ("" starts at the newest).
func (s *Store) ListDeliveries(_ context.Context, org string, limit int, after string) ([]*cardflow.Delivery, bool, error) {
	out := []*cardflow.Delivery{}
	more := false
	if !validParts(org) {
		return out, false, nil
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		p := prefix(org)
		var from []byte
		if after != "" {
			from = under(p, after)
		}
		var err error
		walkBack(tx.Bucket(bDeliveries), p, from, func(_, v []byte) bool {
			if len(out) == limit {
				more = true
				return false
			}
			var d cardflow.Delivery
			if err = json.Unmarshal(v, &d); err != nil {
				return false
			}
			out = append(out, &d)
			return true
		})
		return err
	})
	return out, more, err
}
