// Package storetest builds the account fixture of another package's tests:
// a data file made once per test binary and copied into every test's temp
// dir (PocketBase's NewTestApp). Creating an account costs a bcrypt hash
// each, so tests share the accounts but never a store.
package storetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"gateway/store"
)

// Fixture is a data file and the ids of its accounts by username.
type Fixture struct {
	Data []byte
	IDs  map[string]uint64
}

// Main runs a package's tests once build has made its fixture, hashing
// passwords at bcrypt's minimum cost: it keeps account-heavy tests fast,
// and the cost itself is not what they test.
func Main(m *testing.M, build func() error) {
	store.PasswordCost = bcrypt.MinCost
	if err := build(); err != nil {
		fmt.Fprintln(os.Stderr, "build fixture:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// Build makes a fixture: fill gets a new store in a temp dir named after
// prefix and records the accounts it creates in ids; root, which fill must
// have created, is added.
func Build(prefix string, fill func(st *store.Store, ids map[string]uint64) error) (Fixture, error) {
	dir, err := os.MkdirTemp("", prefix+"-fixture-")
	if err != nil {
		return Fixture{}, err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(filepath.Join(dir, "fixture.db"), store.Options{NoSync: true})
	if err != nil {
		return Fixture{}, err
	}
	defer st.Close()
	ids := map[string]uint64{}
	if err := fill(st, ids); err != nil {
		return Fixture{}, err
	}
	root, err := st.UserByUsername("root")
	if err != nil {
		return Fixture{}, err
	}
	ids["root"] = root.ID
	var buf bytes.Buffer
	if err := st.Backup(context.Background(), &buf, nil); err != nil {
		return Fixture{}, err
	}
	return Fixture{Data: buf.Bytes(), IDs: ids}, nil
}

// Open opens a private copy of the fixture's file, named name in tb's temp
// dir; closing it is the caller's.
func (f Fixture) Open(tb testing.TB, name string, opts store.Options) *store.Store {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, f.Data, 0o600); err != nil {
		tb.Fatal(err)
	}
	st, err := store.Open(path, opts)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	return st
}
