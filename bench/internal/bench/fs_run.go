package bench

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// FSTreeResult is a tree of the fs workloads as the report shows it.
type FSTreeResult struct {
	FSTreeInfo
	// Skipped says why the tree's workloads were skipped (the real tree is
	// missing); "" when they ran.
	Skipped string
	// Archive is the archive pagoda's fsys wrote (zero when only os ran).
	Archive Archive
	// SQLite3Archive is the archive `sqlite3 -Ac .` made, for the
	// pagoda-sqlite3 peer (zero when it did not run).
	SQLite3Archive Archive
}

// fsArchiveBuilder builds the archives of Run; the tests replace it to
// run without pagoda's fsys.
var fsArchiveBuilder = BuildArchive

// selectFSPeers returns the fs peers among peers, in FSPeerNames order;
// nil peers means all of them.
func selectFSPeers(peers []string) []string {
	if peers == nil {
		return slices.Clone(FSPeerNames)
	}
	var out []string
	for _, name := range FSPeerNames {
		if slices.Contains(peers, name) {
			out = append(out, name)
		}
	}
	return out
}

// loadFSTree returns the tree called name under cfg.Dir (gen and blob,
// generated and cached there) or at o.SrcDir (gosrc).
func loadFSTree(cfg *Config, name string, o FSOptions) (*FSTree, error) {
	switch name {
	case TreeGen:
		return GenTree(cfg.Dir, o)
	case TreeBlob:
		return BlobTree(cfg.Dir, o)
	}
	return SrcTree(o.SrcDir)
}

// runFS measures the fs workloads with peers, tree after tree: it loads
// (or generates) the tree, imports it into an archive in dir with
// pagoda's fsys, then for each round and each peer opens the peer,
// verifies it against the tree, measures the tree's workloads and closes
// it; the archive is removed before the next tree. A missing real tree
// makes its workloads skipped, not the run fail.
func runFS(cfg *Config, dir string, workloads []FSWorkload, peers []string, rep *Report) error {
	o := cfg.FS.withDefaults()
	benchtime := o.Benchtime
	if benchtime <= 0 {
		benchtime = cfg.Benchtime
	}
	restore, err := setBenchtime(benchtime)
	if err != nil {
		return err
	}
	defer restore()
	samples := map[[2]string][]FSResult{}
	skipped := map[string]bool{}
	for _, tree := range fsTrees {
		var ws []FSWorkload
		for _, w := range workloads {
			if w.Tree == tree {
				ws = append(ws, w)
			}
		}
		if len(ws) == 0 {
			continue
		}
		t, err := loadFSTree(cfg, tree, o)
		if err != nil {
			if tree != TreeGoSrc {
				return err
			}
			src := o.SrcDir
			if src == "" {
				src = "$(go env GOROOT)/src"
			}
			cfg.progress("fs: %s skipped: %v", tree, err)
			skipped[tree] = true
			rep.FSTrees = append(rep.FSTrees, FSTreeResult{FSTreeInfo: FSTreeInfo{Name: tree, Source: src}, Skipped: err.Error()})
			continue
		}
		how := "scanned"
		if t.Built {
			how = "generated in " + t.BuildTime.Round(time.Millisecond).String()
		} else if t.Name != TreeGoSrc {
			how = "cached"
		}
		cfg.progress("fs: tree %s: %s files, %s directories, %s in %s (%s)", tree, group(int64(t.Files)), group(int64(t.Dirs)), mb(t.Bytes), t.Dir, how)
		tr := FSTreeResult{FSTreeInfo: t.FSTreeInfo}
		archive := ""
		if slices.ContainsFunc(peers, func(p string) bool { return p != osPeer && p != walkDirPeer }) {
			archive = filepath.Join(dir, "fs-"+tree+".db")
			a, err := fsArchiveBuilder(t, archive)
			if err != nil {
				removeArchive(archive)
				return err
			}
			tr.Archive = *a
			cfg.progress("fs: archive of %s: %s, imported in %s", tree, mb(a.Size), a.ImportTime.Round(time.Millisecond))
			if slices.Contains(peers, sqlite3Peer) {
				a, err := BuildSQLite3Archive(t, sqlite3Archive(archive))
				if err != nil {
					removeArchive(archive)
					removeArchive(sqlite3Archive(archive))
					return err
				}
				tr.SQLite3Archive = *a
				cfg.progress("fs: sqlite3's archive of %s: %s, made in %s", tree, mb(a.Size), a.ImportTime.Round(time.Millisecond))
			}
		}
		err = measureFSPeers(cfg, t, archive, ws, peers, samples)
		if archive != "" {
			for _, file := range []string{archive, sqlite3Archive(archive)} {
				if rerr := removeArchive(file); err == nil && rerr != nil {
					err = fmt.Errorf("bench: %w", rerr)
				}
			}
		}
		if err != nil {
			return err
		}
		rep.FSTrees = append(rep.FSTrees, tr)
	}
	for _, w := range workloads {
		for _, name := range peers {
			if skipped[w.Tree] {
				rep.FS = append(rep.FS, FSResult{Workload: w.Name, Tree: w.Tree, Peer: name, Skipped: true})
				continue
			}
			rep.FS = append(rep.FS, medianFS(samples[[2]string{w.Name, name}]))
		}
	}
	return nil
}

// measureFSPeers measures the workloads ws of tree t with each peer,
// cfg.Count times over, adding the results to samples.
func measureFSPeers(cfg *Config, t *FSTree, archive string, ws []FSWorkload, peers []string, samples map[[2]string][]FSResult) error {
	for round := 1; round <= cfg.Count; round++ {
		for _, name := range peers {
			if name == walkDirPeer && !slices.ContainsFunc(ws, func(w FSWorkload) bool { return w.Kind == fsWalk }) {
				// Nothing to walk on this tree: no need to list it.
				for _, w := range ws {
					k := [2]string{w.Name, name}
					samples[k] = append(samples[k], skippedFS(w, name))
				}
				continue
			}
			cfg.progress("%sfs: measuring %s on %s ...", cfg.round(round), name, t.Name)
			p, err := OpenFSPeer(name, t, archive, cfg.PeerOptions)
			if err != nil {
				return fmt.Errorf("bench: %s: open %s: %w", name, t.Name, err)
			}
			results, err := measureFS(p, t, ws)
			if cerr := p.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("bench: %s: close: %w", name, cerr)
			}
			if err != nil {
				return err
			}
			for _, res := range results {
				k := [2]string{res.Workload, res.Peer}
				samples[k] = append(samples[k], res)
			}
		}
	}
	return nil
}
