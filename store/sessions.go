package store

import (
	"bytes"
	"time"

	bolt "go.etcd.io/bbolt"
)

// SessionTTL is how long a session lives without use.
const SessionTTL = 30 * 24 * time.Hour

// Session is a server-side login session. The cookie carries a random id;
// the store keeps only its hash.
type Session struct {
	UserID    uint64 `json:"user_id"`
	CreatedAt int64  `json:"created_at"`
	ExpiresAt int64  `json:"expires_at"`
	// OAuthState and OAuthAff hold a pending third-party login (single use).
	OAuthState        string `json:"oauth_state,omitempty"`
	OAuthAff          string `json:"oauth_aff,omitempty"`
	OAuthStateExpires int64  `json:"oauth_state_expires,omitempty"`
}

// CreateSession starts a session for userID (0 = anonymous) and returns the
// cookie value.
func (s *Store) CreateSession(userID uint64) (string, *Session, error) {
	return s.createSession(userID, nil)
}

// CreateSessionFor starts a session for the account u that a login just
// verified: in the same transaction, the account must still be usable and
// have the password it was verified with. A password change or a ban
// committed while the login was checking the password (bcrypt takes a
// while) ends the sessions there were; this keeps the login from starting
// one after it. Errors: EUNAUTHORIZED.
func (s *Store) CreateSessionFor(u *User) (string, *Session, error) {
	return s.createSession(u.ID, func(tx *bolt.Tx) error {
		cur, err := getUser(tx, u.ID)
		if err != nil || cur.Deleted() || cur.Status != UserStatusEnabled || cur.PasswordHash != u.PasswordHash {
			return Errorf(EUNAUTHORIZED, "用户名或密码错误，或用户已被封禁")
		}
		return nil
	})
}

func (s *Store) createSession(userID uint64, check func(*bolt.Tx) error) (string, *Session, error) {
	id := RandomString(43)
	now := s.Now()
	sess := &Session{UserID: userID, CreatedAt: now.Unix(), ExpiresAt: now.Add(SessionTTL).Unix()}
	h := hashSecret(id)
	err := s.update(func(tx *bolt.Tx) error {
		if check != nil {
			if err := check(tx); err != nil {
				return err
			}
		}
		if err := putJSON(tx.Bucket(bucketSessions), h, sess); err != nil {
			return err
		}
		if userID != 0 {
			return tx.Bucket(bucketIdxSessionsByUser).Put(append(itob(userID), h...), nil)
		}
		return nil
	})
	if err != nil {
		return "", nil, Internal(err)
	}
	return id, sess, nil
}

// Session returns the live session for a cookie value.
// Errors: EUNAUTHORIZED when unknown or expired.
func (s *Store) Session(id string) (*Session, error) {
	if id == "" {
		return nil, Errorf(EUNAUTHORIZED, "未登录")
	}
	h := hashSecret(id)
	var sess Session
	var ok bool
	err := s.db.View(func(tx *bolt.Tx) (err error) {
		ok, err = getJSON(tx.Bucket(bucketSessions), h, &sess)
		return
	})
	if err != nil {
		return nil, Internal(err)
	}
	if ok && s.endedAny.Load() {
		_, ended := s.endedSessions.Load(string(h))
		ok = !ended
	}
	if !ok || sess.ExpiresAt < s.Now().Unix() {
		return nil, Errorf(EUNAUTHORIZED, "未登录或登录已过期，请重新登录！")
	}
	return &sess, nil
}

// UpdateSession rewrites the session with id using fn.
// Errors: EUNAUTHORIZED when it no longer exists.
func (s *Store) UpdateSession(id string, fn func(*Session) error) error {
	h := hashSecret(id)
	return wrapTx(s.update(func(tx *bolt.Tx) error {
		var sess Session
		ok, err := getJSON(tx.Bucket(bucketSessions), h, &sess)
		if err != nil {
			return err
		}
		if !ok {
			return Errorf(EUNAUTHORIZED, "未登录或登录已过期，请重新登录！")
		}
		if err := fn(&sess); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bucketSessions), h, &sess)
	}))
}

// DeleteSession ends one session. When the file refuses the delete (a full
// disk) the session ends in memory all the same, until a restart, and the
// error is returned.
func (s *Store) DeleteSession(id string) error {
	h := hashSecret(id)
	err := s.update(func(tx *bolt.Tx) error {
		var sess Session
		if ok, _ := getJSON(tx.Bucket(bucketSessions), h, &sess); ok && sess.UserID != 0 {
			if err := tx.Bucket(bucketIdxSessionsByUser).Delete(append(itob(sess.UserID), h...)); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketSessions).Delete(h)
	})
	if err != nil {
		s.endedSessions.Store(string(h), struct{}{})
		s.endedAny.Store(true)
	}
	return Internal(err)
}

// DeleteUserSessions ends every session of a user.
func (s *Store) DeleteUserSessions(userID uint64) error {
	return Internal(s.update(func(tx *bolt.Tx) error { return deleteUserSessions(tx, userID) }))
}

func deleteUserSessions(tx *bolt.Tx, userID uint64) error {
	idx := tx.Bucket(bucketIdxSessionsByUser)
	sessions := tx.Bucket(bucketSessions)
	prefix := itob(userID)
	var keys [][]byte
	c := idx.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := sessions.Delete(k[8:]); err != nil {
			return err
		}
		if err := idx.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// PurgeExpiredSessions removes sessions past their expiry; it returns how
// many it removed.
func (s *Store) PurgeExpiredSessions() (int, error) {
	now := s.Now().Unix()
	n := 0
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSessions)
		var dead [][]byte
		var users []uint64
		err := b.ForEach(func(k, v []byte) error {
			var sess Session
			if err := jsonUnmarshal(v, &sess); err != nil || sess.ExpiresAt < now {
				dead = append(dead, append([]byte(nil), k...))
				users = append(users, sess.UserID)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i, k := range dead {
			if users[i] != 0 {
				_ = tx.Bucket(bucketIdxSessionsByUser).Delete(append(itob(users[i]), k...))
			}
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(dead)
		return nil
	})
	return n, Internal(err)
}
