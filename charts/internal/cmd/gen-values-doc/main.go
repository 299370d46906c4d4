// Command gen-values-doc writes docs/values.md from the comments in the chart's values.yaml.
//
//	go run ./internal/cmd/gen-values-doc ballast/values.yaml ../docs/values.md
package main

import (
	"fmt"
	"os"

	"github.com/ballast-sched/ballast/charts/internal/valuesdoc"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gen-values-doc:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: gen-values-doc <values.yaml> <output.md>")
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	entries, undocumented, err := valuesdoc.Parse(data)
	if err != nil {
		return err
	}
	if len(undocumented) > 0 {
		return fmt.Errorf("values without a \"# --\" comment: %v", undocumented)
	}
	return os.WriteFile(args[1], []byte(valuesdoc.Markdown(entries)), 0o644)
}
