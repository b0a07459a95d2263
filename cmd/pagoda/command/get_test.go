package command

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/pagodadb/pagoda"
)

func TestGet(t *testing.T) {
	path, sdb := fixture(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"all_types", "1"}, "[null,null,null,null,null]\n"},
		{[]string{"all_types", "3"}, "[0.1,1e+300,0.1,\"\",{\"blob\":\"\"}]\n"},
		{[]string{"ipk", "--", "-3"}, "[-3,\"minus three\"]\n"},
		{[]string{"ipk", "9223372036854775807"}, "[9223372036854775807,\"max\"]\n"},
		{[]string{"wr", "b"}, "[\"b\",2,2.5]\n"},
		{[]string{"wr", "a"}, "[\"a\",1,1.0]\n"},
		{[]string{"wi", "--", "-1"}, "[-1,{\"blob\":\"ff\"}]\n"},
		{[]string{"b", "alpha"}, "first value\n"},
		{[]string{"b", "beta"}, "\x00\x01\x02\x03\n"},
		{[]string{"b", ""}, "\n"},
		{[]string{"b", "--hex", "00"}, "7a65726f\n"},
		{[]string{"b", "--hex", "62657461"}, "00010203\n"},
		{[]string{"b", "--hex", ""}, "\n"},
	} {
		got := mustRun(t, append([]string{"get", path}, tc.args...)...)
		if got != tc.want {
			t.Errorf("get %s: got %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}

	// Every row of all_types: get prints what scan --json prints.
	lines := strings.SplitAfter(mustRun(t, "scan", path, "all_types", "--json"), "\n")
	for i, row := range sqliteRows(t, sdb, "SELECT rowid FROM all_types ORDER BY rowid") {
		rowid := row[0].(int64)
		if got := mustRun(t, "get", path, "all_types", "--", strconv.FormatInt(rowid, 10)); got != lines[i] {
			t.Errorf("get all_types %d = %q, scan has %q", rowid, got, lines[i])
		}
	}
}

func TestGetNotFound(t *testing.T) {
	path, _ := fixture(t)
	for _, args := range [][]string{
		{"ipk", "2"}, {"b", "gamma"}, {"b", "--hex", "ff"}, {"wr", "d"}, {"wi", "8"}, {"wi", "--", "-2"},
	} {
		out, _, err := run(t, append([]string{"get", path}, args...)...)
		if !errors.Is(err, pagoda.ErrNotFound) || out != "" {
			t.Errorf("get %v: out %q, err %v; want ErrNotFound", args, out, err)
		}
		if want := args[0] + ": key " + strconv.Quote(args[len(args)-1]) + " not found"; err == nil || err.Error() != want {
			t.Errorf("get %v: error %q, want %q", args, err, want)
		}
	}
}
