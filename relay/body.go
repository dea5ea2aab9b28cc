package relay

import (
	"errors"
	"io"
	"net/http"
)

// readRequestBody reads a request body of at most limit bytes: a longer
// one is refused with 413, never cut at the limit and read as another
// request.
func readRequestBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *Error) {
	tooLarge := &Error{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large", Message: "请求体过大", Local: true}
	if r.ContentLength > limit {
		// Declared too long: refused before a byte is read, so a client
		// waiting for 100 Continue is not asked to upload it.
		return nil, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge
		}
		return nil, badRequest("无法读取请求体")
	}
	return body, nil
}
