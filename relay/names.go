package relay

import (
	"bytes"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-json/jsontext"

	"gateway/relay/tokenizer"
)

// The member names the relay reads, by where it reads them, keyed by their
// lower-case form.
var (
	topNames     = jsonNames(reflect.TypeFor[chatRequest]())
	messageNames = jsonNames(reflect.TypeFor[tokenizer.Message]())
	partNames    = jsonNames(reflect.TypeFor[tokenizer.ContentPart]())
)

func jsonNames(t reflect.Type) map[string]string {
	m := map[string]string{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[strings.ToLower(name)] = name
		}
	}
	return m
}

// caseVariant returns the first member name of a JSON object body that
// differs only in letter case from a name the relay reads there ("Model",
// "N", a message's "Content"), and that name; "" twice when there is none.
// The relay matches names exactly, as OpenAI does; an upstream that decodes
// as Go's encoding/json (Ollama, gateways written in Go) takes "Model" for
// "model", and would serve a model or image count the relay neither checked
// nor priced. Names are looked for where the relay reads them: the top
// level, each message, and each content part of a message or of an input; a
// tool's parameter schema may name its properties as it likes.
func caseVariant(body []byte) (name, want string) {
	if len(body) > 64<<10 {
		// A decoder reads a bytes.Buffer in place; from a reader it would
		// copy the body into a buffer grown to its longest value (an
		// image in base64).
		return variantIn(jsontext.NewDecoder(bytes.NewBuffer(body)), topNames, 0)
	}
	// Small bodies share decoders, whose buffers stay small.
	v := variantReaders.Get().(*variantReader)
	defer func() {
		v.r.Reset(nil)
		variantReaders.Put(v)
	}()
	v.r.Reset(body)
	v.d.Reset(&v.r)
	return variantIn(&v.d, topNames, 0)
}

// variantReader is a decoder kept for reuse with its reader.
type variantReader struct {
	r bytes.Reader
	d jsontext.Decoder
}

var variantReaders = sync.Pool{New: func() any { return new(variantReader) }}

// variantIn reads the object at d and returns the first case variant in it
// and the name it stands for, or "" (also when the JSON ends early: the body
// was decoded already).
func variantIn(d *jsontext.Decoder, names map[string]string, level int) (string, string) {
	if d.PeekKind() != '{' {
		return "", ""
	}
	if _, err := d.ReadToken(); err != nil {
		return "", ""
	}
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return "", ""
		}
		name := tok.String()
		if want, ok := names[foldName(name)]; ok && want != name {
			return name, want
		}
		var inner map[string]string
		switch {
		case level == 0 && name == "messages":
			inner = messageNames
		case level == 0 && name == "input", level == 1 && name == "content":
			inner = partNames
		}
		if inner == nil || d.PeekKind() != '[' {
			if d.SkipValue() != nil {
				return "", ""
			}
			continue
		}
		if _, err := d.ReadToken(); err != nil {
			return "", ""
		}
		for k := d.PeekKind(); k != ']' && k != 0; k = d.PeekKind() {
			if k == '{' {
				if bad, want := variantIn(d, inner, level+1); bad != "" {
					return bad, want
				}
			} else if d.SkipValue() != nil {
				return "", ""
			}
		}
		if _, err := d.ReadToken(); err != nil {
			return "", ""
		}
	}
	d.ReadToken() // the object's end
	return "", ""
}

// foldName is name in lower case as Go's encoding/json matches names: by
// Unicode case folding, under which "ſ" (U+017F) is an "s" and the Kelvin
// sign a "k" ("ſize" is read as "size"), where strings.ToLower leaves "ſ".
func foldName(name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			return strings.Map(func(r rune) rune {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					if f >= 'a' && f <= 'z' {
						return f
					}
				}
				return unicode.ToLower(r)
			}, name)
		}
	}
	return strings.ToLower(name)
}
