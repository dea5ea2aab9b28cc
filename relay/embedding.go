package relay

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math"

	json "github.com/goccy/go-json"
)

// asksBase64 reports whether an embeddings call asked its vectors as
// base64 (OpenAI's Node and Python SDKs ask so by default and decode the
// answer as such).
func (c *call) asksBase64() bool {
	if c.k != kindEmbedding || !c.isJSON {
		return false
	}
	fields, err := c.jsonFields()
	if err != nil {
		return false
	}
	var f string
	_ = json.Unmarshal(fields["encoding_format"], &f)
	return f == "base64"
}

// base64Embeddings gives an embeddings answer the encoding the client asked
// for: a provider that ignores encoding_format (an older Ollama, many
// OpenAI-compatible servers) answers arrays of numbers, which an SDK that
// asked base64 decodes as base64 into a wrong vector. Each such array
// becomes OpenAI's base64 of little-endian float32s; an answer with none is
// returned as it came.
func base64Embeddings(data []byte) []byte {
	if !bytes.Contains(data, []byte(`"embedding"`)) {
		return data
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return data
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(top["data"], &items) != nil {
		return data
	}
	changed := false
	for _, it := range items {
		raw := bytes.TrimSpace(it["embedding"])
		if len(raw) == 0 || raw[0] != '[' {
			continue
		}
		var vec []float64
		if json.Unmarshal(raw, &vec) != nil {
			continue
		}
		buf := make([]byte, 4*len(vec))
		for i, v := range vec {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(v)))
		}
		it["embedding"], _ = json.Marshal(base64.StdEncoding.EncodeToString(buf))
		changed = true
	}
	if !changed {
		return data
	}
	b, err := json.Marshal(items)
	if err != nil {
		return data
	}
	top["data"] = b
	out, err := json.Marshal(top)
	if err != nil {
		return data
	}
	return out
}
