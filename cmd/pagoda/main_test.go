package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLinksNoNet: the pagoda command links neither package net nor
// text/template (see cmd/pagoda/internal/cli): with cgo, net would make
// the binary dynamically linked and every command a millisecond slower to
// start, and a reachable template execution keeps every exported method
// in the binary. pagoda-fs-serve links net/http, as it must.
func TestLinksNoNet(t *testing.T) {
	goCmd := goCommand(t)
	for pkg, want := range map[string]bool{"github.com/pagodadb/pagoda/cmd/pagoda": false, "github.com/pagodadb/pagoda/cmd/pagoda-fs-serve": true} {
		out, err := exec.Command(goCmd, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := map[string]bool{}
		for _, p := range strings.Fields(string(out)) {
			deps[p] = true
		}
		for _, p := range []string{"net", "net/http", "text/template", "os/user"} {
			if deps[p] && (!want || p == "text/template" || p == "os/user") {
				t.Errorf("%s links %s", pkg, p)
			}
		}
		if want && !deps["net/http"] {
			t.Errorf("%s does not link net/http: does it serve?", pkg)
		}
	}
}

func goCommand(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goCmd); err != nil {
			t.Skipf("no go command: %v", err)
		}
	}
	return goCmd
}

// build builds the packages pkgs into dir.
func build(t *testing.T, dir string, pkgs ...string) {
	t.Helper()
	args := append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)
	cmd := exec.Command(goCommand(t), args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // pagoda-fs-serve links net: no C compiler needed
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestServeCommand: pagoda fs serve runs pagoda-fs-serve from beside
// pagoda, which serves the archive until SIGTERM; without it, fs serve
// says how to install it.
func TestServeCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("fs serve replaces the process (exec), which Windows cannot")
	}
	dir := t.TempDir()
	build(t, dir, "github.com/pagodadb/pagoda/cmd/pagoda", "github.com/pagodadb/pagoda/cmd/pagoda-fs-serve")
	pagoda := filepath.Join(dir, "pagoda")
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(filepath.Join(tree, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "sub", "hello.txt"), []byte("hello, archive\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "site.db")
	if out, err := exec.Command(pagoda, "fs", "add", db, tree).CombinedOutput(); err != nil {
		t.Fatalf("pagoda fs add: %v\n%s", err, out)
	}

	cmd := exec.Command(pagoda, "fs", "serve", db, "--addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	prefix := "serving " + db + " at "
	if err != nil || !strings.HasPrefix(line, prefix) {
		t.Fatalf("fs serve printed %q (%v); stderr %q", line, err, stderr.String())
	}
	url := strings.TrimSpace(strings.TrimPrefix(line, prefix))
	resp, err := http.Get(url + "sub/hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || string(body) != "hello, archive\n" {
		t.Errorf("GET sub/hello.txt: %d %q %v", resp.StatusCode, body, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("fs serve after SIGTERM: %v; stderr %q", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("fs serve did not stop on SIGTERM")
	}

	// Without pagoda-fs-serve beside it or in the PATH.
	if err := os.Remove(filepath.Join(dir, "pagoda-fs-serve")); err != nil {
		t.Fatal(err)
	}
	missing := exec.Command(pagoda, "fs", "serve", db)
	missing.Env = append(os.Environ(), "PATH="+t.TempDir())
	out, err := missing.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "go install github.com/pagodadb/pagoda/cmd/pagoda-fs-serve@latest") {
		t.Errorf("fs serve without pagoda-fs-serve: %v, %q", err, out)
	}
}
