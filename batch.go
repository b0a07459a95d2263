package pagoda

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// maxBatchCalls bounds the functions one batch commits together.
const maxBatchCalls = 1000

// batchCall is one Batch call waiting for its batch.
type batchCall struct {
	fn  func(*Tx) error
	res chan batchResult // buffered: 1
}

// batchResult ends a caller's wait: with its function's outcome, or, with
// lead set, with the job of running the next batches.
type batchResult struct {
	err  error
	lead bool
}

// batchState is the queue of Batch calls (DB.batch), guarded by DB.mu.
type batchState struct {
	pending []*batchCall
	leader  bool // a caller is running batches
	// last is the number of calls of the last batch, and took the time
	// its transaction took, commit included: what gather expects.
	last int
	took time.Duration
}

// Batch runs fn in a write transaction shared with other goroutines'
// concurrent Batch calls: their functions run one after the other in one
// transaction, which commits once, with one sync. This is group commit:
// many small updates from many goroutines cost one sync per batch rather
// than one each, at the price of waiting for the batch.
//
// No timer is involved. The first caller runs its function at once; the
// calls that arrive while that transaction commits form the next batch,
// which a waiting caller runs as soon as the commit ends. The callers of
// the last batch are given a moment (at most a quarter of that batch's
// time) to come back and join the next one; after a batch of one call
// there is no wait, so a lone caller waits no longer than with Update.
//
// If a function returns an error (or panics) the batch is rolled back,
// that function is run again alone in a transaction of its own, whose
// outcome is its caller's, and the others are run again as a batch. If
// the commit fails, every function is run again alone. A function may thus
// run more than once: it must have no effect outside the transaction
// (other than idempotent ones), and it must not rely on running first or
// alone.
func (db *DB) Batch(fn func(*Tx) error) error {
	if db.readOnly {
		return ErrReadOnly
	}
	c := &batchCall{fn: fn, res: make(chan batchResult, 1)}
	db.mu.Lock()
	db.batch.pending = append(db.batch.pending, c)
	lead := !db.batch.leader
	db.batch.leader = true
	db.mu.Unlock()
	if !lead {
		r := <-c.res
		if !r.lead {
			return r.err
		}
	}
	// Run batches until this caller's function has run, then hand the
	// queue to the next waiting caller.
	db.gather()
	for {
		db.mu.Lock()
		n := min(len(db.batch.pending), maxBatchCalls)
		calls := db.batch.pending[:n:n]
		db.batch.pending = db.batch.pending[n:]
		db.mu.Unlock()
		start := time.Now()
		db.runBatch(calls)
		took := time.Since(start)
		db.mu.Lock()
		db.batch.last, db.batch.took = n, took
		db.mu.Unlock()
		select {
		case r := <-c.res:
			db.mu.Lock()
			if len(db.batch.pending) > 0 {
				db.batch.pending[0].res <- batchResult{lead: true}
			} else {
				db.batch.leader = false
				db.batch.pending = nil
			}
			db.mu.Unlock()
			return r.err
		default: // more than maxBatchCalls were ahead of this one
		}
	}
}

// gatherShare is the part of the last batch's duration that a new leader
// may wait for the callers of that batch to come back.
const gatherShare = 4

// gather lets the callers of the last batch, who typically come back with
// their next call at once, join the batch a new leader is about to run:
// without it, the first of them would commit alone just ahead of the
// others, every other batch, and halve the batching. It yields the
// processor until as many calls as the last batch had are queued, or a
// quarter of that batch's duration has passed. After a batch of one call
// (a lone writer) it does not wait at all.
func (db *DB) gather() {
	db.mu.Lock()
	want, wait := db.batch.last, db.batch.took/gatherShare
	db.mu.Unlock()
	runtime.Gosched()
	if want <= 1 {
		return
	}
	deadline := time.Now().Add(wait)
	for {
		db.mu.Lock()
		n := len(db.batch.pending)
		db.mu.Unlock()
		if n >= want || !time.Now().Before(deadline) {
			return
		}
		runtime.Gosched()
	}
}

// batchFnError is the error of one function of a batch.
type batchFnError struct {
	i   int
	err error
}

func (e *batchFnError) Error() string { return e.err.Error() }

// runBatch runs calls in one transaction and delivers each its outcome.
func (db *DB) runBatch(calls []*batchCall) {
	for len(calls) > 0 {
		err := db.Update(func(tx *Tx) error {
			for i, c := range calls {
				if err := callBatchFn(c.fn, tx); err != nil {
					return &batchFnError{i: i, err: err}
				}
			}
			return nil
		})
		if err == nil {
			for _, c := range calls {
				c.res <- batchResult{}
			}
			return
		}
		var fe *batchFnError
		if !errors.As(err, &fe) {
			// The transaction failed as a whole (commit, a poisoned
			// transaction, a closed database): each function alone.
			for _, c := range calls {
				c.res <- batchResult{err: db.Update(func(tx *Tx) error { return callBatchFn(c.fn, tx) })}
			}
			return
		}
		c := calls[fe.i]
		c.res <- batchResult{err: db.Update(func(tx *Tx) error { return callBatchFn(c.fn, tx) })}
		calls = append(calls[:fe.i:fe.i], calls[fe.i+1:]...)
	}
}

// callBatchFn calls fn, turning a panic into an error: the goroutine
// running the batch is not the caller's, and the other callers must not be
// left waiting.
func callBatchFn(fn func(*Tx) error, tx *Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pagoda: Batch function panicked: %v", r)
		}
	}()
	return fn(tx)
}
