package ballast

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/installation"
)

// kind says what a command does with an installed Ballast, and so which
// flags it must have.
type kind int

const (
	// other: reads no installation (version, sim).
	other kind = iota
	// group: only groups subcommands.
	group
	// reads: reads or renders a release: --ballast-namespace and --release-name.
	reads
	// writes: installs or removes one: --dry-run as well.
	writes
)

// commands is every command of the tree and what it does; a command added
// to the tree must be added here, and so be held to the conventions.
var commands = map[string]kind{
	"ballast":              group,
	"ballast install":      writes,
	"ballast uninstall":    writes,
	"ballast kubeconfig":   reads,
	"ballast render":       reads,
	"ballast status":       reads,
	"ballast explain":      group,
	"ballast explain pod":  reads,
	"ballast explain node": reads,
	"ballast sim":          other,
	"ballast version":      other,
}

func walk(c *cobra.Command, visit func(*cobra.Command)) {
	visit(c)
	for _, sub := range c.Commands() {
		walk(sub, visit)
	}
}

// lookup finds a flag of c, its own or inherited (parents' persistent
// flags, and anything registered on pflag.CommandLine, which cobra gives
// every command).
func lookup(c *cobra.Command, name string) *pflag.Flag {
	if f := c.Flags().Lookup(name); f != nil {
		return f
	}
	return c.InheritedFlags().Lookup(name)
}

// TestFlagsFollowTheConventions holds every command's flags to the
// conventions of kubectl and helm that Ballast keeps:
//   - -n/--namespace is the namespace of the object the command names;
//     where a command names no namespaced object it may only be the
//     deprecated, hidden alias of --ballast-namespace;
//   - --ballast-namespace and --release-name wherever a release is read or
//     written, --dry-run wherever one is written;
//   - -o/--output is a format, json or yaml, everywhere;
//   - --version is the root's alone, and no upstream flag leaks in.
func TestFlagsFollowTheConventions(t *testing.T) {
	root := NewCommand(log.New(io.Discard), cli.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	pflag.CommandLine.VisitAll(func(f *pflag.Flag) {
		t.Errorf("--%s is registered on pflag.CommandLine by a linked library: cobra gives it to every command", f.Name)
	})
	seen := map[string]bool{}
	walk(root, func(c *cobra.Command) {
		path := c.CommandPath()
		if c.Name() == "help" || c.Name() == "completion" {
			return
		}
		seen[path] = true
		k, known := commands[path]
		if !known {
			t.Errorf("%s: not in the table of commands: add it, with what it does", path)
			return
		}
		if c.DisableFlagParsing {
			// Its flags are its plugin's (ballast sim).
			return
		}
		if c != root && lookup(c, "version") != nil {
			t.Errorf("%s: has --version, which only the root has (`ballast version` prints it)", path)
		}
		checkNamespace(t, c, k)
		checkOutput(t, c)
		for _, name := range []string{installation.BallastNamespaceFlag, installation.ReleaseNameFlag} {
			if f := lookup(c, name); (f != nil) != (k == reads || k == writes) && k != group {
				t.Errorf("%s: --%s present: %t; want it where a release is read or written, only there", path, name, f != nil)
			}
		}
		switch f := lookup(c, installation.DryRunFlag); {
		case k == writes && f == nil:
			t.Errorf("%s: writes, and has no --%s", path, installation.DryRunFlag)
		case f != nil && f.Value.Type() != "bool":
			t.Errorf("%s: --%s is a %s, want a bool", path, installation.DryRunFlag, f.Value.Type())
		}
		if k == group {
			if err := c.Args(c, []string{"nosuch"}); err == nil {
				t.Errorf("%s: groups subcommands, and accepts an unknown one", path)
			}
		}
	})
	for path := range commands {
		if !seen[path] {
			t.Errorf("%s: in the table, not in the tree", path)
		}
	}
}

func checkNamespace(t *testing.T, c *cobra.Command, k kind) {
	t.Helper()
	path := c.CommandPath()
	if f := c.Flags().ShorthandLookup("n"); f != nil && f.Name != installation.NamespaceFlag {
		t.Errorf("%s: -n is --%s, want --%s", path, f.Name, installation.NamespaceFlag)
	}
	f := lookup(c, installation.NamespaceFlag)
	if f == nil {
		return
	}
	if f.Shorthand != "n" {
		t.Errorf("%s: --%s has no -n", path, f.Name)
	}
	_, object := f.Annotations[installation.ObjectNamespaceAnnotation]
	switch {
	case object:
		// The object is named by an argument, as in kubectl.
		if !strings.Contains(c.Use, "NAME") {
			t.Errorf("%s: -n names the namespace of an object, and the command names none (%q)", path, c.Use)
		}
		if len(f.Annotations[cli.DeprecatedAnnotation]) > 0 || f.Hidden {
			t.Errorf("%s: -n names the object's namespace, and is deprecated or hidden", path)
		}
	case len(f.Annotations[cli.DeprecatedAnnotation]) > 0 && f.Hidden:
		// The alias of --ballast-namespace: kept for scripts, hidden, and it
		// says what to use.
		if instead := f.Annotations[cli.DeprecatedAnnotation][0]; !strings.Contains(instead, "--"+installation.BallastNamespaceFlag) {
			t.Errorf("%s: deprecated -n does not point at --%s: %q", path, installation.BallastNamespaceFlag, instead)
		}
		if k != reads && k != writes {
			t.Errorf("%s: -n is an alias of --%s, and the command reads no release", path, installation.BallastNamespaceFlag)
		}
	default:
		t.Errorf("%s: -n/--namespace is neither the namespace of the object named (installation.AddObjectNamespaceFlag) "+
			"nor the deprecated alias of --%s", path, installation.BallastNamespaceFlag)
	}
}

func checkOutput(t *testing.T, c *cobra.Command) {
	t.Helper()
	path := c.CommandPath()
	if f := c.Flags().ShorthandLookup("o"); f != nil && f.Name != "output" {
		t.Errorf("%s: -o is --%s, want --output", path, f.Name)
	}
	f := lookup(c, "output")
	if f == nil {
		return
	}
	if f.Shorthand != "o" || f.Value.Type() != cli.OutputFlagType {
		t.Errorf("%s: --output (-%s, %s) is not the format flag cli.AddOutputFlag declares", path, f.Shorthand, f.Value.Type())
		return
	}
	for _, v := range []string{"json", "yaml"} {
		if err := f.Value.Set(v); err != nil {
			t.Errorf("%s: -o %s refused: %v", path, v, err)
		}
	}
	for _, v := range []string{"xml", "wide", "out.kubeconfig"} {
		if err := f.Value.Set(v); err == nil {
			t.Errorf("%s: -o %s accepted; -o is json or yaml", path, v)
		}
	}
	if !slices.Contains(strings.Fields(strings.NewReplacer(",", " ", ":", " ").Replace(f.Usage)), "json") {
		t.Errorf("%s: -o's help does not say json or yaml: %q", path, f.Usage)
	}
	_ = f.Value.Set("")
}
