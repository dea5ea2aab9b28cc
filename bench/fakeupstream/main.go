// Command fakeupstream is an OpenAI-compatible fake provider for load runs.
//
// It answers POST /v1/chat/completions (plain JSON or server-sent events),
// POST /v1/embeddings and GET /v1/models in OpenAI's wire format, as fast as
// the machine allows, so that a load run against it measures the floor: the
// cost of HTTP alone. Pointing a gateway channel at it and loading the gateway
// then shows what the gateway adds.
//
// Usage is deterministic so that a test can predict charges:
//
//	prompt_tokens     = max(1, characters of all message contents / 4)
//	completion_tokens = --stream-chunks for a stream, 10 otherwise
//	total_tokens      = prompt_tokens + completion_tokens
//
// Characters are Unicode code points of the decoded JSON strings; array
// content counts the text of its "text" parts. For embeddings, prompt_tokens
// is the same function of the input strings (or the number of tokens when the
// input is given as token arrays).
//
// Every content token is the word "hello" (" hello" after the first), so a
// gateway that counts completion tokens itself with an OpenAI tokenizer
// arrives at the same completion_tokens.
//
// Control endpoints, not counted themselves:
//
//	GET  /__stats  {"requests": N, "chat": N, "stream": N}
//	POST /__reset  zeroes the counters
//
// Flags:
//
//	--addr            listen address (default 127.0.0.1:9100)
//	--latency         server time added before each /v1 answer (default 0)
//	--stream-chunks   content chunks per stream (default 20)
//	--chunk-interval  pause between stream chunks (default 0)
//	--usage           include usage in answers (default true)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fakeupstream:", err)
		os.Exit(1)
	}
}

// run parses args, serves until SIGINT or SIGTERM, then shuts down gracefully.
func run(args []string) error {
	fs := flag.NewFlagSet("fakeupstream", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:9100", "listen address")
	var cfg Config
	fs.DurationVar(&cfg.Latency, "latency", 0, "server time added before each /v1 answer")
	fs.IntVar(&cfg.StreamChunks, "stream-chunks", 20, "content chunks per stream (= completion_tokens)")
	fs.DurationVar(&cfg.ChunkInterval, "chunk-interval", 0, "pause between stream chunks")
	fs.BoolVar(&cfg.Usage, "usage", true, "include usage in answers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if err := cfg.Validate(); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           NewServer(cfg).Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	slog.Info("fakeupstream listening", "url", "http://"+ln.Addr().String(),
		"latency", cfg.Latency, "stream_chunks", cfg.StreamChunks,
		"chunk_interval", cfg.ChunkInterval, "usage", cfg.Usage)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
