package store

import (
	"bytes"
	"sync"

	bolt "go.etcd.io/bbolt"
)

// authCache keeps decoded tokens (by key) and users (by id) between
// committed changes, so authenticating a relay call or a console request
// reads no page of the file.
//
// Every committed write of a token or user record empties it (the writes go
// through putTokenRecord and putUserRecord, which register the reset on the
// transaction). The ledger's balance writes are the exception: the balance
// fields of a cached record are never served as stored, the live ones from
// memory replace them on every read. A read that began before a commit
// cannot refill the cache with what it saw: entries are only added while the
// generation the read started under is still current.
type authCache struct {
	mu       sync.Mutex
	gen      uint64
	tokens   map[string]Token
	tokenKey map[uint64]string // token id -> key, to find an entry by id
	users    map[uint64]User
}

// authCacheMax bounds each map; past it the cache starts over.
const authCacheMax = 100_000

// authCaches finds the cache of the store that owns a transaction's file.
var authCaches sync.Map // *bolt.DB -> *authCache

func newAuthCache(db *bolt.DB) *authCache {
	c := &authCache{tokens: map[string]Token{}, tokenKey: map[uint64]string{}, users: map[uint64]User{}}
	authCaches.Store(db, c)
	return c
}

// reset empties the cache and starts a new generation.
func (c *authCache) reset() {
	c.mu.Lock()
	c.gen++
	clear(c.tokens)
	clear(c.tokenKey)
	clear(c.users)
	c.mu.Unlock()
}

func (c *authCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *authCache) token(key string) (*Token, bool) {
	c.mu.Lock()
	t, ok := c.tokens[key]
	c.mu.Unlock()
	return &t, ok
}

func (c *authCache) putToken(gen uint64, key string, t *Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.tokens) >= authCacheMax {
		clear(c.tokens)
		clear(c.tokenKey)
	}
	c.tokens[key] = *t
	c.tokenKey[t.ID] = key
}

// touched records a token's access time written by the ledger, keeping the
// cached record equal to the stored one.
func (c *authCache) touched(id uint64, at int64) {
	c.mu.Lock()
	if key, ok := c.tokenKey[id]; ok {
		t := c.tokens[key]
		t.AccessedTime = at
		c.tokens[key] = t
	}
	c.mu.Unlock()
}

func (c *authCache) user(id uint64) (*User, bool) {
	c.mu.Lock()
	u, ok := c.users[id]
	c.mu.Unlock()
	if ok && u.AccessTokenHash != nil {
		u.AccessTokenHash = bytes.Clone(u.AccessTokenHash)
	}
	return &u, ok
}

func (c *authCache) putUser(gen uint64, u *User) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.users) >= authCacheMax {
		clear(c.users)
	}
	v := *u
	v.AccessTokenHash = bytes.Clone(u.AccessTokenHash)
	c.users[u.ID] = v
}

// invalidateAuth empties the cache of tx's store once tx commits.
func invalidateAuth(tx *bolt.Tx) {
	if v, ok := authCaches.Load(tx.DB()); ok {
		tx.OnCommit(v.(*authCache).reset)
	}
}

// putTokenRecord writes a token record; the change reaches cached readers
// once the transaction commits.
func putTokenRecord(tx *bolt.Tx, t *Token) error {
	invalidateAuth(tx)
	return putJSON(tx.Bucket(bucketTokens), itob(t.ID), t)
}

// putUserRecord writes a user record; the change reaches cached readers once
// the transaction commits.
func putUserRecord(tx *bolt.Tx, u *User) error {
	invalidateAuth(tx)
	return putJSON(tx.Bucket(bucketUsers), itob(u.ID), u)
}
