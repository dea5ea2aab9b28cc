package relay

import (
	"io"
	"net/http"
)

func readAllLimited(r *http.Request, limit int64) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r.Body, limit))
}
