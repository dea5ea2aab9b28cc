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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &Error{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error", Code: "request_too_large", Message: "请求体过大", Local: true}
		}
		return nil, badRequest("无法读取请求体")
	}
	return body, nil
}
