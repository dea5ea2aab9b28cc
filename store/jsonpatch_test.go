package store

import (
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	json "github.com/goccy/go-json"
	bolt "go.etcd.io/bbolt"
)

// fill sets every string, integer and bool field of the struct v points to
// from r, strings drawn to look like the members being edited.
func fill(r *rand.Rand, v any) {
	tricky := []string{``, `"quota":1,`, `{"used_quota":5}`, `\"remain_quota\":`, `a\\"b`, `中文 "引号"`, "tab\tnew\nline", `]}[{`, `\u0022`}
	rv := reflect.ValueOf(v).Elem()
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		if !f.CanSet() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(tricky[r.IntN(len(tricky))] + tricky[r.IntN(len(tricky))])
		case reflect.Int, reflect.Int64:
			f.SetInt(r.Int64N(1<<40) - 1<<39)
		case reflect.Bool:
			f.SetBool(r.IntN(2) == 0)
		}
	}
}

// Editing members in the bytes gives what decoding, changing and encoding
// the record gives, for records whose strings mention the edited members.
func TestPatchIntsMatchesDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		var u User
		fill(r, &u)
		raw, _ := json.Marshal(&u)
		dq, dc := r.Int64N(1<<30), r.Int64N(100)
		out, ok := patchInts(raw, []intEdit{{key: keyQuota, add: -dq}, {key: keyUsedQuota, add: dq}, {key: keyRequestCount, add: dc}})
		if !ok {
			t.Fatalf("user record refused: %s", raw)
		}
		want := u
		want.Quota -= dq
		want.UsedQuota += dq
		want.RequestCount += dc
		var got User
		if err := json.Unmarshal(out, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("user: %v\n got  %+v\n want %+v\n from %s\n to   %s", err, got, want, raw, out)
		}

		var tok Token
		fill(r, &tok)
		raw, _ = json.Marshal(&tok)
		now := r.Int64N(1 << 31)
		out, ok = patchInts(raw, []intEdit{{key: keyRemainQuota, add: -dq}, {key: keyUsedQuota, add: dq}, {key: keyAccessedTime, put: true, set: now}})
		if !ok {
			t.Fatalf("token record refused: %s", raw)
		}
		wantTok := tok
		wantTok.RemainQuota -= dq
		wantTok.UsedQuota += dq
		wantTok.AccessedTime = now
		var gotTok Token
		if err := json.Unmarshal(out, &gotTok); err != nil || !reflect.DeepEqual(gotTok, wantTok) {
			t.Fatalf("token: %v\n got  %+v\n want %+v", err, gotTok, wantTok)
		}
		exhaust := !wantTok.UnlimitedQuota && wantTok.Status == TokenStatusEnabled && wantTok.RemainQuota <= 0
		if mayExhaust(out) != exhaust {
			t.Fatalf("mayExhaust = %v for %+v", !exhaust, wantTok)
		}

		var ch Channel
		fill(r, &ch)
		raw, _ = json.Marshal(&ch)
		out, ok = patchInts(raw, []intEdit{{key: keyUsedQuota, add: dq}})
		if !ok {
			t.Fatalf("channel record refused: %s", raw)
		}
		wantCh := ch
		wantCh.UsedQuota += dq
		var gotCh Channel
		if err := json.Unmarshal(out, &gotCh); err != nil || !reflect.DeepEqual(gotCh, wantCh) {
			t.Fatalf("channel: %v\n got  %+v\n want %+v", err, gotCh, wantCh)
		}
	}
}

// Whatever is not one object with each edited member once, as an integer,
// is refused and left to the decoding path.
func TestPatchIntsRefuses(t *testing.T) {
	edits := []intEdit{{key: keyQuota, add: 1}}
	for _, raw := range []string{
		``, `[]`, `"quota"`, `{}`, `{"used_quota":1}`, `{"quota":1,"quota":2}`, `{"quota":1.5}`, `{"quota":"1"}`,
		`{"quota":null}`, `{"quota":1`, `{"quota":1}x`, `{"quota":1,}`, `{"a":"unterminated,"quota":1}`, `{"a":[1,{"b":2}],"quota"}`,
		`{"quota":99999999999999999999}`, `{"a":{"quota":1}}`, `{"a" 1,"quota":1}`,
	} {
		if out, ok := patchInts([]byte(raw), edits); ok {
			t.Errorf("%s: patched to %s", raw, out)
		}
	}
	out, ok := patchInts([]byte(` { "a" : [ 1 , {"quota":3} ] , "quota" : -7 } `), edits)
	if !ok || string(out) != ` { "a" : [ 1 , {"quota":3} ] , "quota" : -6 } ` {
		t.Fatalf("spaced object: %s %v", out, ok)
	}
}

// A record the patch refuses (an older one without request_count) is
// charged through the decoding path, and a limited token that runs out is
// marked exhausted.
func TestChargeRecordsFallback(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "charge.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketUsers).Put(itob(900), []byte(`{"id":900,"username":"old","quota":100,"used_quota":5}`)); err != nil {
			return err
		}
		if err := putJSON(tx.Bucket(bucketTokens), itob(901), &Token{ID: 901, UserID: 900, Status: TokenStatusEnabled, RemainQuota: 30}); err != nil {
			return err
		}
		if err := chargeUser(tx, 900, &userDelta{quota: 30, count: 2}); err != nil {
			return err
		}
		if err := chargeToken(tx, 901, &tokenDelta{remain: 30, used: 30}, 77); err != nil {
			return err
		}
		return chargeChannel(tx, 902, 30) // no such channel: skipped
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		u, err := getUser(tx, 900)
		if err != nil {
			return err
		}
		if u.Quota != 70 || u.UsedQuota != 35 || u.RequestCount != 2 || u.Username != "old" {
			t.Errorf("user after charge: %+v", u)
		}
		tok, err := getTokenAny(tx, 901)
		if err != nil {
			return err
		}
		if tok.RemainQuota != 0 || tok.UsedQuota != 30 || tok.AccessedTime != 77 || tok.Status != TokenStatusExhausted {
			t.Errorf("token after charge: %+v", tok)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
