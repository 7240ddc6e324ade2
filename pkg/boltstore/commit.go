package boltstore

import (
	"errors"
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// committer groups concurrent writes into shared commits, and so shared
// disk syncs. One goroutine commits: it takes the first write that comes,
// every write that is waiting by then, runs them in one transaction and
// answers them once it is synced; the writes that arrive meanwhile form
// the next group. A lone write is committed at once, where bbolt's Batch
// would hold it for MaxBatchDelay hoping for company, and under load the
// groups grow by themselves, as large as the writes that arrive during one
// sync.
//
// Like Batch, a function may run more than once: when one fails, the
// transaction is rolled back, the others run again without it, and it runs
// alone in its caller, whose error it then gives.
type committer struct {
	db    *bolt.DB
	calls chan *call
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

type call struct {
	fn  func(*bolt.Tx) error
	err chan error
}

// maxGroup bounds the writes of one commit, as bbolt's MaxBatchSize does.
const maxGroup = 1000

// errRunAlone tells a caller that its function failed in a group: it runs
// again alone, so its error is its own.
var errRunAlone = errors.New("boltstore: run alone")

func newCommitter(db *bolt.DB) *committer {
	c := &committer{db: db, calls: make(chan *call), stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// write runs fn in a write transaction shared with the writes of other
// callers, and returns once that transaction is committed and synced.
func (c *committer) write(fn func(*bolt.Tx) error) error {
	cl := &call{fn: fn, err: make(chan error, 1)}
	select {
	case c.calls <- cl:
	case <-c.stop:
		// Closing: bbolt answers that the file is closed, or commits it
		// if it is not closed yet.
		return unrefused(c.db.Update(fn))
	}
	err := <-cl.err
	if err == errRunAlone {
		err = unrefused(c.db.Update(fn))
	}
	return err
}

func (c *committer) loop() {
	defer close(c.done)
	for {
		var first *call
		select {
		case first = <-c.calls:
		case <-c.stop:
			return
		}
		group := []*call{first}
	more:
		for len(group) < maxGroup {
			select {
			case cl := <-c.calls:
				group = append(group, cl)
			default:
				break more
			}
		}
		c.commit(group)
	}
}

// commit runs group in one transaction and answers each call. A call
// that refused (see refuse) changed nothing, so the others go on in the
// same transaction; any other failure rolls it back.
func (c *committer) commit(group []*call) {
	refused := make([]error, len(group))
	for len(group) > 0 {
		failed := -1
		clear(refused)
		err := c.db.Update(func(tx *bolt.Tx) error {
			for i, cl := range group {
				err := safely(cl.fn, tx)
				var r refusal
				if errors.As(err, &r) {
					refused[i] = r.err
					continue
				}
				if err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if failed >= 0 {
			group[failed].err <- errRunAlone
			group = append(group[:failed], group[failed+1:]...)
			refused = refused[:len(group)]
			continue
		}
		for i, cl := range group {
			if refused[i] != nil {
				cl.err <- refused[i]
			} else {
				cl.err <- err
			}
		}
		return
	}
}

// refusal is the error of a write that refused before it changed anything
// in the transaction (a revision that moved on meanwhile): the writes it
// shares a commit with need not run again without it. Such conflicts are
// common under load, where every failure in a group of writes would
// otherwise roll back the whole group.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }

// refuse marks err as the error of a write function that has changed
// nothing yet.
func refuse(err error) error { return refusal{err} }

// unrefused gives the error a refusal stands for.
func unrefused(err error) error {
	var r refusal
	if errors.As(err, &r) {
		return r.err
	}
	return err
}

// safely runs fn, turning a panic into an error so that one write cannot
// take down the others of its group; it panics again when run alone.
func safely(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("boltstore: write panicked: %v", p)
		}
	}()
	return fn(tx)
}

// close stops the loop after the group it commits; later writes go to
// bbolt directly.
func (c *committer) close() {
	c.once.Do(func() { close(c.stop) })
	<-c.done
}
