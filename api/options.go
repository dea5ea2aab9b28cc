package api

import (
	"net/http"
	"strconv"
	"strings"

	json "github.com/goccy/go-json"

	"gateway/store"
)

func (s *Server) listOptions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.store.Settings().Options())
}

type optionRequest struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// optionValue accepts a JSON string, boolean or number and returns it as the
// stored string form.
func optionValue(raw json.RawMessage) (string, error) {
	v := strings.TrimSpace(string(raw))
	if v == "" || v == "null" {
		return "", nil
	}
	if v[0] == '"' {
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return "", store.Errorf(store.EINVALID, "无效的参数")
		}
		return str, nil
	}
	if v == "true" || v == "false" {
		return v, nil
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v, nil
	}
	return "", store.Errorf(store.EINVALID, "配置值必须是字符串、布尔值或数字")
}

func (s *Server) updateOption(w http.ResponseWriter, r *http.Request) {
	var req optionRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if len(req.Value) == 0 {
		// A body without value would clear the option: refused, as the
		// console always sends one (null clears on purpose).
		writeError(w, r, store.Errorf(store.EINVALID, "缺少配置值（value）"))
		return
	}
	value, err := optionValue(req.Value)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.store.UpdateOption(req.Key, value); err != nil {
		writeError(w, r, err)
		return
	}
	writeMessage(w, "保存成功", nil)
}

func (s *Server) resetModelRatio(w http.ResponseWriter, r *http.Request) {
	if err := s.store.UpdateOption("ModelRatio", store.DefaultModelRatioJSON()); err != nil {
		writeError(w, r, err)
		return
	}
	writeMessage(w, "模型倍率已重置", nil)
}

func (s *Server) getOptionText(key string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, s.store.Settings().Get(key))
	}
}
