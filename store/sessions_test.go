package store_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"gateway/store"
)

func TestSessions(t *testing.T) {
	t.Parallel()

	t.Run("CreateGet", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		clk := newClock(s)
		id, sess, err := s.CreateSession(7)
		if err != nil {
			t.Fatal(err)
		}
		if len(id) < 40 || sess.UserID != 7 || sess.CreatedAt != clk.Now().Unix() ||
			sess.ExpiresAt != clk.Now().Add(store.SessionTTL).Unix() {
			t.Fatalf("CreateSession = %q, %+v", id, sess)
		}
		got, err := s.Session(id)
		if err != nil || got.UserID != 7 {
			t.Fatalf("Session = %+v, %v", got, err)
		}
		other, _, _ := s.CreateSession(7)
		if other == id {
			t.Fatal("two sessions share an id")
		}
		for _, bad := range []string{"", "nope", id + "x", id[:len(id)-1]} {
			_, err := s.Session(bad)
			wantCode(t, err, store.EUNAUTHORIZED, "")
		}
		// Only the hash of a session id is stored.
		if data := backupBytes(t, s); bytes.Contains(data, []byte(id)) || bytes.Contains(data, []byte(other)) {
			t.Fatal("a session id is stored in plain text")
		}
	})

	t.Run("Expire", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		clk := newClock(s)
		id, _, _ := s.CreateSession(1)
		clk.Add(store.SessionTTL)
		if _, err := s.Session(id); err != nil {
			t.Fatalf("session refused at its expiry second: %v", err)
		}
		clk.Add(time.Second)
		_, err := s.Session(id)
		wantCode(t, err, store.EUNAUTHORIZED, "未登录或登录已过期，请重新登录！")
	})

	t.Run("Delete", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		newClock(s)
		a, _, _ := s.CreateSession(1)
		b, _, _ := s.CreateSession(1)
		if err := s.DeleteSession(a); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Session(a); store.ErrorCode(err) != store.EUNAUTHORIZED {
			t.Fatalf("deleted session: %v", err)
		}
		if _, err := s.Session(b); err != nil {
			t.Fatalf("other session: %v", err)
		}
		if err := s.DeleteSession("never-existed"); err != nil {
			t.Fatalf("deleting an unknown session: %v", err)
		}
	})

	t.Run("DeleteUserSessions", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		newClock(s)
		a1, _, _ := s.CreateSession(1)
		a2, _, _ := s.CreateSession(1)
		b1, _, _ := s.CreateSession(2)
		anon, _, _ := s.CreateSession(0)
		// A user whose id is a byte prefix of another's keeps their sessions.
		c1, _, _ := s.CreateSession(256)
		if err := s.DeleteUserSessions(1); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{a1, a2} {
			if _, err := s.Session(id); store.ErrorCode(err) != store.EUNAUTHORIZED {
				t.Errorf("user 1 session survived: %v", err)
			}
		}
		for _, id := range []string{b1, anon, c1} {
			if _, err := s.Session(id); err != nil {
				t.Errorf("another session ended: %v", err)
			}
		}
	})

	t.Run("Update", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		newClock(s)
		id, _, _ := s.CreateSession(0)
		if err := s.UpdateSession(id, func(sess *store.Session) error {
			sess.OAuthState, sess.OAuthAff = "state123", "ab12"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Session(id)
		if err != nil || got.OAuthState != "state123" || got.OAuthAff != "ab12" {
			t.Fatalf("Session = %+v, %v", got, err)
		}
		boom := store.Errorf(store.EINVALID, "boom")
		if err := s.UpdateSession(id, func(sess *store.Session) error { sess.OAuthState = "lost"; return boom }); !errors.Is(err, boom) {
			t.Fatalf("UpdateSession returned %v, want the callback's error", err)
		}
		if got, _ := s.Session(id); got.OAuthState != "state123" {
			t.Fatal("a failed update was written")
		}
		_ = s.DeleteSession(id)
		wantCode(t, s.UpdateSession(id, func(*store.Session) error { return nil }), store.EUNAUTHORIZED, "")
	})

	t.Run("Purge", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		clk := newClock(s)
		old, _, _ := s.CreateSession(1)
		oldAnon, _, _ := s.CreateSession(0)
		clk.Add(20 * 24 * time.Hour)
		fresh, _, _ := s.CreateSession(1)
		clk.Add(11 * 24 * time.Hour)
		n, err := s.PurgeExpiredSessions()
		if err != nil || n != 2 {
			t.Fatalf("PurgeExpiredSessions = %d, %v; want 2", n, err)
		}
		if _, err := s.Session(fresh); err != nil {
			t.Fatalf("live session purged: %v", err)
		}
		// Purged even when the clock goes back.
		clk.Add(-31 * 24 * time.Hour)
		for _, id := range []string{old, oldAnon} {
			if _, err := s.Session(id); store.ErrorCode(err) != store.EUNAUTHORIZED {
				t.Fatalf("purged session still readable: %v", err)
			}
		}
		clk.Add(31 * 24 * time.Hour)
		if n, err := s.PurgeExpiredSessions(); err != nil || n != 0 {
			t.Fatalf("second purge = %d, %v", n, err)
		}
		if err := s.DeleteUserSessions(1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Session(fresh); store.ErrorCode(err) != store.EUNAUTHORIZED {
			t.Fatalf("DeleteUserSessions after a purge left %v", err)
		}
	})
}
