package egress

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Plain-HTTP requests with a small body of known length are sent by
// inlineTransport on the caller's goroutine: it writes the request and
// reads the answer on a pooled connection itself. http.Transport hands
// every request to a writer goroutine and every answer over from a reader
// goroutine of its connection, a thread wake-up each way per call; for a
// local model server or a gateway in the same network those hand-offs are
// a large part of what a call costs. HTTPS keeps http.Transport, which
// speaks HTTP/2 where the provider offers it.
const (
	// inlineMaxBody is the largest request body sent inline. The body is
	// written whole before the answer is read, so it must fit in the
	// sockets' buffers even if the server answers before reading it.
	inlineMaxBody = 64 << 10
	// inlineMaxIdle is the number of idle connections kept per address.
	inlineMaxIdle = 256
	// inlineIdleTimeout closes a connection idle that long.
	inlineIdleTimeout = 90 * time.Second
	// inlineMaxHeaderBytes bounds a response's status line and headers.
	inlineMaxHeaderBytes = 1 << 20
)

var errHeadersTooLarge = errors.New("egress: response headers too large")

// inlineTransport is an HTTP/1.1 client transport that runs each exchange
// on the caller's goroutine. It serves only requests inlineEligible
// accepts.
type inlineTransport struct {
	dial          func(ctx context.Context, network, addr string) (net.Conn, error)
	headerTimeout time.Duration

	mu    sync.Mutex
	idle  map[string][]*inlineConn // by host:port, oldest first
	sweep *time.Timer
	// gen counts CloseIdleConnections calls: a connection dialled before
	// the last one is closed when its exchange ends instead of pooled.
	gen uint64
}

func newInlineTransport(g *guard) *inlineTransport {
	return &inlineTransport{dial: g.dialContext, headerTimeout: g.cfg.Timeout, idle: map[string][]*inlineConn{}}
}

// inlineEligible reports whether req can be sent inline: plain http, a
// body of known length up to inlineMaxBody, and nothing that needs
// http.Transport's concurrent reading and writing (Expect: 100-continue,
// protocol upgrades, trailers).
func inlineEligible(req *http.Request) bool {
	if !inlineSupported || req.URL.Scheme != "http" || req.URL.Host == "" || req.Method == http.MethodConnect {
		return false
	}
	if len(req.TransferEncoding) > 0 || len(req.Trailer) > 0 || req.Header.Get("Expect") != "" || req.Header.Get("Upgrade") != "" {
		return false
	}
	if req.Body == nil || req.Body == http.NoBody {
		return true
	}
	// For a client request a zero ContentLength with a body means unknown.
	return req.ContentLength > 0 && req.ContentLength <= inlineMaxBody
}

// inlineConn is one pooled connection.
type inlineConn struct {
	conn   net.Conn
	src    *headerLimit
	br     *bufio.Reader
	bw     *bufio.Writer
	key    string
	idleAt time.Time
	reused bool
	gen    uint64 // the transport's gen when it was dialled

	mu          sync.Mutex
	interrupted bool // a cancellation set a deadline in the past
}

// headerLimit lets at most left bytes be read from the connection while
// headers are read; the body is read with no limit.
type headerLimit struct {
	conn net.Conn
	left int64
}

func (h *headerLimit) Read(p []byte) (int, error) {
	if h.left <= 0 {
		return 0, errHeadersTooLarge
	}
	if int64(len(p)) > h.left {
		p = p[:h.left]
	}
	n, err := h.conn.Read(p)
	if h.left != math.MaxInt64 {
		h.left -= int64(n)
	}
	return n, err
}

// interrupt makes every blocked and later read and write on the
// connection fail at once; it runs when the request's context ends.
func (pc *inlineConn) interrupt() {
	pc.mu.Lock()
	pc.interrupted = true
	pc.conn.SetDeadline(time.Unix(1, 0))
	pc.mu.Unlock()
}

// setReadDeadline sets the read deadline unless a cancellation has
// already put it in the past.
func (pc *inlineConn) setReadDeadline(t time.Time) {
	pc.mu.Lock()
	if !pc.interrupted {
		pc.conn.SetReadDeadline(t)
	}
	pc.mu.Unlock()
}

// RoundTrip sends req, which inlineEligible accepted.
func (t *inlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	key := inlineAddr(req)
	// As http.Transport does, gzip is asked for unless the caller chose
	// an encoding, and the answer is decoded: an upstream answers the
	// same whichever path a request takes, and one that compresses
	// unasked is read, not passed on as compressed bytes.
	addedGzip := false
	if req.Header.Get("Accept-Encoding") == "" && req.Header.Get("Range") == "" && req.Method != http.MethodHead {
		r2 := *req
		r2.Header = req.Header.Clone()
		if r2.Header == nil {
			r2.Header = http.Header{}
		}
		r2.Header.Set("Accept-Encoding", "gzip")
		req, addedGzip = &r2, true
	}
	for attempt := 0; ; attempt++ {
		t.mu.Lock()
		gen := t.gen
		t.mu.Unlock()
		pc, err := t.get(ctx, key, trace)
		if err != nil {
			closeRequestBody(req)
			return nil, err
		}
		if !pc.reused {
			// Dialled under the rules of gen (a pooled one is of the
			// current gen already).
			pc.gen = gen
		}
		resp, err, retry := t.exchange(ctx, pc, req, trace)
		if err == nil {
			if addedGzip && resp.Body != http.NoBody && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
				resp.Body = &gzipBody{body: resp.Body}
				resp.Header.Del("Content-Encoding")
				resp.Header.Del("Content-Length")
				resp.ContentLength = -1
				resp.Uncompressed = true
			}
			return resp, nil
		}
		if !retry || attempt > 0 {
			return nil, err
		}
		// A pooled connection the server had closed: send once more on a
		// new one, with the body again.
		r2 := *req
		if req.Body != nil && req.Body != http.NoBody {
			body, berr := req.GetBody()
			if berr != nil {
				return nil, err
			}
			r2.Body = body
		}
		req = &r2
	}
}

func inlineAddr(req *http.Request) string {
	port := req.URL.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(req.URL.Hostname(), port)
}

func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// get returns an idle connection to key that the server has not closed,
// or dials a new one.
func (t *inlineTransport) get(ctx context.Context, key string, trace *httptrace.ClientTrace) (*inlineConn, error) {
	// A request whose context has ended is not written, not even on an
	// idle connection: http.Transport returns before writing too, and a
	// WroteRequest would tell the caller it was sent.
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if trace != nil && trace.GetConn != nil {
		trace.GetConn(key)
	}
	for {
		pc := t.popIdle(key)
		if pc == nil {
			break
		}
		if pc.br.Buffered() == 0 && connOpen(pc.conn) {
			pc.reused = true
			if trace != nil && trace.GotConn != nil {
				trace.GotConn(httptrace.GotConnInfo{Conn: pc.conn, Reused: true, WasIdle: true, IdleTime: time.Since(pc.idleAt)})
			}
			return pc, nil
		}
		pc.conn.Close()
	}
	c, err := t.dial(ctx, "tcp", key)
	if err != nil {
		return nil, err
	}
	src := &headerLimit{conn: c, left: math.MaxInt64}
	pc := &inlineConn{conn: c, src: src, br: bufio.NewReaderSize(src, 4<<10), bw: bufio.NewWriterSize(c, 4<<10), key: key}
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: c})
	}
	return pc, nil
}

// exchange writes req on pc and reads the answer's headers. retry reports
// that the failure came from a pooled connection the server had closed
// before anything of the answer arrived, so the request may be sent again
// on another connection.
func (t *inlineTransport) exchange(ctx context.Context, pc *inlineConn, req *http.Request, trace *httptrace.ClientTrace) (resp *http.Response, err error, retry bool) {
	stop := context.AfterFunc(ctx, pc.interrupt)
	fail := func(err error) error {
		stop()
		pc.conn.Close()
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return err
	}
	// Request.Write reports to the trace's WroteRequest, as
	// http.Transport's writer does, when the request is in the buffer.
	werr := req.Write(pc.bw)
	if werr == nil {
		werr = pc.bw.Flush()
	}
	// A server may answer and close before it reads the whole body (a
	// 401, a 413): the write fails with a reset (which Request.Write
	// reports as a body read error), but the answer has arrived, and it
	// is what http.Transport returns.
	early := werr != nil && ctx.Err() == nil && answerWaiting(pc.conn)
	if early {
		werr = nil
	}
	if werr != nil {
		// A write that failed sent no whole request: a stale pooled
		// connection may be replaced if the body can be sent again.
		replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
		return nil, fail(werr), pc.reused && replayable && ctx.Err() == nil
	}
	if t.headerTimeout > 0 {
		pc.setReadDeadline(time.Now().Add(t.headerTimeout))
	}
	pc.src.left = inlineMaxHeaderBytes
	if _, err := pc.br.Peek(1); err != nil {
		// Nothing of an answer: a pooled connection closed by the server
		// as the request went out. Only a request that is safe to repeat
		// is sent again, as http.Transport does.
		retry := pc.reused && (err == io.EOF || errors.Is(err, net.ErrClosed) || isReset(err)) && inlineReplayable(req) && ctx.Err() == nil
		return nil, fail(headerError(err)), retry
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	for {
		resp, err = http.ReadResponse(pc.br, req)
		if err != nil {
			return nil, fail(headerError(err)), false
		}
		// Informational answers (100 Continue, 103 Early Hints) precede
		// the real one; 101 is final.
		if resp.StatusCode < 100 || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
		if resp.Body != nil {
			resp.Body.Close()
		}
	}
	pc.src.left = math.MaxInt64
	if t.headerTimeout > 0 {
		pc.setReadDeadline(time.Time{})
	}
	keep := !early && !resp.Close && !req.Close && resp.StatusCode != http.StatusSwitchingProtocols
	if resp.Body == http.NoBody {
		t.release(pc, stop, keep)
		return resp, nil, false
	}
	resp.Body = &inlineBody{rc: resp.Body, t: t, pc: pc, ctx: ctx, stop: stop, keep: keep}
	return resp, nil, false
}

func headerError(err error) error {
	if errors.Is(err, errHeadersTooLarge) {
		return errHeadersTooLarge
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("egress: timeout awaiting response headers: %w", err)
	}
	return err
}

// inlineReplayable reports whether http.Transport would send req again
// after a pooled connection failed: an idempotent method, or an
// idempotency key, and a body it can produce again.
func inlineReplayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, a := req.Header["Idempotency-Key"]
	_, b := req.Header["X-Idempotency-Key"]
	return a || b
}

// release ends an exchange: the connection goes back to the pool when it
// may carry another one and no cancellation touched it.
func (t *inlineTransport) release(pc *inlineConn, stop func() bool, keep bool) {
	if stop() && keep {
		t.putIdle(pc)
		return
	}
	pc.conn.Close()
}

// inlineBody is an answer's body; reading it to the end returns the
// connection to the pool, closing it early closes the connection.
type inlineBody struct {
	rc   io.ReadCloser
	t    *inlineTransport
	pc   *inlineConn
	ctx  context.Context
	stop func() bool
	keep bool

	mu   sync.Mutex
	done bool
}

func (b *inlineBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	switch {
	case err == nil:
	case err == io.EOF:
		b.finish(b.keep)
	default:
		b.finish(false)
		if b.ctx.Err() != nil {
			err = context.Cause(b.ctx)
		}
	}
	return n, err
}

func (b *inlineBody) finish(keep bool) {
	b.mu.Lock()
	done := b.done
	b.done = true
	b.mu.Unlock()
	if !done {
		b.t.release(b.pc, b.stop, keep)
	}
}

// Close closes the connection first when the body was not read to its
// end, so that a Read blocked on another goroutine returns and nothing
// waits for the rest of a stream.
func (b *inlineBody) Close() error {
	b.finish(false)
	b.rc.Close()
	return nil
}

// gzipBody decodes a gzip-encoded body. The decoder is made at the first
// Read, which reads the gzip header: the answer's headers are returned
// before any of the body has arrived. Close closes the body only, so that
// it may end a Read blocked on another goroutine.
type gzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	zerr error
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.zr == nil && g.zerr == nil {
		g.zr, g.zerr = gzip.NewReader(g.body)
	}
	if g.zerr != nil {
		return 0, g.zerr
	}
	return g.zr.Read(p)
}

func (g *gzipBody) Close() error { return g.body.Close() }

func (t *inlineTransport) popIdle(key string) *inlineConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	list := t.idle[key]
	for len(list) > 0 {
		pc := list[len(list)-1]
		list[len(list)-1] = nil
		list = list[:len(list)-1]
		if time.Since(pc.idleAt) < inlineIdleTimeout {
			t.setIdle(key, list)
			return pc
		}
		pc.conn.Close()
	}
	t.setIdle(key, list)
	return nil
}

func (t *inlineTransport) setIdle(key string, list []*inlineConn) {
	if len(list) == 0 {
		delete(t.idle, key)
		return
	}
	t.idle[key] = list
}

func (t *inlineTransport) putIdle(pc *inlineConn) {
	pc.reused = false
	pc.idleAt = time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	list := t.idle[pc.key]
	if len(list) >= inlineMaxIdle || pc.gen != t.gen {
		pc.conn.Close()
		return
	}
	t.idle[pc.key] = append(list, pc)
	if t.sweep == nil {
		t.sweep = time.AfterFunc(inlineIdleTimeout, t.sweepIdle)
	}
}

// sweepIdle closes the connections idle for inlineIdleTimeout and runs
// again while any stay pooled.
func (t *inlineTransport) sweepIdle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	next := time.Duration(0)
	for key, list := range t.idle {
		i := 0
		for i < len(list) && now.Sub(list[i].idleAt) >= inlineIdleTimeout {
			list[i].conn.Close()
			i++
		}
		list = append(list[:0], list[i:]...)
		t.setIdle(key, list)
		if len(list) > 0 {
			if d := inlineIdleTimeout - now.Sub(list[0].idleAt); next == 0 || d < next {
				next = d
			}
		}
	}
	if next == 0 {
		t.sweep = nil
		return
	}
	t.sweep = time.AfterFunc(next, t.sweepIdle)
}

// CloseIdleConnections closes every pooled connection, and those in use
// when their exchange ends, so that no connection opened under the rules
// of before (EgressAllowedHosts) is used again.
func (t *inlineTransport) CloseIdleConnections() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gen++
	for key, list := range t.idle {
		for _, pc := range list {
			pc.conn.Close()
		}
		delete(t.idle, key)
	}
}

// isReset reports a connection reset by the peer.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET)
}
