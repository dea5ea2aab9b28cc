package store_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every write transaction goes through Store.update: the check after a
// failed commit is right only while no other writer can commit between
// the failure and the check. Open's bucket creation, before anything else
// can write, and Compact's writes to its new copy, which no store has
// open, are the exceptions.
func TestEveryWriteGoesThroughUpdate(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	direct := regexp.MustCompile(`\.(Update|Batch)\(|Begin\(true\)`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if !direct.MatchString(line) || strings.Contains(line, "s.commitTx = db.Update") {
				continue
			}
			if f == "store.go" && strings.Contains(line, "if err := db.Update(func(tx *bolt.Tx) error {") {
				continue // Open, before the store is shared
			}
			if f == "compact.go" && strings.Contains(line, "ddb.Update(") {
				continue // the compacted copy, a file no store has open
			}
			t.Errorf("%s:%d writes outside Store.update: %s", f, i+1, strings.TrimSpace(line))
		}
	}
}
