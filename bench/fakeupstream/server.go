package main

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goccy/go-json"
)

// Config holds the knobs of a fake upstream.
type Config struct {
	// Latency is server time added before each /v1 answer.
	Latency time.Duration
	// StreamChunks is the number of content chunks of a stream; it is also
	// the stream's completion_tokens.
	StreamChunks int
	// ChunkInterval is the pause between consecutive stream events.
	ChunkInterval time.Duration
	// Usage includes usage in answers: always for non-stream chat and
	// embeddings, and for streams when the request sets
	// stream_options.include_usage.
	Usage bool
}

// maxStreamChunks bounds StreamChunks so that a typo cannot make a single
// answer run for hours.
const maxStreamChunks = 1_000_000

// Validate reports a negative duration or an out-of-range chunk count.
func (c Config) Validate() error {
	switch {
	case c.Latency < 0:
		return errors.New("latency must not be negative")
	case c.ChunkInterval < 0:
		return errors.New("chunk interval must not be negative")
	case c.StreamChunks < 0 || c.StreamChunks > maxStreamChunks:
		return errors.New("stream chunks must be between 0 and 1000000")
	}
	return nil
}

// Stats counts the /v1 requests a Server has served since start or the last
// reset. It is the body of GET /__stats.
type Stats struct {
	// Requests counts every /v1 request, whatever its path or outcome.
	Requests int64 `json:"requests"`
	// Chat counts POST /v1/chat/completions, stream or not.
	Chat int64 `json:"chat"`
	// Stream counts the valid chat requests that asked for a stream.
	Stream int64 `json:"stream"`
}

// Server is the fake provider. Its counters are atomic, so one Server serves
// any number of concurrent requests.
type Server struct {
	cfg Config

	requests atomic.Int64
	chat     atomic.Int64
	stream   atomic.Int64

	// seq numbers completion ids; idPrefix keeps ids of two runs apart.
	seq      atomic.Uint64
	idPrefix string

	// scratch pools the per-request buffers so that a request costs no
	// allocation of its own beyond what net/http and the decoder need.
	scratch sync.Pool
}

// NewServer returns a Server for cfg, which must be valid.
func NewServer(cfg Config) *Server {
	s := &Server{
		cfg:      cfg,
		idPrefix: "chatcmpl-" + strconv.FormatInt(time.Now().Unix(), 36) + "-",
	}
	s.scratch.New = func() any {
		return &scratch{in: make([]byte, 0, 4096), out: make([]byte, 0, 4096)}
	}
	return s
}

// Stats returns the current counters.
func (s *Server) Stats() Stats {
	return Stats{
		Requests: s.requests.Load(),
		Chat:     s.chat.Load(),
		Stream:   s.stream.Load(),
	}
}

// Reset zeroes the counters.
func (s *Server) Reset() {
	s.requests.Store(0)
	s.chat.Store(0)
	s.stream.Store(0)
}

// Handler returns the routes of the fake provider.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.createChatCompletion)
	mux.HandleFunc("POST /v1/embeddings", s.createEmbeddings)
	mux.HandleFunc("GET /v1/models", s.listModels)
	mux.HandleFunc("/v1/", s.notFound)
	mux.HandleFunc("GET /__stats", s.getStats)
	mux.HandleFunc("POST /__reset", s.resetStats)
	return mux
}

// scratch is the reusable state of one request.
type scratch struct {
	in   []byte
	out  []byte
	chat chatRequest
	emb  embeddingRequest
}

// maxPooledBytes keeps an occasional huge body from pinning its buffer in
// the pool for the life of the process.
const maxPooledBytes = 1 << 20

func (s *Server) getScratch() *scratch { return s.scratch.Get().(*scratch) }

func (s *Server) putScratch(sc *scratch) {
	if cap(sc.in) > maxPooledBytes || cap(sc.out) > maxPooledBytes {
		return
	}
	s.scratch.Put(sc)
}

// Shared header values: net/http only reads them, so one slice serves every
// response and setting a header costs no allocation.
var (
	headerJSON        = []string{"application/json"}
	headerEventStream = []string{"text/event-stream"}
	headerNoCache     = []string{"no-cache"}
)

// createChatCompletion answers POST /v1/chat/completions.
func (s *Server) createChatCompletion(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.chat.Add(1)
	sc := s.getScratch()
	defer s.putScratch(sc)

	var err error
	if sc.in, err = readBody(r.Body, sc.in); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	req := &sc.chat
	req.reset()
	if err := json.Unmarshal(sc.in, req); err != nil {
		writeError(w, http.StatusBadRequest, "We could not parse the JSON body of your request.")
		return
	}
	if err := req.validate(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if req.Stream {
		s.stream.Add(1)
	}
	if !s.wait(r) {
		return
	}

	c := completion{
		idPrefix: s.idPrefix,
		seq:      s.seq.Add(1),
		created:  time.Now().Unix(),
		model:    req.Model,
		prompt:   promptTokens(req.chars()),
	}
	if req.Stream {
		c.completion = s.cfg.StreamChunks
		s.writeStream(w, r, sc, c, s.cfg.Usage && req.StreamOptions.IncludeUsage)
		return
	}
	c.completion = nonStreamCompletionTokens
	sc.out = appendCompletion(sc.out[:0], c, s.cfg.Usage)
	w.Header()["Content-Type"] = headerJSON
	w.Write(sc.out)
}

// writeStream writes the chunks of c as server-sent events, flushing each.
// Every chunk shares one prefix (id, created, model), so the prefix and the
// few chunk bodies are built once and then written as often as needed.
func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, sc *scratch, c completion, usage bool) {
	h := w.Header()
	h["Content-Type"] = headerEventStream
	h["Cache-Control"] = headerNoCache
	flusher, _ := w.(http.Flusher)

	l := buildStream(sc.out[:0], c, usage)
	sc.out = l.buf

	var timer *time.Timer
	first := true
	send := func(event []byte) bool {
		if !first && s.cfg.ChunkInterval > 0 {
			if timer == nil {
				timer = time.NewTimer(s.cfg.ChunkInterval)
			} else {
				timer.Reset(s.cfg.ChunkInterval)
			}
			select {
			case <-timer.C:
			case <-r.Context().Done():
				timer.Stop()
				return false
			}
		}
		first = false
		if _, err := w.Write(event); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}

	for i := range c.completion {
		event := l.next
		if i == 0 {
			event = l.first
		}
		if !send(event) {
			return
		}
	}
	if !send(l.finish) {
		return
	}
	if usage && !send(l.usage) {
		return
	}
	send(l.done)
}

// wait sleeps for the configured latency and reports whether the client is
// still there.
func (s *Server) wait(r *http.Request) bool {
	if s.cfg.Latency <= 0 {
		return true
	}
	t := time.NewTimer(s.cfg.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// createEmbeddings answers POST /v1/embeddings.
func (s *Server) createEmbeddings(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	sc := s.getScratch()
	defer s.putScratch(sc)

	var err error
	if sc.in, err = readBody(r.Body, sc.in); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	req := &sc.emb
	*req = embeddingRequest{}
	if err := json.Unmarshal(sc.in, req); err != nil {
		writeError(w, http.StatusBadRequest, "We could not parse the JSON body of your request.")
		return
	}
	if err := req.validate(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.wait(r) {
		return
	}
	sc.out = appendEmbeddings(sc.out[:0], req, s.cfg.Usage)
	w.Header()["Content-Type"] = headerJSON
	w.Write(sc.out)
}

// listModels answers GET /v1/models.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if !s.wait(r) {
		return
	}
	w.Header()["Content-Type"] = headerJSON
	w.Write(modelList)
}

// notFound answers any other /v1 path with OpenAI's error object.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	writeError(w, http.StatusNotFound, "Invalid URL ("+r.Method+" "+r.URL.Path+")")
}

// getStats answers GET /__stats.
func (s *Server) getStats(w http.ResponseWriter, r *http.Request) {
	b, _ := json.Marshal(s.Stats())
	w.Header()["Content-Type"] = headerJSON
	w.Write(b)
}

// resetStats answers POST /__reset.
func (s *Server) resetStats(w http.ResponseWriter, r *http.Request) {
	s.Reset()
	w.WriteHeader(http.StatusNoContent)
}

// maxBodyBytes bounds a request body; the tools never send more than a few
// kilobytes.
const maxBodyBytes = 8 << 20

var errBodyTooLarge = errors.New("request body too large")

// readBody reads body into buf[:0], growing it as needed, and returns it.
func readBody(body io.Reader, buf []byte) ([]byte, error) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > maxBodyBytes {
			return buf, errBodyTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// writeError writes OpenAI's error object with type invalid_request_error.
func writeError(w http.ResponseWriter, status int, message string) {
	b := make([]byte, 0, 128+len(message))
	b = append(b, `{"error":{"message":`...)
	b = appendJSONString(b, message)
	b = append(b, `,"type":"invalid_request_error","param":null,"code":null}}`...)
	w.Header()["Content-Type"] = headerJSON
	w.WriteHeader(status)
	w.Write(b)
}
