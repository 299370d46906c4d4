package cli

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/core/flagdoc"
)

// Reference writes the command reference of root as Markdown: one section
// per command a user can run, in the order `--help` lists them, with its
// description, its usage line and a table of its flags (default and
// meaning, as `--help` gives them). Flags every command inherits from root
// are listed once, under root. Hidden commands and flags, and cobra's own
// help and completion commands, are left out. The page is generated from
// the commands themselves, so that what it says of a flag is what the
// binary does.
func Reference(root *cobra.Command, intro string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# `%s` command reference\n\n", root.Name())
	b.WriteString(intro)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		writeCommand(&b, c, c == root)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return b.Bytes()
}

func writeCommand(b *bytes.Buffer, c *cobra.Command, root bool) {
	fmt.Fprintf(b, "\n## %s\n\n", c.CommandPath())
	if c.Short != "" {
		b.WriteString(strings.TrimSuffix(c.Short, ".") + ".\n\n")
	}
	// The long description is plain text laid out for a terminal: kept as
	// it is printed.
	if long := strings.Trim(c.Long, "\n"); long != "" {
		fmt.Fprintf(b, "```text\n%s\n```\n\n", long)
	}
	fmt.Fprintf(b, "```\n%s\n```\n", c.UseLine())
	if c.Example != "" {
		fmt.Fprintf(b, "\nExamples:\n\n```\n%s\n```\n", strings.Trim(c.Example, "\n"))
	}
	flags := c.NonInheritedFlags()
	if root {
		flags = c.Flags()
	} else {
		// A persistent flag of root is root's: listed there once.
		own := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
		flags.VisitAll(func(f *pflag.Flag) {
			if c.Root().PersistentFlags().Lookup(f.Name) == nil {
				own.AddFlag(f)
			}
		})
		flags = own
	}
	var rows []string
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		def := ""
		if v, ok := flagdoc.Default(f); ok {
			def = "`" + v + "`"
		}
		usage := f.Usage
		if f.Deprecated != "" {
			usage = "Deprecated: " + f.Deprecated
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s |", name, def, cell(usage)))
	})
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n| Flag | Default | Meaning |\n|---|---|---|\n")
	b.WriteString(strings.Join(rows, "\n"))
	b.WriteString("\n")
}

// cell makes text fit one Markdown table cell.
func cell(text string) string {
	text = strings.ReplaceAll(text, "|", "\\|")
	return strings.Join(strings.Fields(text), " ")
}
