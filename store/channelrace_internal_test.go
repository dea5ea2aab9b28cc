package store

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// An administrator re-enables a disabled channel while "delete disabled"
// runs: the channel, enabled when the delete commits, survives.
func TestDeleteDisabledChannels_KeepsOneEnabledMeanwhile(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "r.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := &Channel{Name: "c", Type: 1, Key: "sk-1", Models: "m", Status: ChannelStatusManuallyOff}
	if err := s.CreateChannels([]*Channel{c}); err != nil {
		t.Fatal(err)
	}
	real := s.commitTx
	once := false
	s.setCommitTx(func(fn func(*bolt.Tx) error) error {
		if !once {
			once = true
			// The administrator's "enable" commits between the listing and the delete.
			if err := real(func(tx *bolt.Tx) error {
				ch, err := getChannel(tx, c.ID)
				if err != nil {
					return err
				}
				old := *ch
				ch.Status = ChannelStatusEnabled
				return putChannel(tx, &old, ch)
			}); err != nil {
				return err
			}
		}
		return real(fn)
	})
	n, err := s.DeleteDisabledChannels()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Channel(c.ID); err != nil || n != 0 {
		t.Fatalf("deleted %d; enabled channel gone: %v", n, err)
	}
}

// Priorities at both bounds and weights of 0: each pick of one request is
// another channel, walking down the tiers.
func TestSelectChannel_PriorityBoundsAndZeroWeights(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "r.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mk := func(p, w int64) *Channel {
		c := &Channel{Name: "c", Type: 1, Key: "sk", Models: "m", Priority: p, Weight: w}
		if err := s.CreateChannels([]*Channel{c}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	hi := mk(MaxChannelPriority, 0)
	hi2 := mk(MaxChannelPriority, 0)
	lo := mk(-999, 0)
	for i := 0; i < 200; i++ {
		ex := map[uint64]bool{}
		var seq []uint64
		for a := 0; a < 5; a++ {
			c := s.SelectChannel("default", "m", a, ex)
			if c == nil {
				break
			}
			ex[c.ID] = true
			seq = append(seq, c.ID)
		}
		if len(seq) != 3 || seq[1] != lo.ID || (seq[0] != hi.ID && seq[0] != hi2.ID) {
			t.Fatalf("seq %v", seq)
		}
	}
}
