package api_test

import (
	"fmt"
	"testing"

	"gateway/store"
)

// A copy of an automatically disabled channel starts disabled by hand: it
// never failed, has no reason on record, and no automatic test may enable it.
func TestChannelCopy_OfAutoDisabled(t *testing.T) {
	t.Parallel()
	f := newChannelFixture(t)
	src := f.create(map[string]any{"name": "o", "type": 1, "key": "secret-x", "models": "gpt-4o"})[0]
	if _, _, err := f.store.SetChannelStatusAuto(src.ID, store.ChannelStatusAutoDisabled, "401"); err != nil {
		t.Fatal(err)
	}
	r := f.mustOK("POST", fmt.Sprintf("/api/channel/copy/%d", src.ID), f.adminTok, nil)
	cp := f.stored(decodeData[channelOut](t, r).ID)
	if cp.Status != store.ChannelStatusManuallyOff {
		t.Fatalf("copy of an automatically disabled channel: status %d (%s)", cp.Status, cp.OtherInfo)
	}
}
