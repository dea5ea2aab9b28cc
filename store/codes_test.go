package store_test

import (
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
