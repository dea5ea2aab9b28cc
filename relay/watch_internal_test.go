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
	w, ctx := watched(time.Second, 200*time.Millisecond)
	defer w.stop()
	w.headers()
	// Lines every 50 ms for 600 ms, three idle periods: the stream lives.
	for range 12 {
		time.Sleep(50 * time.Millisecond)
		w.data()
		if ctx.Err() != nil {
			t.Fatalf("ended while lines arrived: %v", context.Cause(ctx))
		}
	}
	last := time.Now()
	endsWith(t, ctx, errIdle, last, 200*time.Millisecond, 2*time.Second)
}

// When the timer fires before the idle time after the last line is over,
// it waits only for what is left of it.
func TestStreamWatchRearmsForWhatIsLeft(t *testing.T) {
	w, ctx := watched(10*time.Second, 300*time.Millisecond)
	defer w.stop()
	w.headers()
	w.data()
	time.Sleep(50 * time.Millisecond)
	w.data()
	last := time.Now()
	// The timer fires 300 ms after the first line and finds 50 ms left:
	// the call ends 300 ms after the last line, not 300 ms after the fire.
	endsWith(t, ctx, errIdle, last, 250*time.Millisecond, 450*time.Millisecond)
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
