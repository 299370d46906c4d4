// Package startup describes what a component's process starts with — its
// arguments, its environment and the files mounted into its container — so
// that a component can run its own start-up checks on a configuration that
// is not deployed yet (a rendered chart) exactly as it would at start,
// without a cluster.
package startup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/leaderelection"
)

// Container is what one container of a rendered workload starts with.
type Container struct {
	// Workload names where the container comes from, for messages
	// (Deployment/ballast-scheduler).
	Workload string
	// LongRunning is true when the workload restarts the process whenever
	// it exits (a Deployment): a run that ends by itself is a crash loop.
	LongRunning bool
	// Args are the container's arguments, with $(VAR) references to its
	// environment expanded as the kubelet does.
	Args []string
	// Env is the container's environment. A variable the kubelet fills in
	// at run time (the downward API) holds an example value of its kind.
	Env map[string]string
	// Files are the files mounted from ConfigMaps, by their path in the
	// container. Files from Secrets are not known before the install and
	// are absent.
	Files map[string][]byte
}

// LookupEnv reads the container's environment like os.LookupEnv.
func (c Container) LookupEnv(name string) (string, bool) {
	v, ok := c.Env[name]
	return v, ok
}

// Root holds a container's files written to a temporary directory, for
// libraries that read a configuration by path.
type Root struct {
	dir   string
	files map[string]bool
}

// WriteFiles writes c.Files under a new temporary directory; Close removes it.
func (c Container) WriteFiles() (*Root, error) {
	dir, err := os.MkdirTemp("", "ballast-startup-")
	if err != nil {
		return nil, fmt.Errorf("creating a directory for the files of %s: %w", c.Workload, err)
	}
	r := &Root{dir: dir, files: map[string]bool{}}
	paths := make([]string, 0, len(c.Files))
	for p := range c.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		host := r.host(p)
		if err := os.MkdirAll(filepath.Dir(host), 0o700); err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("writing %s of %s: %w", p, c.Workload, err)
		}
		if err := os.WriteFile(host, c.Files[p], 0o600); err != nil {
			_ = r.Close()
			return nil, fmt.Errorf("writing %s of %s: %w", p, c.Workload, err)
		}
		r.files[p] = true
	}
	return r, nil
}

// Path returns where the container's file p is (or, when the container has
// no such file, would be) under the root; never a file of the host.
func (r *Root) Path(p string) string { return r.host(p) }

// Has reports whether the container has the file p.
func (r *Root) Has(p string) bool { return r.files[p] }

// Untie replaces the root's directory in err's text by the container's
// paths, so a component's message names the file as the container sees it.
func (r *Root) Untie(err error) error {
	if err == nil || !strings.Contains(err.Error(), r.dir) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), r.dir, ""))
}

func (r *Root) host(p string) string {
	return filepath.Join(r.dir, filepath.FromSlash(strings.TrimPrefix(p, "/")))
}

// Close removes the files.
func (r *Root) Close() error { return os.RemoveAll(r.dir) }

// Flag is a flag of a component's command that its check parses without
// owning it: an upstream command's flag, or one bound to process-wide state
// (logging verbosity, version printing), which a check must not change.
type Flag struct {
	Name, Shorthand string
	// Type is the pflag value's type name (bool, duration, int32, ...).
	Type string
	// NoOptDefVal is the value the flag takes when given without one
	// ("true" for a bool).
	NoOptDefVal string
	// DefValue is the flag's value when it is not given.
	DefValue string
}

// FlagsOf lists the flags of fs, by name.
func FlagsOf(fs *pflag.FlagSet) []Flag {
	var flags []Flag
	fs.VisitAll(func(f *pflag.Flag) {
		flags = append(flags, Flag{Name: f.Name, Shorthand: f.Shorthand, Type: f.Value.Type(), NoOptDefVal: f.NoOptDefVal, DefValue: f.DefValue})
	})
	return flags
}

// AddStandIns adds to fs a stand-in for every flag of flags that fs lacks:
// it holds the flag's default, accepts what a flag of its type would and sets
// nothing else.
func AddStandIns(fs *pflag.FlagSet, flags []Flag) {
	for _, f := range flags {
		if fs.Lookup(f.Name) == nil {
			fs.AddFlag(&pflag.Flag{Name: f.Name, Shorthand: f.Shorthand, Usage: "(checked for its type only)",
				Value: &standIn{typ: f.Type, v: f.DefValue}, DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal})
		}
	}
}

// standIn is a flag value that checks its text against its type only.
type standIn struct{ typ, v string }

func (s *standIn) String() string { return s.v }
func (s *standIn) Type() string   { return s.typ }
func (s *standIn) Set(v string) error {
	var err error
	switch typ := strings.ToLower(s.typ); {
	case s.typ == "Level":
		// component-base's verbosity: unsigned, as int32 for klog.
		_, err = strconv.ParseUint(v, 10, 31)
	case typ == "bool":
		_, err = strconv.ParseBool(v)
	case typ == "duration":
		_, err = time.ParseDuration(v)
	case strings.HasPrefix(typ, "int"), strings.HasSuffix(typ, "level"):
		_, err = strconv.ParseInt(v, 10, 32)
	case strings.HasPrefix(typ, "uint"):
		_, err = strconv.ParseUint(v, 10, 32)
	case strings.HasPrefix(typ, "float"):
		_, err = strconv.ParseFloat(v, 64)
	}
	s.v = v
	return err
}

// CheckLeaderElector refuses what client-go's leader elector refuses when a
// component starts it, beyond what the configuration's validation checks:
// a renew deadline not longer than the retry period with its jitter.
func CheckLeaderElector(path *field.Path, renewDeadline, retryPeriod time.Duration) *field.Error {
	if renewDeadline <= time.Duration(leaderelection.JitterFactor*float64(retryPeriod)) {
		return field.Invalid(path.Child("renewDeadline"), renewDeadline.String(),
			fmt.Sprintf("must be longer than %v × retryPeriod (%v): the leader elector refuses it at start", leaderelection.JitterFactor, retryPeriod))
	}
	return nil
}

// WithFiles writes c's files, runs check on them and removes them; an error
// names files as the container sees them.
func (c Container) WithFiles(check func(*Root) error) error {
	root, err := c.WriteFiles()
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	return root.Untie(check(root))
}

// Verdict compares what a check returned with what a test wanted: want
// empty means accepted, else an error whose text holds want. It returns
// what is wrong, or nil.
func Verdict(err error, want string) error {
	switch {
	case want == "" && err != nil:
		return fmt.Errorf("refused: %w", err)
	case want != "" && err == nil:
		return fmt.Errorf("accepted; want an error naming %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		return fmt.Errorf("refused without naming %q: %w", want, err)
	}
	return nil
}
