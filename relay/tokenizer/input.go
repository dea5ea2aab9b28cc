package tokenizer

import "encoding/json"

// CountInput returns the prompt tokens of the input of an embeddings or
// moderations request. input may be:
//
//   - a string, or a []string / []any of strings: the tokens of each string;
//   - a token array ([]int, []any of numbers as encoding/json decodes them,
//     and so on): one token per element, and an array of token arrays sums
//     its elements;
//   - multimodal moderation input ([]any of map[string]any parts, or
//     []ContentPart): text parts as text, image parts as for chat without
//     an ImageCounter;
//   - a json.RawMessage holding any of the above.
//
// Anything else counts 0. c.ExactBytes bounds the text tokenized, as for
// CountChat.
func (c Counter) CountInput(model string, input any) int {
	return countInput(newMeter(model, c.ExactBytes), model, input)
}

func countInput(enc *meter, model string, input any) int {
	switch v := input.(type) {
	case nil:
		return 0
	case string:
		return enc.count(v)
	case []string:
		n := 0
		for _, s := range v {
			n += enc.count(s)
		}
		return n
	case float64, float32, int, int32, int64, uint, uint32, uint64, json.Number:
		return 1
	case []int:
		return len(v)
	case []int32:
		return len(v)
	case []int64:
		return len(v)
	case []uint32:
		return len(v)
	case []float64:
		return len(v)
	case [][]int:
		n := 0
		for _, a := range v {
			n += len(a)
		}
		return n
	case [][]int32:
		n := 0
		for _, a := range v {
			n += len(a)
		}
		return n
	case [][]int64:
		n := 0
		for _, a := range v {
			n += len(a)
		}
		return n
	case []any:
		n := 0
		for _, e := range v {
			n += countInput(enc, model, e)
		}
		return n
	case map[string]any:
		p := partFromMap(v)
		k, _ := Counter{}.part(enc, model, &p)
		return k
	case []ContentPart:
		k, _ := Counter{}.content(enc, model, v)
		return k
	case json.RawMessage:
		var decoded any
		if err := json.Unmarshal(v, &decoded); err != nil {
			return 0
		}
		return countInput(enc, model, decoded)
	}
	return 0
}
