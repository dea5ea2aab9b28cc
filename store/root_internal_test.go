package store

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
)

// README: "a password root chose is never replaced" by --root-password. A
// start given one then says so, so that an operator who changed the
// variable to rotate root's password does not take it for done.
func TestRootPasswordKeptIsLogged(t *testing.T) {
	var out lockedBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&out, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	s, err := Open(filepath.Join(t.TempDir(), "root.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.EnsureRootWith("first-pass-99"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "ignored") {
		t.Fatalf("the first start logged the password as ignored:\n%s", out.String())
	}
	if _, err := s.EnsureRootWith(""); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "ignored") {
		t.Fatalf("a start without --root-password logged it as ignored:\n%s", out.String())
	}
	// The same password again, as a service's environment gives it at every start: nothing to say.
	if _, err := s.EnsureRootWith("first-pass-99"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "ignored") {
		t.Fatalf("a start with root's own password logged it as ignored:\n%s", out.String())
	}
	if _, err := s.EnsureRootWith("second-pass-99"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "--root-password is ignored") {
		t.Fatalf("a --root-password that replaces nothing was not logged:\n%s", out.String())
	}
}
