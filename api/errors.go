package api

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	"gateway/store"
)

// statusOf maps each store error code to one HTTP status.
var statusOf = map[string]int{
	store.EINVALID:      http.StatusBadRequest,
	store.EUNAUTHORIZED: http.StatusUnauthorized,
	store.EFORBIDDEN:    http.StatusForbidden,
	store.ENOTFOUND:     http.StatusNotFound,
	store.ECONFLICT:     http.StatusConflict,
	store.EQUOTA:        http.StatusForbidden,
	store.ERATELIMIT:    http.StatusTooManyRequests,
	store.EUPSTREAM:     http.StatusBadGateway,
	store.EUNAVAILABLE:  http.StatusServiceUnavailable,
	store.EUNSUPPORTED:  http.StatusNotImplemented,
	store.EINTERNAL:     http.StatusInternalServerError,
}

// envelope is the shape of every /api answer.
type envelope struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

// writeJSON writes a successful envelope around data.
func writeJSON(w http.ResponseWriter, data any) {
	writeEnvelope(w, http.StatusOK, envelope{Success: true, Data: data})
}

// writeResult writes err when there is one, else data as writeJSON does:
// the end of a handler that answers what the store returned, as it is.
func writeResult(w http.ResponseWriter, r *http.Request, data any, err error) {
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, data)
}

// writeMessage writes a successful envelope with a message for the console.
func writeMessage(w http.ResponseWriter, message string, data any) {
	writeEnvelope(w, http.StatusOK, envelope{Success: true, Message: message, Data: data})
}

func writeEnvelope(w http.ResponseWriter, status int, v any) {
	writeRaw(w, status, v)
}

func writeRaw(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		slog.Error("encode response", "err", err)
		status = http.StatusInternalServerError
		data = []byte(`{"success":false,"message":"Internal error.","data":null}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(data)
}

// writeError writes the failure envelope for err with its status. Only
// internal errors are logged with their cause; the cause never reaches the
// client.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil && errors.Is(err, r.Context().Err()) {
		// The client went away and the work stopped for it: nobody to answer.
		return
	}
	code := store.ErrorCode(err)
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if code == store.EINTERNAL {
		slog.Error("internal error", "method", r.Method, "path", r.URL.Path, "request_id", requestID(r), "err", err)
	} else if code == store.EUPSTREAM || code == store.EUNAVAILABLE {
		// A service the gateway depends on failed (a mail server, a login
		// provider, a channel's upstream): the operator needs the cause.
		slog.Warn("request failed", "method", r.Method, "path", r.URL.Path, "request_id", requestID(r), "code", code, "err", err)
	} else {
		slog.Debug("request refused", "method", r.Method, "path", r.URL.Path, "code", code, "err", err)
	}
	// A wait the caller can count down (a code mailed moments ago) is
	// told as Retry-After; the rate limits' refusals carry none.
	var cd *store.CooldownError
	if errors.As(err, &cd) {
		w.Header().Set("Retry-After", strconv.FormatInt(cd.Seconds, 10))
	}
	writeEnvelope(w, status, envelope{Success: false, Message: store.ErrorMessage(err)})
}

// maxBody limits every request body the console API reads.
const maxBody = 1 << 20

// decodeJSON reads a JSON body into v, with a size limit and clear messages.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	if r.ContentLength > maxBody {
		// Declared too long: refused before a byte is read, so a client
		// waiting for 100 Continue is not asked to upload it.
		return store.Errorf(store.EINVALID, "请求体过大")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return store.Errorf(store.EINVALID, "请求体过大")
		}
		return store.Errorf(store.EINVALID, "无法读取请求体")
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return store.Errorf(store.EINVALID, "请求体为空")
	}
	if !utf8.Valid(data) {
		// The decoder would store U+FFFD in place of the bad bytes (as JSON
		// itself has it for an escaped lone surrogate, which stays allowed).
		return store.Errorf(store.EINVALID, "无效的参数：字符串中有不合法的 UTF-8 字节")
	}
	if err := json.Unmarshal(data, v); err != nil {
		// A field's own decoder (an id, say) has its own message.
		var se *store.Error
		if errors.As(err, &se) {
			return se
		}
		if errors.Is(err, errNotAList) {
			return store.Errorf(store.EINVALID, "无效的参数：字段 %s 应为字符串或字符串数组", listField(data, v))
		}
		_, problem := store.DescribeDecodeError(data, err)
		return store.Errorf(store.EINVALID, "无效的参数：%s", problem)
	}
	return nil
}

// openAIError is the error object of the OpenAI-compatible routes.
type openAIError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   string `json:"param"`
		Code    any    `json:"code"`
	} `json:"error"`
}

// writeNotFoundURL answers an unknown /api or /v1 path.
func writeNotFoundURL(w http.ResponseWriter, r *http.Request) {
	var e openAIError
	e.Error.Message = "Invalid URL (" + r.Method + " " + r.URL.Path + ")"
	e.Error.Type = "invalid_request_error"
	writeRaw(w, http.StatusNotFound, e)
}
