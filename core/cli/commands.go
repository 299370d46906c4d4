package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/core/cli/log"
)

// SuggestionsMinimumDistance is how far (Levenshtein) a mistyped command may
// be from one it is taken for; cobra's own default.
const SuggestionsMinimumDistance = 2

// RequireSubcommand makes c, a command that only groups subcommands, fail
// when called without one, and suggest the nearest when given one it does
// not know (`ballast instal` → install), as kubectl does. cobra suggests
// only for a command without Args, which would accept any argument.
func RequireSubcommand(c *cobra.Command) {
	c.SuggestionsMinimumDistance = SuggestionsMinimumDistance
	c.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return fmt.Errorf("%s (see %s --help)", msg, c.CommandPath())
	}
	if c.RunE == nil && c.Run == nil {
		c.RunE = func(c *cobra.Command, _ []string) error { return MissingSubcommand(c) }
	}
}

// MissingSubcommand prints c's help and says a subcommand is needed.
func MissingSubcommand(c *cobra.Command) error {
	_ = c.Help()
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && sub.Name() != "completion" {
			names = append(names, sub.Name())
		}
	}
	return fmt.Errorf("%s needs a subcommand: one of %s", c.CommandPath(), strings.Join(names, ", "))
}

// DeprecatedAnnotation holds, on a flag, what to use instead of it.
const DeprecatedAnnotation = "ballast.deprecated"

// DeprecateFlag hides the flag name of fs and has WarnDeprecatedFlags say
// what to use instead when it is given. Unlike pflag's MarkDeprecated, whose
// warning cobra prints to the command's output (stdout here, which `ballast
// render > out.yaml` keeps clean), the warning goes to the log.
func DeprecateFlag(fs *pflag.FlagSet, name, instead string) {
	_ = fs.MarkHidden(name)
	_ = fs.SetAnnotation(name, DeprecatedAnnotation, []string{instead})
}

// WarnDeprecatedFlags warns of every deprecated flag given to c; the root
// calls it before any command runs.
func WarnDeprecatedFlags(logger *log.Logger, c *cobra.Command) {
	c.Flags().Visit(func(f *pflag.Flag) {
		if instead := f.Annotations[DeprecatedAnnotation]; len(instead) > 0 {
			name := "--" + f.Name
			if f.Shorthand != "" {
				name = "-" + f.Shorthand + "/" + name
			}
			logger.Warnf("%s is deprecated: %s", name, instead[0])
		}
	})
}
