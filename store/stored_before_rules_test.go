package store_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"gateway/store"
)

// Rules added over time judge what an edit changes: a channel or token
// stored before them (a model name too long to index, a key with a control
// character, an expiry written in milliseconds) can still be disabled,
// re-prioritised or renamed, and the new rules still refuse new bad values.
func TestRecordsStoredBeforeARuleStayEditable(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	c := &store.Channel{Type: 1, Name: "old", Key: "sk-old", Models: "gpt-4o", Group: "default"}
	if err := s.CreateChannels([]*store.Channel{c}); err != nil {
		t.Fatal(err)
	}
	stored := *c
	stored.Models = "gpt-4o," + strings.Repeat("m", 300)
	stored.Key = "sk-\x01old"
	stored.Priority = 1 << 60
	store.PutChannelAsStored(t, s, &stored)

	off, prio, name := store.ChannelStatusManuallyOff, int64(5), "renamed"
	for _, upd := range []store.ChannelUpdate{{Status: &off}, {Priority: &prio}, {Name: &name}} {
		if _, err := s.UpdateChannel(c.ID, upd); err != nil {
			t.Fatalf("edit %+v of a channel stored before the rules: %v", upd, err)
		}
	}
	bad := "gpt-4o," + strings.Repeat("n", 256)
	_, err := s.UpdateChannel(c.ID, store.ChannelUpdate{Models: &bad})
	wantCode(t, err, store.EINVALID, "模型名称过长")
	badKey := "sk-\x02new"
	_, err = s.UpdateChannel(c.ID, store.ChannelUpdate{Key: &badKey})
	wantCode(t, err, store.EINVALID, "密钥不能包含控制字符")

	u := MustPutUser(t, s, store.User{Username: "holder"})
	tok, err := s.CreateToken(&store.Token{UserID: u.ID, Name: "ms", UnlimitedQuota: true, ExpiredTime: -1})
	if err != nil {
		t.Fatal(err)
	}
	old := *tok
	old.ExpiredTime = 1767225600000 // milliseconds
	store.PutTokenAsStored(t, s, &old)
	disabled := store.TokenStatusDisabled
	if _, err := s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{Status: &disabled}); err != nil {
		t.Fatalf("disabling a token stored with a far expiry: %v", err)
	}
	same := old.ExpiredTime
	if _, err := s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{ExpiredTime: &same}); err != nil {
		t.Fatalf("saving a token's stored expiry unchanged: %v", err)
	}
	later := int64(store.MaxExpiredTime + 1)
	_, err = s.UpdateToken(u.ID, tok.ID, store.TokenUpdate{ExpiredTime: &later})
	wantCode(t, err, store.EINVALID, "过期时间格式错误！")
}

// At open, a stored option that no longer parses falls back to its
// default; the others keep their values, even ones a save would refuse now.
func TestOpenResetsOnlyOptionsThatDoNotParse(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	store.PutOptionAsStored(t, s, "Chats", `[{"a":`)
	store.PutOptionAsStored(t, s, "ModelRatio", `{"my-model":2,"old":null}`)
	store.PutOptionAsStored(t, s, "EgressAllowedHosts", ".corp.example")
	s = MustReopen(t, s)
	set := s.Settings()
	if got := set.Get("Chats"); got != store.OptionDefFor("Chats").Default {
		t.Errorf("Chats = %q, want its default", got)
	}
	if set.ModelRatio["my-model"] != 2 || set.Get("EgressAllowedHosts") != ".corp.example" {
		t.Errorf("ModelRatio %v, EgressAllowedHosts %q: values that parse were reset", set.ModelRatio, set.Get("EgressAllowedHosts"))
	}
}

// An option reset at open is told in the log, naming it: the prices (or
// the chats, the groups) the operator set are gone from the gateway, and
// without a word the defaults would be taken for what they set.
func TestOpenTellsTheOptionsItResets(t *testing.T) {
	var out bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&out, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	s := MustOpenStore(t)
	store.PutOptionAsStored(t, s, "GroupRatio", `{"vip":-1}`)
	store.PutOptionAsStored(t, s, "ModelRatio", `{"my-model":2}`)
	s = MustReopen(t, s)
	if s.Settings().GroupRatio["vip"] != 1 || s.Settings().ModelRatio["my-model"] != 2 {
		t.Fatalf("GroupRatio %v, ModelRatio %v", s.Settings().GroupRatio, s.Settings().ModelRatio)
	}
	logged := out.String()
	if !strings.Contains(logged, "level=WARN") || !strings.Contains(logged, "key=GroupRatio") {
		t.Errorf("the reset of GroupRatio is not logged:\n%s", logged)
	}
	if strings.Contains(logged, "key=ModelRatio") {
		t.Errorf("an option that parses is logged as reset:\n%s", logged)
	}
}
