package api

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"gateway/store"
)

// backup streams a consistent snapshot of the data file, taken in one read
// transaction, as a download. Restoring is: stop, replace the file, start.
func (s *Server) backup(w http.ResponseWriter, r *http.Request) {
	name := "gateway-" + time.Now().UTC().Format("20060102-150405") + ".db"
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	// The snapshot's read transaction lasts as long as the download: a
	// client that stops reading for 30 s ends it, so it cannot hold the
	// file's old pages (and a later close) for ever.
	rc := http.NewResponseController(w)
	out := writerFunc(func(p []byte) (int, error) {
		_ = rc.SetWriteDeadline(time.Now().Add(backupStall))
		return w.Write(p)
	})
	started := false
	err := s.store.Backup(r.Context(), out, func(size int64) {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.WriteHeader(http.StatusOK)
		started = true
	})
	if err == nil {
		return
	}
	if started {
		// Headers are gone; the client sees a short body (its length says
		// so), which fails to open.
		slog.Error("backup", append(logAttrs(r), "err", err)...)
		return
	}
	// The copy failed before anything was sent (no room for it, say): an
	// error status, so that a scripted download fails instead of keeping
	// an empty file.
	for _, k := range []string{"Content-Type", "Content-Disposition"} {
		w.Header().Del(k)
	}
	writeError(w, r, store.Internal(err))
}

// backupStall is how long a backup download may make no progress.
const backupStall = 30 * time.Second

// writerFunc is an io.Writer made of a function.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
