// Package tokenizer counts OpenAI-style tokens locally, without any network
// access, for the relay's billing pipeline (S §5.8.1).
//
// The relay uses it in two places:
//
//   - before an upstream call, to estimate the prompt tokens of a request
//     (Counter.CountChat, Counter.CountInput, CountText) so that quota can be reserved;
//   - after a call whose response carried no usage, to estimate the
//     completion tokens (CountText for a whole reply, StreamCounter for a
//     stream of deltas).
//
// # Encodings
//
// Two byte-pair encodings are used, chosen by model name (EncoderFor):
// o200k_base for the gpt-4o family and its successors, cl100k_base for
// everything else. Their rank files are compiled into the binary by
// github.com/pkoukk/tiktoken-go-loader, so nothing is ever downloaded or
// read from disk, and text is split with tiktoken's patterns and merged by
// rank as tiktoken does: the counts are tiktoken's encode_ordinary counts.
// Each encoding is built once, on first use (both together take a few
// hundred milliseconds and about 15 MB of heap); call Preload at start-up to
// pay that cost before the first request. All counting functions are safe
// for concurrent use.
//
// Tokenizing costs roughly 0.3 ms per KB of text, so the counts of recently
// seen texts are remembered: a conversation's history, resent on every turn,
// is tokenized once. tiktoken's merge is quadratic in the length of a
// pre-token (100 KB of "a", of "=" or of spaces is one); the merge here
// keeps its candidate pairs in a heap, so such runs cost n log n and keep
// their exact count.
//
// # Chat requests
//
// CountChat follows S §5.8.1: 3 tokens per message plus its role and content,
// 1 more plus the name's tokens when a message is named, and 3 at the end.
// Text parts of array content are counted as text, an input_audio part as
// 100, and image parts as described on Counter. Tools add 8 once plus the
// name, description and JSON parameters of every tool (the reference counted
// only the last tool, a bug not reproduced here). Tool calls carried by
// earlier assistant messages are counted too (function name and arguments),
// since the upstream bills them as prompt.
//
// Message, ContentPart, Tool and ToolCall decode directly from the OpenAI
// JSON shapes.
//
// # Images
//
// ImageTokens implements OpenAI's tile rule for a known image size, and
// ImageTokensFromReader and ImageTokensFromDataURL read just the image
// header (PNG, JPEG, GIF or WebP) to find that size. The package itself never fetches a URL: a relay that wants exact image counts
// plugs an ImageCounter into Counter, typically one that decodes data: URLs
// locally and downloads other URLs through the relay's guarded HTTP client.
//
// # Completions
//
// StreamCounter accumulates the text and tool calls of a streamed reply
// cheaply and counts them once at the end, adding 7 tokens per tool call of
// the largest tool-call chunk, as S §5.8.1 estimates.
package tokenizer
