package api

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// backup streams a consistent snapshot of the data file, taken in one read
// transaction, as a download. Restoring is: stop, replace the file, start.
func (s *Server) backup(w http.ResponseWriter, r *http.Request) {
	name := "gateway-" + time.Now().UTC().Format("20060102-150405") + ".db"
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Header().Set("Cache-Control", "no-store")
	err := s.store.Backup(r.Context(), w, func(size int64) {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.WriteHeader(http.StatusOK)
	})
	if err != nil {
		// Headers are gone; the client sees a short body, which fails to open.
		slog.Error("backup", append(logAttrs(r), "err", err)...)
	}
}
