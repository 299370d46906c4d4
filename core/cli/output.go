package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"sigs.k8s.io/yaml"
)

// Outputs are the values of a command's -o/--output: empty prints tables,
// json and yaml one document.
var Outputs = []string{"", "json", "yaml"}

// CheckOutput refuses an -o value no command prints.
func CheckOutput(output string) error {
	if !slices.Contains(Outputs, output) {
		return fmt.Errorf("unknown output format %q: want json or yaml (or none, for tables)", output)
	}
	return nil
}

// WriteDocument prints v as one json or yaml document, indented as kubectl
// indents its own.
func WriteDocument(w io.Writer, v any, output string) error {
	var (
		doc []byte
		err error
	)
	switch output {
	case "json":
		if doc, err = json.MarshalIndent(v, "", "    "); err == nil {
			doc = append(doc, '\n')
		}
	case "yaml":
		doc, err = yaml.Marshal(v)
	default:
		return fmt.Errorf("unknown output format %q", output)
	}
	if err != nil {
		return fmt.Errorf("encode as %s: %w", output, err)
	}
	_, err = w.Write(doc)
	return err
}
