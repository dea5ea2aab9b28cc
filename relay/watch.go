package relay

import (
	"context"
	"math"
	"sync/atomic"
	"time"
)

// streamWatch ends a stream attempt whose upstream keeps it waiting: for
// its first data line (firstByte, counted from before the request; off when
// not positive) and then between data lines (idle). Without a first-byte
// timeout the idle timeout runs from the answer's headers.
//
// One timer serves both. A data line only records its time; the timer,
// when it fires, ends the attempt or sets itself for what is left of the
// idle time after the last line. So a stream of thousands of lines moves a
// timer about once an idle period instead of once a line.
type streamWatch struct {
	cancel    context.CancelCauseFunc
	firstByte time.Duration
	idle      time.Duration
	base      time.Time
	t         *time.Timer
	last      atomic.Int64 // time of the last data line since base; -1: none yet
	stopped   atomic.Bool
	// writing: the relay is writing to its client, not waiting for the
	// upstream. A client that reads slowly holds those writes back; that
	// time is not the upstream's silence (the client's own bound is the
	// write timeout).
	writing atomic.Bool
}

// watchStream starts the first-byte clock of a stream attempt.
func watchStream(cancel context.CancelCauseFunc, firstByte, idle time.Duration) *streamWatch {
	w := &streamWatch{cancel: cancel, firstByte: firstByte, idle: idle, base: time.Now()}
	w.last.Store(-1)
	// Made idle and then set, so that fire, run by the timer, sees w.t.
	w.t = time.AfterFunc(math.MaxInt64, w.fire)
	if firstByte > 0 {
		w.t.Reset(firstByte)
	}
	return w
}

// headers marks the answer's headers, whatever their status: without a
// first-byte timeout, the idle clock starts here.
func (w *streamWatch) headers() {
	if w.firstByte <= 0 {
		w.last.Store(int64(time.Since(w.base)))
		w.t.Reset(w.idle)
	}
}

// data records a data line. The first one ends the first-byte clock.
func (w *streamWatch) data() {
	if w.last.Swap(int64(time.Since(w.base))) < 0 {
		w.t.Reset(w.idle)
	}
}

// write marks a write to the client starting (on) or ended: the idle clock
// starts again when it ends.
func (w *streamWatch) write(on bool) {
	if on {
		w.writing.Store(true)
		return
	}
	if w.last.Load() >= 0 {
		w.last.Store(int64(time.Since(w.base)))
	}
	w.writing.Store(false)
}

func (w *streamWatch) fire() {
	if w.stopped.Load() {
		return
	}
	last := w.last.Load()
	if last >= 0 && w.writing.Load() {
		// Waiting for the client, not for the upstream.
		w.t.Reset(w.idle)
		if w.stopped.Load() {
			w.t.Stop()
		}
		return
	}
	if last < 0 {
		w.cancel(errFirstByte)
		return
	}
	rest := w.idle - (time.Since(w.base) - time.Duration(last))
	if rest <= 0 {
		w.cancel(errIdle)
		return
	}
	w.t.Reset(rest)
	if w.stopped.Load() {
		// stop ran while this fired: its Stop may have come first.
		w.t.Stop()
	}
}

// stop ends the watch; a timer that fires after it does nothing.
func (w *streamWatch) stop() {
	w.stopped.Store(true)
	w.t.Stop()
}
