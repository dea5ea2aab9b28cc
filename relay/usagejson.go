package relay

import (
	"bytes"
	"math"
	"strconv"

	json "github.com/goccy/go-json"
)

// UnmarshalJSON reads a usage object. OpenAI writes its counts as integers;
// some OpenAI-compatible servers write them as decimals (12.0) or as
// strings ("12"). Such a count is read rounded up, so that a call is never
// charged below what its upstream reported; a count that is no number at
// all reads as 0, as does a missing one.
func (u *usage) UnmarshalJSON(b []byte) error {
	type plain usage // without this method
	var p plain
	if err := json.Unmarshal(b, &p); err == nil {
		*u = usage(p)
		return nil
	}
	var loose struct {
		PromptTokens            json.RawMessage `json:"prompt_tokens"`
		CompletionTokens        json.RawMessage `json:"completion_tokens"`
		TotalTokens             json.RawMessage `json:"total_tokens"`
		PromptTokensDetails     *tokenDetails   `json:"prompt_tokens_details"`
		CompletionTokensDetails *tokenDetails   `json:"completion_tokens_details"`
	}
	if err := json.Unmarshal(b, &loose); err != nil {
		return err
	}
	*u = usage{
		PromptTokens: looseCount(loose.PromptTokens), CompletionTokens: looseCount(loose.CompletionTokens),
		TotalTokens: looseCount(loose.TotalTokens), PromptTokensDetails: loose.PromptTokensDetails,
		CompletionTokensDetails: loose.CompletionTokensDetails,
	}
	return nil
}

// UnmarshalJSON reads token details as usage reads its counts.
func (d *tokenDetails) UnmarshalJSON(b []byte) error {
	type plain tokenDetails
	var p plain
	if err := json.Unmarshal(b, &p); err == nil {
		*d = tokenDetails(p)
		return nil
	}
	var loose struct {
		AudioTokens json.RawMessage `json:"audio_tokens"`
	}
	if err := json.Unmarshal(b, &loose); err != nil {
		return err
	}
	*d = tokenDetails{AudioTokens: looseCount(loose.AudioTokens)}
	return nil
}

// looseCount reads a count written as a number or a string holding one,
// rounded up and held within maxUsageTokens (negative counts are left for
// usage.sane to clamp); anything else is 0.
func looseCount(raw json.RawMessage) int {
	v := bytes.TrimSpace(raw)
	if len(v) > 1 && v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return 0
		}
		v = bytes.TrimSpace([]byte(s))
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsNaN(f) {
		return 0
	}
	return int(max(min(math.Ceil(f), maxUsageTokens), -maxUsageTokens))
}
