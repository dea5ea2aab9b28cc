package store

import (
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// fillUsers writes n accounts in large transactions, sharing one password
// hash (bcrypt per account would take minutes).
func fillUsers(tb testing.TB, s *Store, n int) {
	tb.Helper()
	hash, err := HashPassword("password1")
	if err != nil {
		tb.Fatal(err)
	}
	const chunk = 5000
	for done := 0; done < n; done += chunk {
		err := s.db.Update(func(tx *bolt.Tx) error {
			for i := done; i < done+chunk && i < n; i++ {
				id, _ := tx.Bucket(bucketUsers).NextSequence()
				u := &User{ID: id, Username: fmt.Sprintf("user%05d", i), DisplayName: fmt.Sprintf("User %d", i), PasswordHash: hash,
					Email: fmt.Sprintf("u%d@example.com", i), Role: RoleCommon, Status: UserStatusEnabled, Group: "default"}
				u.AffCode = newAffCode(tx)
				if err := putUser(tx, nil, u); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkUsersPage reads pages of the administrators' user list (10 a
// page, as the console asks) from 20 000 accounts.
func BenchmarkUsersPage(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "users.db"), Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const users = 20000
	fillUsers(b, s, users)
	for _, c := range []struct {
		name string
		f    UserFilter
	}{
		{"first", UserFilter{Limit: 10}},
		{"page1000", UserFilter{Offset: 10000, Limit: 10}},
		{"last", UserFilter{Offset: users - 10, Limit: 10}},
		{"search/none", UserFilter{Keyword: "zzz"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := s.Users(c.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
