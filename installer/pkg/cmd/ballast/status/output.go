package status

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/installer/pkg/health"
)

// outputs are the values of -o: tables, or one document in json or yaml.
var outputs = []string{"", "json", "yaml"}

// write prints r as tables, or as one json or yaml document (indented as
// kubectl indents its own).
func write(w io.Writer, r health.Report, output string) error {
	var (
		doc []byte
		err error
	)
	switch output {
	case "":
		return r.Print(w)
	case "json":
		if doc, err = json.MarshalIndent(r.Status(), "", "    "); err == nil {
			doc = append(doc, '\n')
		}
	case "yaml":
		doc, err = yaml.Marshal(r.Status())
	default:
		return fmt.Errorf("unknown output format %q", output)
	}
	if err != nil {
		return fmt.Errorf("encode the status as %s: %w", output, err)
	}
	_, err = w.Write(doc)
	return err
}
