package startup

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestFilesAreWrittenAndNamedAsTheContainerSeesThem(t *testing.T) {
	c := Container{Workload: "Deployment/x", Files: map[string][]byte{"/etc/x/config.yaml": []byte("a: 1")}}
	var dir string
	err := c.WithFiles(func(r *Root) error {
		dir = r.dir
		data, err := os.ReadFile(r.Path("/etc/x/config.yaml"))
		if err != nil || string(data) != "a: 1" {
			t.Errorf("read %q, %v", data, err)
		}
		if !r.Has("/etc/x/config.yaml") || r.Has("/etc/x/other.yaml") {
			t.Error("Has is wrong")
		}
		_, err = os.ReadFile(r.Path("/etc/x/other.yaml"))
		return err
	})
	if err == nil || strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "/etc/x/other.yaml") {
		t.Errorf("error %v: want the container's path, not %s", err, dir)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("files left behind in %s", dir)
	}
}

func TestStandInsCheckTypesAndSetNothing(t *testing.T) {
	level := 0
	from := pflag.NewFlagSet("component", pflag.ContinueOnError)
	from.IntVarP(&level, "v", "v", 0, "verbosity")
	from.Duration("period", time.Second, "")
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	fs.Duration("period", time.Second, "")
	AddStandIns(fs, FlagsOf(from))
	if err := fs.Parse([]string{"-v=4", "--period=2s"}); err != nil || level != 0 {
		t.Fatalf("parse: %v; level %d, want untouched 0", err, level)
	}
	if err := fs.Parse([]string{"-v=loud"}); err == nil {
		t.Fatal("a verbosity that is no number was accepted")
	}
}

func TestLeaderElectorJitter(t *testing.T) {
	p := field.NewPath("leaderElection")
	if err := CheckLeaderElector(p, 10*time.Second, 2*time.Second); err != nil {
		t.Errorf("defaults refused: %v", err)
	}
	if err := CheckLeaderElector(p, 10*time.Second, 9*time.Second); err == nil || !strings.Contains(err.Error(), "renewDeadline") {
		t.Errorf("renew deadline under 1.2 × retry period: %v", err)
	}
}

func TestVerdict(t *testing.T) {
	refused := errors.New("period: must be positive")
	for _, tc := range []struct {
		err  error
		want string
		ok   bool
	}{{nil, "", true}, {refused, "period", true}, {refused, "", false}, {nil, "period", false}, {refused, "windows", false}} {
		if got := Verdict(tc.err, tc.want); (got == nil) != tc.ok {
			t.Errorf("Verdict(%v, %q) = %v", tc.err, tc.want, got)
		}
	}
}
