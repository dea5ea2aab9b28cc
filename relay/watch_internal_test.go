package relay

import (
	"context"
	"errors"
	"testing"
	"time"
)

// watched starts a watch over a fresh context and returns the context.
func watched(firstByte, idle time.Duration) (*streamWatch, context.Context) {
	ctx, cancel := context.WithCancelCause(context.Background())
	return watchStream(cancel, firstByte, idle), ctx
}

// endsWith waits for ctx to end and checks its cause and how long after
// since it ended.
func endsWith(t *testing.T, ctx context.Context, want error, since time.Time, min, max time.Duration) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("not ended after 5 s, want %v", want)
	}
	took := time.Since(since)
	if cause := context.Cause(ctx); !errors.Is(cause, want) {
		t.Fatalf("cause %v, want %v", cause, want)
	}
	if took < min || took > max {
		t.Fatalf("ended after %v, want between %v and %v", took, min, max)
	}
}

func TestStreamWatchFirstByte(t *testing.T) {
	start := time.Now()
	w, ctx := watched(150*time.Millisecond, 50*time.Millisecond)
	defer w.stop()
	// Headers at once, no data: the (longer) first-byte timeout applies,
	// not the idle one.
	w.headers()
	endsWith(t, ctx, errFirstByte, start, 150*time.Millisecond, 2*time.Second)
}

func TestStreamWatchIdleCountsFromTheLastLine(t *testing.T) {
	const idle = 200 * time.Millisecond
	// Lines every 50 ms for 600 ms, three idle periods: the stream lives.
	// A busy machine may hold this goroutine past the idle time between two
	// lines; the watch then ends the stream rightly, and the run starts
	// again.
	for range 10 {
		w, ctx := watched(time.Second, idle)
		w.headers()
		lived := true
		var last time.Time
		for i := range 13 {
			if i > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			if ctx.Err() != nil {
				if d := time.Since(last); i == 0 || d < idle {
					t.Fatalf("ended %v after a line, idle time %v: %v", d, idle, context.Cause(ctx))
				}
				lived = false
				break
			}
			// Before the line: the watch records it no sooner.
			last = time.Now()
			w.data()
		}
		if !lived {
			w.stop()
			continue
		}
		endsWith(t, ctx, errIdle, last, idle, 2*time.Second)
		w.stop()
		return
	}
	t.Fatal("the lines never came within the idle time of each other")
}

// When the timer fires before the idle time after the last line is over,
// it waits only for what is left of it.
func TestStreamWatchRearmsForWhatIsLeft(t *testing.T) {
	const idle = 300 * time.Millisecond
	for range 10 {
		w, ctx := watched(10*time.Second, idle)
		w.headers()
		first := time.Now()
		w.data()
		time.Sleep(50 * time.Millisecond)
		last := time.Now()
		w.data()
		if last.Sub(first) >= idle/2 || ctx.Err() != nil {
			// Held past the point where the timer fires with time left.
			w.stop()
			continue
		}
		// The timer fires idle after the first line and finds the time
		// since the last line left: the call ends idle after the last line.
		// Set again for the whole idle time, the timer would end it no
		// sooner than twice the idle time after the first line.
		endsWith(t, ctx, errIdle, last, idle, first.Add(2*idle).Sub(last)-time.Millisecond)
		w.stop()
		return
	}
	t.Fatal("the second line never came soon after the first")
}

func TestStreamWatchFirstDataStartsTheIdleClock(t *testing.T) {
	w, ctx := watched(10*time.Second, 100*time.Millisecond)
	defer w.stop()
	w.headers()
	w.data()
	// The first-byte timeout (10 s) is over: the idle one ends it.
	endsWith(t, ctx, errIdle, time.Now(), 50*time.Millisecond, 2*time.Second)
}

func TestStreamWatchWithoutFirstByteTimeout(t *testing.T) {
	w, ctx := watched(-1, 100*time.Millisecond)
	defer w.stop()
	// Waiting for the headers is not bounded here.
	time.Sleep(250 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("ended before the headers: %v", context.Cause(ctx))
	}
	// From the headers, the idle timeout runs, data or not.
	headers := time.Now()
	w.headers()
	endsWith(t, ctx, errIdle, headers, 100*time.Millisecond, 2*time.Second)
}

func TestStreamWatchStopped(t *testing.T) {
	w, ctx := watched(50*time.Millisecond, 50*time.Millisecond)
	w.headers()
	w.data()
	w.stop()
	time.Sleep(300 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("a stopped watch ended the call: %v", context.Cause(ctx))
	}
}

// BenchmarkStreamWatchData is the cost of one data line to the watch.
func BenchmarkStreamWatchData(b *testing.B) {
	w, _ := watched(time.Minute, time.Minute)
	defer w.stop()
	w.headers()
	for b.Loop() {
		w.data()
	}
}

// BenchmarkTimerResetPerLine is what a line cost when each one moved a timer.
func BenchmarkTimerResetPerLine(b *testing.B) {
	t := time.AfterFunc(time.Minute, func() {})
	defer t.Stop()
	for b.Loop() {
		t.Reset(time.Minute)
	}
}

// A write to the client that takes longer than the idle timeout (a client
// that reads slowly) is no idle time of the upstream's: the idle clock
// starts again when the write ends.
func TestStreamWatchWriteIsNotIdle(t *testing.T) {
	w, ctx := watched(10*time.Second, 100*time.Millisecond)
	defer w.stop()
	w.headers()
	w.data()
	w.write(true)
	time.Sleep(400 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("ended while the relay was writing to its client: %v", context.Cause(ctx))
	}
	w.write(false)
	endsWith(t, ctx, errIdle, time.Now(), 80*time.Millisecond, 2*time.Second)
}
