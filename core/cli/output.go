package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// Outputs are the values of a command's -o/--output: empty prints tables or
// text, json and yaml one document.
var Outputs = []string{"", "json", "yaml"}

// OutputFlagType is the type -o/--output shows in help, and how a test
// knows the flag was declared with AddOutputFlag.
const OutputFlagType = "json|yaml"

// CheckOutput refuses an -o value no command prints.
func CheckOutput(output string) error {
	if !slices.Contains(Outputs, output) {
		return fmt.Errorf("unknown output format %q: want json or yaml (or none, for tables)", output)
	}
	return nil
}

// outputValue is -o/--output: one of Outputs, refused at parse time.
type outputValue struct {
	p *string
	// hint completes the error of a value that is no format, e.g. what a
	// file name was meant for.
	hint func(value string) string
}

func (v *outputValue) String() string { return *v.p }
func (v *outputValue) Type() string   { return OutputFlagType }

func (v *outputValue) Set(s string) error {
	if err := CheckOutput(s); err != nil {
		if v.hint != nil {
			if h := v.hint(s); h != "" {
				return fmt.Errorf("%w; %s", err, h)
			}
		}
		return err
	}
	*v.p = s
	return nil
}

// AddOutputFlag declares -o/--output, the one meaning every command gives
// it: the format of what the command prints, json or yaml, empty for
// tables or text. A value that is no format is refused when flags are
// parsed, with hint's advice when it has some (a command that once took a
// file name there says which flag takes it now). hint may be nil.
func AddOutputFlag(fs *pflag.FlagSet, p *string, what string, hint func(value string) string) {
	fs.VarP(&outputValue{p: p, hint: hint}, "output", "o", "output format: json or yaml ("+what+" as one document on stdout); empty prints text")
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
