package command

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildText(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs.revision", Value: "60d8398d530d0123456789abcdef"},
		{Key: "vcs.time", Value: "2026-11-29T09:01:06Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install @version", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: modulePath, Version: "v0.1.0"}},
			"pagoda v0.1.0 go1.26.8"},
		{"a clone with VCS stamping", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: modulePath, Version: "v0.0.0-20261129090106-60d8398d530d+dirty"}, Settings: vcs},
			"pagoda v0.0.0-20261129090106-60d8398d530d+dirty (commit 60d8398d530d, modified, 2026-11-29T09:01:06Z) go1.26.8"},
		{"a clone without", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: modulePath, Version: "(devel)"}},
			"pagoda (devel) go1.26.8"},
		{"another module's dependency", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v0.2.0"}}},
			"pagoda v0.2.0 go1.26.8"},
	} {
		if got := buildText(&tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestVersion: pagoda --version and pagoda version print the same line, of
// this test binary's build.
func TestVersion(t *testing.T) {
	flag := mustRun(t, "--version")
	cmd := mustRun(t, "version")
	if flag != cmd || !strings.HasPrefix(flag, "pagoda ") || strings.Count(flag, "\n") != 1 {
		t.Errorf("--version %q, version %q", flag, cmd)
	}
	if _, _, err := run(t, "version", "x"); err == nil {
		t.Error("version with an argument: no error")
	}
}
