package pagoda_test

import (
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/pagodadb/pagoda"
)

// TestOpenLocked: a second writable Open of a file this process holds
// waits Options.Timeout and fails with ErrLocked; after Close it opens.
func TestOpenLocked(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("two DBs of one process exclude each other only with Linux's OFD locks")
	}
	path := filepath.Join(t.TempDir(), "l.db")
	db, err := pagoda.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := pagoda.Open(path, &pagoda.Options{Timeout: 100 * time.Millisecond}); !errors.Is(err, pagoda.ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("gave up after %v, before the timeout", took)
	}
	if _, err := pagoda.Open(path, &pagoda.Options{ReadOnly: true}); !errors.Is(err, pagoda.ErrLocked) {
		t.Fatalf("read-only Open beside a writer: %v, want ErrLocked", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = pagoda.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}
