package command

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pagodadb/pagoda/cmd/internal/serve"

	"github.com/pagodadb/pagoda"
	"github.com/pagodadb/pagoda/fsys"
)

// The tests serve in-process, as pagoda-fs-serve does;
// TestServeCommand in cmd/pagoda runs pagoda fs serve as a process.
func init() { Serve = serve.Run }

var fsHandler = serve.Handler

// TestFSServeMaxRequests: with two slots, two GETs whose bodies the client
// leaves unread hold them, and a third request waits until one of them
// goes.
func TestFSServeMaxRequests(t *testing.T) {
	db := bombArchive(t)
	pdb, err := pagoda.Open(db, &pagoda.Options{ReadOnly: true, Timeout: lockWait})
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	srv := httptest.NewServer(fsHandler(fsys.New(pdb, nil), 2, log.New(io.Discard, "", 0)))
	defer srv.Close()
	client := srv.Client()
	var held []io.ReadCloser
	defer func() {
		for _, b := range held {
			b.Close()
		}
	}()
	for range 2 {
		resp, err := client.Get(srv.URL + "/bomb")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, resp.Body)
		if _, err := io.ReadFull(resp.Body, make([]byte, 1)); err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET /bomb: %d, %v", resp.StatusCode, err)
		}
	}
	type result struct {
		code int
		body string
		err  error
	}
	third := make(chan result, 1)
	go func() {
		resp, err := client.Get(srv.URL + "/ok.txt")
		if err != nil {
			third <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		third <- result{resp.StatusCode, string(b), err}
	}()
	// However slow the machine, a third request served now is a bug.
	select {
	case r := <-third:
		t.Fatalf("a third request was served while two held both slots: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
	held[0].Close() // the client goes; its handler ends, freeing its slot
	held = held[1:]
	select {
	case r := <-third:
		if r.err != nil || r.code != http.StatusOK || r.body != "ok\n" {
			t.Errorf("the third request: %+v", r)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the third request was not served after a slot was freed")
	}
}
