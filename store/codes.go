package store

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Code purposes.
const (
	CodeEmailVerify   = "email_verify"
	CodePasswordReset = "password_reset"
)

// CodeTTL is how long a mailed code or reset token stays valid.
const CodeTTL = 10 * time.Minute

// CodeCooldown is the minimum time between two codes to one address.
const CodeCooldown = 30 * time.Second

type codeRecord struct {
	Code      string `json:"code"`
	ExpiresAt int64  `json:"expires_at"`
	SentAt    int64  `json:"sent_at"`
}

func codeKey(purpose, subject string) []byte {
	return []byte(purpose + "\x00" + strings.ToLower(strings.TrimSpace(subject)))
}

// CooldownError is the cause of IssueCode's ERATELIMIT: the seconds until
// another code may be sent.
type CooldownError struct{ Seconds int64 }

func (e *CooldownError) Error() string { return fmt.Sprintf("cooldown: %d s", e.Seconds) }

// IssueCode stores a new single-use code for (purpose, subject), replacing
// any earlier one. Errors: ERATELIMIT when the previous code is younger than
// CodeCooldown (one stamped after now, by a clock since set back, is not).
func (s *Store) IssueCode(purpose, subject, code string) error {
	now := s.Now()
	return wrapTx(s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCodes)
		var prev codeRecord
		if ok, _ := getJSON(b, codeKey(purpose, subject), &prev); ok {
			// A code sent "later" than now was sent before the clock was
			// set back: its cooldown is over, or the address would wait
			// out the clock's correction too.
			if wait := prev.SentAt + int64(CodeCooldown/time.Second) - now.Unix(); wait > 0 && prev.SentAt <= now.Unix() {
				e := Errorf(ERATELIMIT, "请 %d 秒后再试", wait)
				e.Err = &CooldownError{Seconds: wait}
				return e
			}
		}
		return putJSON(b, codeKey(purpose, subject), codeRecord{Code: code, ExpiresAt: now.Add(CodeTTL).Unix(), SentAt: now.Unix()})
	}))
}

// CodeUse is a mailed single-use code spent by the change it allows
// (NewUser.Code, UserUpdate.Code), in the change's own transaction: a change
// refused, or never committed, leaves the code for another try.
type CodeUse struct {
	Purpose, Subject, Code string
}

// ErrBadCode is the cause of the EINVALID a wrong, spent or expired code
// gets, telling it from the other refusals of the change it was to allow.
var ErrBadCode = errors.New("bad code")

// ConsumeCode checks code for (purpose, subject) in constant time and deletes
// it on success, so a code works once. Errors: EINVALID (cause ErrBadCode).
func (s *Store) ConsumeCode(purpose, subject, code string) error {
	now := s.Now().Unix()
	return wrapTx(s.update(func(tx *bolt.Tx) error {
		return spendCode(tx, CodeUse{Purpose: purpose, Subject: subject, Code: code}, now)
	}))
}

// spendCode checks c in constant time and deletes it within tx.
func spendCode(tx *bolt.Tx, c CodeUse, now int64) error {
	b := tx.Bucket(bucketCodes)
	var rec codeRecord
	ok, err := getJSON(b, codeKey(c.Purpose, c.Subject), &rec)
	if err != nil {
		return err
	}
	if !ok || rec.ExpiresAt < now || c.Code == "" ||
		subtle.ConstantTimeCompare([]byte(rec.Code), []byte(c.Code)) != 1 {
		e := Errorf(EINVALID, "验证码错误或已过期")
		e.Err = ErrBadCode
		return e
	}
	return b.Delete(codeKey(c.Purpose, c.Subject))
}

// DropCode removes the code for (purpose, subject), used when sending failed.
func (s *Store) DropCode(purpose, subject string) {
	_ = s.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketCodes).Delete(codeKey(purpose, subject)) })
}

// PurgeExpiredCodes deletes the codes whose time ran out unused (a code that
// expired is refused anyway; this keeps the file from collecting them) and
// reports how many went.
func (s *Store) PurgeExpiredCodes() (int, error) {
	now := s.Now().Unix()
	n := 0
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCodes)
		var dead [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var rec codeRecord
			if err := jsonUnmarshal(v, &rec); err != nil || rec.ExpiresAt < now {
				dead = append(dead, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range dead {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(dead)
		return nil
	})
	return n, Internal(err)
}
