package store_test

import (
	"errors"
	"testing"
	"time"

	"gateway/store"
)

func TestCodes(t *testing.T) {
	t.Parallel()
	const email = "Alice@Example.com"

	t.Run("SingleUse", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		newClock(s)
		if err := s.IssueCode(store.CodeEmailVerify, email, "a1b2c3"); err != nil {
			t.Fatal(err)
		}
		// Subjects compare case-insensitively and trimmed.
		if err := s.ConsumeCode(store.CodeEmailVerify, " alice@example.COM ", "a1b2c3"); err != nil {
			t.Fatalf("right code refused: %v", err)
		}
		wantCode(t, s.ConsumeCode(store.CodeEmailVerify, email, "a1b2c3"), store.EINVALID, "验证码错误或已过期")
	})

	t.Run("WrongCode", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		newClock(s)
		if err := s.IssueCode(store.CodeEmailVerify, email, "a1b2c3"); err != nil {
			t.Fatal(err)
		}
		for _, code := range []string{"a1b2c4", "A1B2C3", "a1b2c", "a1b2c33", ""} {
			wantCode(t, s.ConsumeCode(store.CodeEmailVerify, email, code), store.EINVALID, "验证码错误或已过期")
		}
		// Codes are bound to their purpose and subject.
		wantCode(t, s.ConsumeCode(store.CodePasswordReset, email, "a1b2c3"), store.EINVALID, "")
		wantCode(t, s.ConsumeCode(store.CodeEmailVerify, "bob@example.com", "a1b2c3"), store.EINVALID, "")
		wantCode(t, s.ConsumeCode(store.CodeEmailVerify, "nobody@example.com", ""), store.EINVALID, "")
	})

	t.Run("Expiry", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		clk := newClock(s)
		if err := s.IssueCode(store.CodeEmailVerify, "a@example.com", "111111"); err != nil {
			t.Fatal(err)
		}
		if err := s.IssueCode(store.CodeEmailVerify, "b@example.com", "222222"); err != nil {
			t.Fatal(err)
		}
		clk.Add(store.CodeTTL - time.Second)
		if err := s.ConsumeCode(store.CodeEmailVerify, "a@example.com", "111111"); err != nil {
			t.Fatalf("code refused before its expiry: %v", err)
		}
		clk.Add(2 * time.Second)
		wantCode(t, s.ConsumeCode(store.CodeEmailVerify, "b@example.com", "222222"), store.EINVALID, "验证码错误或已过期")
	})

	t.Run("Purge", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		clk := newClock(s)
		if err := s.IssueCode(store.CodeEmailVerify, "old@example.com", "111111"); err != nil {
			t.Fatal(err)
		}
		clk.Add(store.CodeTTL + time.Second)
		if err := s.IssueCode(store.CodePasswordReset, "new@example.com", "222222"); err != nil {
			t.Fatal(err)
		}
		if n, err := s.PurgeExpiredCodes(); err != nil || n != 1 {
			t.Fatalf("purged %d, %v; want the one expired code", n, err)
		}
		if n, err := s.PurgeExpiredCodes(); err != nil || n != 0 {
			t.Fatalf("second purge %d, %v", n, err)
		}
		if err := s.ConsumeCode(store.CodePasswordReset, "new@example.com", "222222"); err != nil {
			t.Fatalf("a live code went with the purge: %v", err)
		}
	})

	t.Run("Cooldown", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		clk := newClock(s)
		if store.CodeCooldown != 30*time.Second {
			t.Fatalf("CodeCooldown = %v, want 30s (A §9)", store.CodeCooldown)
		}
		if err := s.IssueCode(store.CodeEmailVerify, email, "first1"); err != nil {
			t.Fatal(err)
		}
		clk.Add(29 * time.Second)
		wantCode(t, s.IssueCode(store.CodeEmailVerify, "alice@example.com", "second"), store.ERATELIMIT, "请 1 秒后再试")
		// The cooldown is per purpose and per address.
		if err := s.IssueCode(store.CodePasswordReset, email, "reset1"); err != nil {
			t.Fatal(err)
		}
		if err := s.IssueCode(store.CodeEmailVerify, "bob@example.com", "bob111"); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Second)
		if err := s.IssueCode(store.CodeEmailVerify, email, "second"); err != nil {
			t.Fatalf("issue after the cooldown: %v", err)
		}
		// The new code replaces the old one.
		wantCode(t, s.ConsumeCode(store.CodeEmailVerify, email, "first1"), store.EINVALID, "")
		if err := s.ConsumeCode(store.CodeEmailVerify, email, "second"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("CooldownAfterClockSetBack", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		clk := newClock(s)
		if err := s.IssueCode(store.CodeEmailVerify, email, "first1"); err != nil {
			t.Fatal(err)
		}
		// The clock is corrected an hour back: the code was sent "in the
		// future", and the address must not wait that hour for another.
		clk.Add(-time.Hour)
		if err := s.IssueCode(store.CodeEmailVerify, email, "second"); err != nil {
			t.Fatalf("issue after the clock was set back: %v", err)
		}
		// The new code's cooldown counts from the corrected clock.
		clk.Add(29 * time.Second)
		wantCode(t, s.IssueCode(store.CodeEmailVerify, email, "third1"), store.ERATELIMIT, "请 1 秒后再试")
		if err := s.ConsumeCode(store.CodeEmailVerify, email, "second"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("Drop", func(t *testing.T) {
		t.Parallel()
		s := MustOpenStore(t)
		newClock(s)
		if err := s.IssueCode(store.CodeEmailVerify, email, "a1b2c3"); err != nil {
			t.Fatal(err)
		}
		s.DropCode(store.CodeEmailVerify, email)
		wantCode(t, s.ConsumeCode(store.CodeEmailVerify, email, "a1b2c3"), store.EINVALID, "")
		// A dropped code (the mail failed) does not hold the cooldown.
		if err := s.IssueCode(store.CodeEmailVerify, email, "d4e5f6"); err != nil {
			t.Fatalf("issue after drop: %v", err)
		}
	})
}

// A code spent by the change it allows goes in the change's transaction: a
// change refused there (the address or the name taken meanwhile) leaves the
// code for another try, a wrong code changes nothing, and a change made
// spends it.
func TestCodes_SpentWithTheirChange(t *testing.T) {
	t.Parallel()
	s := MustOpenStore(t)
	newClock(s)
	alice, err := s.CreateUser(store.NewUser{Username: "alice", Password: "password1"})
	if err != nil {
		t.Fatal(err)
	}
	bob, err := s.CreateUser(store.NewUser{Username: "bob", Password: "password1", Email: "taken@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	const code = "a1b2c3"
	if err := s.IssueCode(store.CodeEmailVerify, "taken@example.com", code); err != nil {
		t.Fatal(err)
	}
	use := &store.CodeUse{Purpose: store.CodeEmailVerify, Subject: "taken@example.com", Code: code}
	email := "taken@example.com"

	// Binding: refused while bob holds the address, the code kept.
	_, err = s.UpdateUser(alice.ID, store.UserUpdate{Email: &email, Code: use})
	wantCode(t, err, store.ECONFLICT, "")
	// A wrong code: refused as a code, nothing changed.
	_, err = s.UpdateUser(alice.ID, store.UserUpdate{Email: &email, Code: &store.CodeUse{Purpose: use.Purpose, Subject: use.Subject, Code: "zzzzzz"}})
	wantCode(t, err, store.EINVALID, "验证码错误或已过期")
	if !errors.Is(err, store.ErrBadCode) {
		t.Fatalf("a wrong code's error %v is not ErrBadCode", err)
	}
	moved := "bob.moved@example.com"
	if _, err := s.UpdateUser(bob.ID, store.UserUpdate{Email: &moved}); err != nil {
		t.Fatal(err)
	}
	if u, err := s.UpdateUser(alice.ID, store.UserUpdate{Email: &email, Code: use}); err != nil || u.Email != email {
		t.Fatalf("binding with the kept code: %+v, %v", u, err)
	}
	wantCode(t, s.ConsumeCode(use.Purpose, use.Subject, code), store.EINVALID, "验证码错误或已过期")

	// Registration: refused for a name taken, the code kept; then spent.
	if err := s.IssueCode(store.CodeEmailVerify, "new@example.com", code); err != nil {
		t.Fatal(err)
	}
	reg := &store.CodeUse{Purpose: store.CodeEmailVerify, Subject: "new@example.com", Code: code}
	_, err = s.CreateUser(store.NewUser{Username: "bob", Password: "password1", Email: "new@example.com", Code: reg})
	wantCode(t, err, store.ECONFLICT, "")
	if _, err := s.CreateUser(store.NewUser{Username: "carol", Password: "password1", Email: "new@example.com", Code: reg}); err != nil {
		t.Fatalf("registration with the kept code: %v", err)
	}
	_, err = s.CreateUser(store.NewUser{Username: "dave", Password: "password1", Email: "new2@example.com", Code: reg})
	wantCode(t, err, store.EINVALID, "验证码错误或已过期")
}
