package store

import (
	"bytes"
	"strconv"
)

// A charge changes a few integer members of the user, token and channel
// records and nothing else. Decoding a whole record and encoding it again
// costs more than the rest of the commit, so the ledger edits those members
// in the stored bytes instead. Anything unexpected (a member missing, twice
// present or not an integer, bytes that are not an object) makes the edit
// report failure, and the caller falls back to decoding the record.

// intEdit changes one top-level integer member: the value becomes
// value+add, or set when put is true.
type intEdit struct {
	key []byte
	add int64
	put bool
	set int64
}

// jsonMembers calls fn with each top-level member of the JSON object in
// raw: the key as written (without its quotes) and the value's bounds. It
// reports false when raw is not one well-formed object.
func jsonMembers(raw []byte, fn func(key []byte, start, end int)) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return skipSpace(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return false
		}
		kend := skipString(raw, i)
		if kend < 0 {
			return false
		}
		key := raw[i+1 : kend-1]
		i = skipSpace(raw, kend)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		start := skipSpace(raw, i+1)
		end := skipValue(raw, start)
		if end < 0 {
			return false
		}
		fn(key, start, end)
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return skipSpace(raw, i+1) == len(raw)
		default:
			return false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'),
// or -1 when it does not end.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1. It
// checks the nesting and the strings, not the literals; the edited members
// are parsed on their own.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// patchInts returns a copy of raw with edits applied, or false (and raw
// untouched) when any edited member is not found exactly once as an
// integer.
func patchInts(raw []byte, edits []intEdit) ([]byte, bool) {
	type span struct {
		start, end int
		n          int64
		seen       int
	}
	spans := make([]span, len(edits))
	ok := jsonMembers(raw, func(key []byte, start, end int) {
		for k := range edits {
			if bytes.Equal(key, edits[k].key) {
				sp := &spans[k]
				sp.seen++
				sp.start, sp.end = start, end
				n, err := strconv.ParseInt(string(raw[start:end]), 10, 64)
				if err != nil {
					sp.seen = 2 // not an integer: refuse below
				}
				sp.n = n
			}
		}
	})
	if !ok {
		return nil, false
	}
	for k := range spans {
		if spans[k].seen != 1 {
			return nil, false
		}
	}
	out := make([]byte, 0, len(raw)+16*len(edits))
	at := 0
	for {
		// Members in the order they appear.
		next := -1
		for k := range spans {
			if spans[k].start >= at && (next < 0 || spans[k].start < spans[next].start) {
				next = k
			}
		}
		if next < 0 {
			break
		}
		sp := spans[next]
		v := sp.n + edits[next].add
		if edits[next].put {
			v = edits[next].set
		}
		out = append(out, raw[at:sp.start]...)
		out = strconv.AppendInt(out, v, 10)
		at = sp.end
	}
	return append(out, raw[at:]...), true
}
