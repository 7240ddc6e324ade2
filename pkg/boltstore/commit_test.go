package boltstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

func openCommitter(t testing.TB) (*bolt.DB, *committer) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "c.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	c := newCommitter(db)
	t.Cleanup(func() {
		c.close()
		db.Close()
	})
	return db, c
}

// Concurrent writes share commits; one that fails gets its own error and
// leaves the others of its group committed, and a panic fails only its own
// write.
func TestCommitterGroups(t *testing.T) {
	db, c := openCommitter(t)
	var wg sync.WaitGroup
	errs := make([]error, 60)
	for i := range errs {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("panic: %v", p)
				}
			}()
			errs[i] = c.write(func(tx *bolt.Tx) error {
				switch i % 20 {
				case 7:
					return fmt.Errorf("write %d refused", i)
				case 13:
					panic("boom")
				}
				return tx.Bucket([]byte("b")).Put(fmt.Appendf(nil, "k%02d", i), []byte("v"))
			})
		})
	}
	wg.Wait()
	err := db.View(func(tx *bolt.Tx) error {
		for i, err := range errs {
			v := tx.Bucket([]byte("b")).Get(fmt.Appendf(nil, "k%02d", i))
			switch i % 20 {
			case 7:
				if want := fmt.Sprintf("write %d refused", i); err == nil || err.Error() != want || v != nil {
					t.Errorf("write %d: got %v, stored %q; want %q and nothing stored", i, err, v, want)
				}
			case 13:
				// Run alone, the panic is the caller's own.
				if err == nil || err.Error() != "panic: boom" || v != nil {
					t.Errorf("write %d: got %v, stored %q; want the panic and nothing stored", i, err, v)
				}
			default:
				if err != nil || string(v) != "v" {
					t.Errorf("write %d: got %v, stored %q; want it stored", i, err, v)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A write that refuses before it changes anything gets its own error and
// leaves the others of its group to commit as they ran: none runs twice.
func TestCommitterRefusals(t *testing.T) {
	db, c := openCommitter(t)
	var wg sync.WaitGroup
	errs := make([]error, 60)
	runs := make([]int, len(errs))
	var mu sync.Mutex
	for i := range errs {
		wg.Go(func() {
			errs[i] = c.write(func(tx *bolt.Tx) error {
				mu.Lock()
				runs[i]++
				mu.Unlock()
				if i%3 == 0 {
					return refuse(fmt.Errorf("write %d refused", i))
				}
				return tx.Bucket([]byte("b")).Put(fmt.Appendf(nil, "k%02d", i), []byte("v"))
			})
		})
	}
	wg.Wait()
	err := db.View(func(tx *bolt.Tx) error {
		for i, err := range errs {
			v := tx.Bucket([]byte("b")).Get(fmt.Appendf(nil, "k%02d", i))
			if runs[i] != 1 {
				t.Errorf("write %d: got %d runs, want 1", i, runs[i])
			}
			if i%3 == 0 {
				var r refusal
				if want := fmt.Sprintf("write %d refused", i); err == nil || err.Error() != want || errors.As(err, &r) || v != nil {
					t.Errorf("write %d: got %v, stored %q; want %q unwrapped and nothing stored", i, err, v, want)
				}
			} else if err != nil || string(v) != "v" {
				t.Errorf("write %d: got %v, stored %q; want it stored", i, err, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCommitterClosed(t *testing.T) {
	db, c := openCommitter(t)
	c.close()
	c.close() // twice is not an error
	db.Close()
	err := c.write(func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte("k"), []byte("v")) })
	if !errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
		t.Errorf("got %v, want %v", err, bolterrors.ErrDatabaseNotOpen)
	}
}

// BenchmarkCommits is one small synced write, alone and from parallel
// writers, through the committer and, for comparison, through bbolt's Batch
// with the 2 ms window the store used before.
func BenchmarkCommits(b *testing.B) {
	for _, via := range []string{"committer", "bboltBatch"} {
		for _, parallel := range []bool{false, true} {
			b.Run(via+"/"+map[bool]string{false: "alone", true: "parallel"}[parallel], func(b *testing.B) {
				db, c := openCommitter(b)
				db.MaxBatchDelay = 2 * time.Millisecond
				write := func(i int) {
					fn := func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put(fmt.Appendf(nil, "k%d", i), []byte("v")) }
					var err error
					if via == "committer" {
						err = c.write(fn)
					} else {
						err = db.Batch(fn)
					}
					if err != nil {
						b.Error(err)
					}
				}
				if !parallel {
					for i := 0; b.Loop(); i++ {
						write(i)
					}
					return
				}
				b.SetParallelism(16)
				b.RunParallel(func(pb *testing.PB) {
					for i := 0; pb.Next(); i++ {
						write(i)
					}
				})
			})
		}
	}
}
