// Package flagdoc holds a component's flag table in the docs to the flags
// the component really has, so that a page never names a flag that is gone,
// misses one that was added, or states a default the code does not have.
// Each component's options test runs it on its own page.
//
// A table row is a Markdown table line whose first cell starts with a flag
// in backquotes: "| `--period` | `15s` | Time between rounds. |". The
// second cell, when the table has a Default column, is the default: one
// value in backquotes is compared with the flag's; anything else (prose
// such as "3 × `--period`", or nothing) stands for a default the code
// computes, and the flag's own must then be its type's zero value.
package flagdoc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Row is one documented flag.
type Row struct {
	// Name is the flag's name without dashes.
	Name string
	// DefaultColumn tells whether the row's table has a Default column;
	// Default is its value when it is one value in backquotes, and
	// HasDefault tells whether it is.
	DefaultColumn bool
	Default       string
	HasDefault    bool
	// Line is the row's line in the page, from 1.
	Line int
}

var (
	flagCell = regexp.MustCompile("^`--([a-z0-9][a-z0-9-]*)(?: [^`]*)?`")
	oneValue = regexp.MustCompile("^`([^`]*)`$")
)

// Rows reads the flag rows of every table of page. A table has a Default
// column when its header's second cell says so.
func Rows(page []byte) []Row {
	var rows []Row
	withDefault := false
	sc := bufio.NewScanner(bytes.NewReader(page))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		cells := cellsOf(sc.Text())
		if cells == nil {
			withDefault = false
			continue
		}
		m := flagCell.FindStringSubmatch(cells[0])
		if m == nil {
			if len(cells) > 1 && strings.EqualFold(cells[0], "flag") {
				withDefault = strings.EqualFold(cells[1], "default")
			}
			continue
		}
		r := Row{Name: m[1], Line: line, DefaultColumn: withDefault}
		if withDefault && len(cells) > 1 {
			if v := oneValue.FindStringSubmatch(cells[1]); v != nil {
				r.Default, r.HasDefault = v[1], true
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// cellsOf splits a Markdown table line into its trimmed cells, or returns
// nil for a line that is no table row. An escaped bar (\|) stays in its
// cell.
func cellsOf(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") {
		return nil
	}
	var cells []string
	var cell strings.Builder
	for i := 1; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	if rest := strings.TrimSpace(cell.String()); rest != "" {
		cells = append(cells, rest)
	}
	return cells
}

// Compare holds page's flag rows to fs and returns what disagrees, one
// sentence each, in the page's order and then the flag set's: a row for a
// flag fs does not have, a flag of fs without a row (hidden flags and those
// named in undocumented excepted), and a default that is not the flag's.
// A documented flag must be in fs even if it is in undocumented. A table
// without a Default column is held to its flags' names only.
func Compare(page []byte, fs *pflag.FlagSet, undocumented ...string) []string {
	var problems []string
	documented := map[string]bool{}
	for _, r := range Rows(page) {
		if documented[r.Name] {
			problems = append(problems, fmt.Sprintf("line %d: --%s has a second row", r.Line, r.Name))
			continue
		}
		documented[r.Name] = true
		f := fs.Lookup(r.Name)
		if f == nil {
			problems = append(problems, fmt.Sprintf("line %d: --%s is documented but the command has no such flag", r.Line, r.Name))
			continue
		}
		got, stated := Default(f)
		switch {
		case r.HasDefault && !sameDefault(f, r.Default):
			problems = append(problems, fmt.Sprintf("line %d: --%s: the page says the default is %q, the flag's is %q", r.Line, r.Name, r.Default, got))
		case r.DefaultColumn && !r.HasDefault && stated:
			problems = append(problems, fmt.Sprintf("line %d: --%s: the page states no default in backquotes, the flag's is %q", r.Line, r.Name, got))
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !documented[f.Name] && !f.Hidden && !slices.Contains(undocumented, f.Name) {
			problems = append(problems, fmt.Sprintf("--%s has no row in the page", f.Name))
		}
	})
	return problems
}

// sameDefault reports whether documented is the flag's default: a
// duration may be written as a user would ("90s" for pflag's "1m30s").
func sameDefault(f *pflag.Flag, documented string) bool {
	if f.Value.Type() == "duration" {
		want, err1 := time.ParseDuration(documented)
		got, err2 := time.ParseDuration(f.DefValue)
		return err1 == nil && err2 == nil && want == got
	}
	got, _ := Default(f)
	return documented == got
}

// Default returns f's default as a user would type it (a list without
// pflag's brackets), and false when it is its type's zero value: the
// default of a flag that is off unless set, or whose real default the
// command works out itself.
func Default(f *pflag.Flag) (string, bool) {
	v := f.DefValue
	if t := f.Value.Type(); strings.HasSuffix(t, "Slice") || strings.HasSuffix(t, "Array") {
		v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	}
	switch v {
	case "", "0", "0s", "false", "map[]":
		return v, false
	}
	return v, true
}

// TB is what Check needs of a *testing.T; the package does not import
// testing, so that the CLI, which uses Default, does not link it.
type TB interface {
	Helper()
	Fatal(args ...any)
	Errorf(format string, args ...any)
}

// Check is Compare for a component's test: it reads the page at path
// (relative to the test's package) and fails t with each disagreement.
func Check(t TB, path string, fs *pflag.FlagSet, undocumented ...string) {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Compare(page, fs, undocumented...) {
		t.Errorf("%s: %s", filepath.Base(path), p)
	}
}
