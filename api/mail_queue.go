package api

import "sync"

// mailQueue holds work waiting for a slow party (the mail server): at most
// maxWaiting items wait, served in order by at most maxSenders goroutines.
// A stalled mail server so keeps a bounded list waiting, not a goroutine
// per mail.
type mailQueue[T any] struct {
	maxWaiting, maxSenders int
	send                   func(T)

	wg      sync.WaitGroup
	mu      sync.Mutex
	waiting []T
	senders int
}

// push queues v and starts a sender if fewer than maxSenders run; false
// when maxWaiting items already wait (v is not queued).
func (q *mailQueue[T]) push(v T) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) >= q.maxWaiting {
		return false
	}
	q.waiting = append(q.waiting, v)
	if q.senders < q.maxSenders {
		q.senders++
		q.wg.Add(1)
		go q.run()
	}
	return true
}

// run sends the waiting items until none is left.
func (q *mailQueue[T]) run() {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		if len(q.waiting) == 0 {
			q.waiting = nil
			q.senders--
			q.mu.Unlock()
			return
		}
		next := q.waiting[0]
		q.waiting = q.waiting[1:]
		q.mu.Unlock()
		q.send(next)
	}
}

// wait blocks until every item queued so far has been sent.
func (q *mailQueue[T]) wait() { q.wg.Wait() }
