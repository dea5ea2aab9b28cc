package relay

import (
	"bytes"
	"math"
	"strconv"

	json "github.com/goccy/go-json"
)

// looseUsage reads a usage object whose counts are not all integers. OpenAI
// writes its counts as integers, and the relay decodes usage as such; some
// OpenAI-compatible servers write them as decimals (12.0) or as strings
// ("12"), which fails that decode. The relay then reads the usage again as
// looseUsage: such a count is read rounded up, so that a call is never
// charged below what its upstream reported; a count that is no number, or
// beyond any call (maxUsageTokens), reads as 0, as does a missing one.
type looseUsage struct {
	PromptTokens            looseCount    `json:"prompt_tokens"`
	CompletionTokens        looseCount    `json:"completion_tokens"`
	TotalTokens             looseCount    `json:"total_tokens"`
	PromptTokensDetails     *looseDetails `json:"prompt_tokens_details"`
	CompletionTokensDetails *looseDetails `json:"completion_tokens_details"`
}

// usage is u as the relay bills it.
func (u *looseUsage) usage() *usage {
	if u == nil {
		return nil
	}
	out := &usage{PromptTokens: int(u.PromptTokens), CompletionTokens: int(u.CompletionTokens), TotalTokens: int(u.TotalTokens)}
	if d := u.PromptTokensDetails; d != nil && d.ok {
		out.PromptTokensDetails = &tokenDetails{AudioTokens: int(d.AudioTokens)}
	}
	if d := u.CompletionTokensDetails; d != nil && d.ok {
		out.CompletionTokensDetails = &tokenDetails{AudioTokens: int(d.AudioTokens)}
	}
	return out
}

// looseChunk is a stream event's usage read as looseUsage reads it: the
// top-level one, or one inside a choice (Moonshot's).
type looseChunk struct {
	Choices []struct {
		Usage *looseUsage `json:"usage"`
	} `json:"choices"`
	Usage *looseUsage `json:"usage"`
}

// chunkUsage is the usage the event reports, as streamChunk.chunkUsage
// reads it.
func (ch *looseChunk) chunkUsage() (u *usage, top bool) {
	if ch.Usage != nil {
		return ch.Usage.usage(), true
	}
	for i := len(ch.Choices) - 1; i >= 0; i-- {
		if ch.Choices[i].Usage != nil {
			return ch.Choices[i].Usage.usage(), false
		}
	}
	return nil, false
}

// looseDetails reads token details as looseUsage reads its counts; details
// that are no object read as none.
type looseDetails struct {
	AudioTokens looseCount `json:"audio_tokens"`
	ok          bool
}

func (d *looseDetails) UnmarshalJSON(b []byte) error {
	var v struct {
		AudioTokens looseCount `json:"audio_tokens"`
	}
	if json.Unmarshal(b, &v) == nil {
		*d = looseDetails{AudioTokens: v.AudioTokens, ok: true}
	}
	return nil
}

// looseCount is a count written as a number or a string holding one.
type looseCount int

func (n *looseCount) UnmarshalJSON(raw []byte) error {
	*n = looseCount(readLooseCount(raw))
	return nil
}

// readLooseCount reads a count written as a number or a string holding one,
// rounded up; anything else, and a count beyond maxUsageTokens, is 0
// (negative counts are left for usage.sane, which reads them as none).
func readLooseCount(raw []byte) int {
	v := bytes.TrimSpace(raw)
	if len(v) > 1 && v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return 0
		}
		v = bytes.TrimSpace([]byte(s))
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsNaN(f) || math.Abs(f) > maxUsageTokens {
		return 0
	}
	return int(math.Ceil(f))
}
