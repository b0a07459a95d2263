package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// tree builds: root (--mode persistent, -v) with "get FILE KEY" (--hex,
// --limit N, -l/--long, --from `K`) and a group "fs" holding "ls PATH"
// (-R, -l). Each run records the command that ran and its arguments.
type tree struct {
	root           *Command
	ran            string
	args           []string
	mode, from     string
	hex, long, rec bool
	lsLong         bool
	limit          int64
	n              int
	version        *bool
}

func newTree() *tree {
	t := &tree{}
	run := func(cmd *Command, args []string) error {
		t.ran, t.args = cmd.CommandPath(), args
		return nil
	}
	t.root = &Command{Use: "pagoda", Short: "the tool", RunE: run}
	t.root.PersistentFlags().StringVar(&t.mode, "mode", "default", "a `MODE`")
	t.version = t.root.Flags().BoolP("version", "v", false, "print the version")
	get := &Command{Use: "get FILE KEY", Short: "get one", Args: ExactArgs(2), RunE: run}
	get.Flags().BoolVar(&t.hex, "hex", false, "hex keys")
	get.Flags().Int64Var(&t.limit, "limit", 0, "at most `N`")
	get.Flags().IntVar(&t.n, "n", 7, "a number")
	get.Flags().BoolVarP(&t.long, "long", "l", false, "long")
	get.Flags().StringVar(&t.from, "from", "", "start at `K`")
	fs := &Command{Use: "fs", Short: "the filesystem"}
	ls := &Command{Use: "ls FILE [PATH]", Short: "list", Args: RangeArgs(1, 2), RunE: run}
	ls.Flags().BoolVarP(&t.rec, "recursive", "R", false, "recurse")
	ls.Flags().BoolVarP(&t.lsLong, "long", "l", false, "long")
	fs.AddCommand(ls)
	t.root.AddCommand(get, fs)
	return t
}

func (t *tree) exec(args ...string) (out string, err error) {
	var o bytes.Buffer
	t.root.SetArgs(args)
	t.root.SetOut(&o)
	t.root.SetErr(&o)
	err = t.root.Execute()
	return o.String(), err
}

// TestExecute: which command runs, with which arguments and flags, for
// GNU-style command lines.
func TestExecute(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		ran   string
		pos   []string
		check func(tr *tree) bool
	}{
		{[]string{"get", "f", "k"}, "pagoda get", []string{"f", "k"}, nil},
		{[]string{"get", "f", "--hex", "k"}, "pagoda get", []string{"f", "k"}, func(tr *tree) bool { return tr.hex }},
		{[]string{"get", "--hex=true", "f", "k"}, "pagoda get", []string{"f", "k"}, func(tr *tree) bool { return tr.hex }},
		{[]string{"get", "--hex=false", "f", "k"}, "pagoda get", []string{"f", "k"}, func(tr *tree) bool { return !tr.hex }},
		{[]string{"get", "f", "k", "--limit", "5"}, "pagoda get", []string{"f", "k"}, func(tr *tree) bool { return tr.limit == 5 }},
		{[]string{"get", "f", "k", "--limit=-5"}, "pagoda get", []string{"f", "k"}, func(tr *tree) bool { return tr.limit == -5 }},
		{[]string{"get", "--from", "-5", "f", "k"}, "pagoda get", []string{"f", "k"}, func(tr *tree) bool { return tr.from == "-5" }},
		{[]string{"get", "--from", "--hex", "f", "k"}, "pagoda get", []string{"f", "k"}, func(tr *tree) bool {
			get := tr.root.commands[0].Flags()
			return tr.from == "--hex" && !tr.hex && get.Changed("from") && !get.Changed("hex")
		}},
		{[]string{"get", "f", "-3"}, "pagoda get", []string{"f", "-3"}, nil}, // a negative number is an argument
		{[]string{"get", "f", "-2.5e-3", "-l"}, "pagoda get", []string{"f", "-2.5e-3"}, func(tr *tree) bool { return tr.long }},
		{[]string{"get", "-l", "f", "k"}, "pagoda get", []string{"f", "k"}, func(tr *tree) bool { return tr.long }},
		{[]string{"get", "--", "--hex", "-l"}, "pagoda get", []string{"--hex", "-l"}, func(tr *tree) bool { return !tr.hex && !tr.long }},
		{[]string{"get", "f", "-"}, "pagoda get", []string{"f", "-"}, nil},
		{[]string{"--mode", "wal", "get", "f", "k"}, "pagoda get", []string{"f", "k"}, func(tr *tree) bool { return tr.mode == "wal" }},
		{[]string{"get", "f", "k", "--mode=delete"}, "pagoda get", []string{"f", "k"}, func(tr *tree) bool { return tr.mode == "delete" }},
		{[]string{"get", "f", "k"}, "pagoda get", []string{"f", "k"}, func(tr *tree) bool { return tr.mode == "default" && tr.n == 7 }},
		{[]string{"fs", "ls", "f"}, "pagoda fs ls", []string{"f"}, nil},
		{[]string{"fs", "ls", "-lR", "f", "p"}, "pagoda fs ls", []string{"f", "p"}, func(tr *tree) bool { return tr.rec && tr.lsLong }},
		{[]string{"fs", "--mode", "x", "ls", "f"}, "pagoda fs ls", []string{"f"}, func(tr *tree) bool { return tr.mode == "x" }},
		{[]string{"-v"}, "pagoda", nil, func(tr *tree) bool { return *tr.version }},
		{[]string{"--version"}, "pagoda", nil, func(tr *tree) bool { return *tr.version }},
		{[]string{"fs", "ls", "get"}, "pagoda fs ls", []string{"get"}, nil}, // past the group, a name is an argument
	} {
		tr := newTree()
		if _, err := tr.exec(tc.args...); err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if tr.ran != tc.ran || strings.Join(tr.args, "|") != strings.Join(tc.pos, "|") {
			t.Errorf("%q ran %q with %q, want %q with %q", tc.args, tr.ran, tr.args, tc.ran, tc.pos)
		}
		if tc.check != nil && !tc.check(tr) {
			t.Errorf("%q: flags %+v", tc.args, *tr)
		}
	}
}

// TestErrors: what a bad command line returns, in cobra's and pflag's
// words (scripts and tests match them).
func TestErrors(t *testing.T) {
	var flagErrs []error
	for _, tc := range []struct {
		args    []string
		want    string
		flagErr bool
	}{
		{[]string{"get", "f"}, "accepts 2 arg(s), received 1", false},
		{[]string{"fs", "ls"}, "accepts between 1 and 2 arg(s), received 0", false},
		{[]string{"nosuch"}, `unknown command "nosuch" for "pagoda"`, false},
		{[]string{"fs", "nosuch"}, `unknown command "nosuch" for "pagoda fs"`, false},
		{[]string{"get", "f", "k", "--bogus"}, "unknown flag: --bogus", true},
		{[]string{"get", "f", "k", "-x"}, "unknown shorthand flag: 'x' in -x", true},
		{[]string{"get", "f", "k", "-lx"}, "unknown shorthand flag: 'x' in -lx", true},
		{[]string{"get", "f", "k", "--limit"}, "flag needs an argument: --limit", true},
		{[]string{"get", "f", "k", "--limit", "ten"}, `invalid argument "ten" for "--limit" flag: not an integer`, true},
		{[]string{"get", "f", "k", "--limit", "99999999999999999999"}, `invalid argument "99999999999999999999" for "--limit" flag: out of range`, true},
		{[]string{"get", "f", "k", "--hex=maybe"}, `invalid argument "maybe" for "--hex" flag: not a boolean (true or false)`, true},
		{[]string{"fs", "ls", "-R"}, "accepts between 1 and 2 arg(s), received 0", false},
		{[]string{"help", "nosuch"}, `unknown help topic "nosuch"`, false},
	} {
		tr := newTree()
		flagErrs = flagErrs[:0]
		tr.root.SetFlagErrorFunc(func(c *Command, err error) error {
			flagErrs = append(flagErrs, err)
			return err
		})
		_, err := tr.exec(tc.args...)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
		if (len(flagErrs) > 0) != tc.flagErr {
			t.Errorf("%q: through the flag error func: %v, want %v", tc.args, len(flagErrs) > 0, tc.flagErr)
		}
		if tr.ran != "" {
			t.Errorf("%q ran %s", tc.args, tr.ran)
		}
	}
}

// TestHelp: -h, --help and help print the command's help and run nothing;
// a group without RunE prints its help.
func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"get", "-h"}, []string{"get one", "Usage:\n  pagoda get FILE KEY [flags]\n", "  -l, --long ", "      --from K ", "      --limit N ", "      --n int ", "(default 7)", "  -h, --help ", "help for get", "Global Flags:\n      --mode MODE ", `(default "default")`}},
		{[]string{"get", "f", "k", "--help"}, []string{"Usage:\n  pagoda get FILE KEY [flags]\n"}},
		{[]string{"help", "get"}, []string{"Usage:\n  pagoda get FILE KEY [flags]\n"}},
		{[]string{"fs"}, []string{"the filesystem", "  pagoda fs [command]\n", "Available Commands:\n  ls  list\n", `Use "pagoda fs [command] --help"`}},
		{[]string{"help"}, []string{"Available Commands:\n  fs    the filesystem\n  get   get one\n  help  Help about any command\n", "  -v, --version "}},
	} {
		tr := newTree()
		out, err := tr.exec(tc.args...)
		if err != nil || tr.ran != "" {
			t.Errorf("%q: %v, ran %q", tc.args, err, tr.ran)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: help lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
	// The flags are sorted and their texts aligned.
	tr := newTree()
	out, _ := tr.exec("get", "-h")
	lines := strings.Split(out[strings.Index(out, "Flags:\n")+len("Flags:\n"):strings.Index(out, "\nGlobal")], "\n")
	col := -1
	for _, l := range lines {
		if l == "" {
			continue
		}
		name := strings.TrimLeft(l, " ")
		i := len(l) - len(name) + strings.Index(name, "   ")
		for i < len(l) && l[i] == ' ' {
			i++
		}
		if col >= 0 && i != col {
			t.Errorf("flag text at column %d, want %d:\n%s", i, col, out)
		}
		col = i
	}
}

func TestStreamsAndContext(t *testing.T) {
	root := &Command{Use: "r"}
	var got context.Context
	sub := &Command{Use: "s", RunE: func(cmd *Command, args []string) error {
		got = cmd.Context()
		_, err := cmd.OutOrStdout().Write([]byte("out"))
		cmd.ErrOrStderr().Write([]byte("err"))
		b := make([]byte, 2)
		cmd.InOrStdin().Read(b)
		cmd.OutOrStdout().Write(b)
		return err
	}}
	root.AddCommand(sub)
	var o, e bytes.Buffer
	root.SetOut(&o)
	root.SetErr(&e)
	root.SetIn(strings.NewReader("in"))
	root.SetArgs([]string{"s"})
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, 1)
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatal(err)
	}
	if o.String() != "outin" || e.String() != "err" || got.Value(key{}) != 1 {
		t.Errorf("out %q err %q ctx %v", o.String(), e.String(), got)
	}
}

func TestIsNegativeNumber(t *testing.T) {
	for s, want := range map[string]bool{"-3": true, "-0": true, "-2.5": true, "-1e9": true, "-1E+9": true, "-": false, "--": false, "-x": false, "-3x": false, "3": false, "-.5": false, "": false} {
		if isNegativeNumber(s) != want {
			t.Errorf("isNegativeNumber(%q) = %v", s, !want)
		}
	}
}

func TestRedefinedFlagPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	var fs FlagSet
	var a, b bool
	fs.BoolVar(&a, "x", false, "")
	fs.BoolVar(&b, "x", false, "")
}
