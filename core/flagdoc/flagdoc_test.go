package flagdoc

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestCompare(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Duration("period", 15*time.Second, "")
	fs.Duration("resync", 90*time.Second, "")
	fs.StringSlice("windows", []string{"1m", "5m"}, "")
	fs.Duration("stale-after", 0, "")
	fs.String("kubeconfig", "", "")
	fs.Int("speed", 1, "")
	fs.Bool("version", false, "")
	fs.String("secret", "", "")
	if err := fs.MarkHidden("secret"); err != nil {
		t.Fatal(err)
	}
	fs.String("forgotten", "", "")
	fs.Int("wrong", 3, "")
	fs.Int("computed", 7, "")

	page := "# Flags\n\n" +
		"| Flag | Default | Meaning |\n" +
		"|---|---|---|\n" +
		"| `--period` | `15s` | Time between rounds. |\n" + // 5: right
		"| `--resync` | `90s` | A duration as a user writes it. |\n" + // 6: pflag says 1m30s
		"| `--windows` | `1m,5m` | Windows. |\n" + // 7: a list, without brackets
		"| `--stale-after` | 3 × `--period` | Computed. |\n" + // 8: prose, zero default
		"| `--kubeconfig` | in-cluster | Where. |\n" + // 9
		"| `--wrong` | `4` | Off by one. |\n" + // 10
		"| `--computed` | twice the speed | Prose, but the flag has 7. |\n" + // 11
		"| `--gone` | `x` | Removed. |\n" + // 12
		"| `--period` | `15s` | Again. |\n" + // 13
		"\nText with a | bar.\n\n" +
		"| Flag | Meaning |\n" +
		"|---|---|\n" +
		"| `--speed N` | No default column: names only. |\n"
	got := Compare([]byte(page), fs, "version")
	want := []string{
		`line 10: --wrong: the page says the default is "4", the flag's is "3"`,
		`line 11: --computed: the page states no default in backquotes, the flag's is "7"`,
		`line 12: --gone is documented but the command has no such flag`,
		`line 13: --period has a second row`,
		`--forgotten has no row in the page`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compare (-want +got):\n%s", diff)
	}
}

func TestCellsKeepEscapedBars(t *testing.T) {
	got := cellsOf("| `--scheduler ballast\\|default` | the scheduler |")
	want := []string{"`--scheduler ballast|default`", "the scheduler"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cellsOf (-want +got):\n%s", diff)
	}
	if cellsOf("not | a row") != nil {
		t.Error("a line that does not start with a bar was read as a row")
	}
}

// recorder is a TB that keeps what Check reports.
type recorder struct{ fatal, errors []string }

func (r *recorder) Helper()           {}
func (r *recorder) Fatal(args ...any) { r.fatal = append(r.fatal, fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestCheckReadsThePageAndReportsEachProblem(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "tool.md")
	if err := os.WriteFile(page, []byte("| Flag | Default | Meaning |\n|---|---|---|\n| `--period` | `20s` | Rounds. |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Duration("period", 15*time.Second, "")
	fs.String("kubeconfig", "", "")
	var r recorder
	Check(&r, page, fs)
	want := []string{
		`tool.md: line 3: --period: the page says the default is "20s", the flag's is "15s"`,
		`tool.md: --kubeconfig has no row in the page`,
	}
	if diff := cmp.Diff(want, r.errors); diff != "" || len(r.fatal) != 0 {
		t.Errorf("Check reported (-want +got):\n%s\nfatal: %v", diff, r.fatal)
	}
	Check(&r, filepath.Join(dir, "missing.md"), fs)
	if len(r.fatal) != 1 {
		t.Errorf("a missing page: fatal %v, want one", r.fatal)
	}
}
