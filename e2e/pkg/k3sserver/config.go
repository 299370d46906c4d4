package k3sserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ConfigArgs reads k3s's configuration file and its drop-ins as k3s does
// when it starts (k3s's pkg/configfilearg): file, when it exists, then every
// *.yaml and *.yml of file.d in name order. A key names a flag; a later file
// replaces an earlier value, unless the key ends in "+", which appends to it.
// Each value becomes "--key=value" (a list, one per item), keys in the order
// they first appear. It returns nil when neither file nor drop-ins exist.
func ConfigArgs(file string) ([]string, error) {
	files, err := dropIns(file)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(file); err == nil {
		files = append([]string{file}, files...)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading k3s's configuration: %w", err)
	}
	var (
		order  []string
		values = map[string][]string{}
	)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading k3s's configuration: %w", err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if len(doc.Content) == 0 {
			continue
		}
		m := doc.Content[0]
		if m.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: not a map of flags", f)
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			key, appendTo := strings.CutSuffix(m.Content[i].Value, "+")
			vals, err := scalars(m.Content[i+1])
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", f, key, err)
			}
			if _, seen := values[key]; !seen {
				order = append(order, key)
			}
			if appendTo {
				values[key] = append(values[key], vals...)
			} else {
				values[key] = vals
			}
		}
	}
	var args []string
	for _, k := range order {
		prefix := "--"
		if len(k) == 1 {
			prefix = "-"
		}
		for _, v := range values[k] {
			args = append(args, prefix+k+"="+v)
		}
	}
	return args, nil
}

// dropIns lists file.d's YAML files in name order.
func dropIns(file string) ([]string, error) {
	entries, err := os.ReadDir(file + ".d")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading k3s's configuration drop-ins: %w", err)
	}
	var out []string
	for _, e := range entries {
		name := strings.ToLower(e.Name())
		if e.IsDir() || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			continue
		}
		out = append(out, filepath.Join(file+".d", e.Name()))
	}
	slices.Sort(out)
	return out, nil
}

// scalars is a flag's value: one scalar, or a list of them.
func scalars(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return []string{n.Value}, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, errors.New("a list of lists or maps is no flag value")
			}
			out = append(out, c.Value)
		}
		return out, nil
	}
	return nil, errors.New("a map is no flag value")
}

// ComponentArgs merges a component's default arguments with the extra ones
// given by --<component>-arg, as k3s does (k3s's util.GetArgs): an extra
// "name=value" replaces the default of name, "name+=value" appends to it and
// "name-=value" goes before it; a name given several times keeps every
// value. The result is sorted by name, values of one name in order.
func ComponentArgs(defaults map[string]string, extra []string) []string {
	initial := make(map[string]string, len(defaults))
	for k, v := range defaults {
		initial[k] = v
	}
	multi := map[string][]string{}
	for _, e := range extra {
		name, value, ok := strings.Cut(strings.TrimPrefix(e, "--"), "=")
		if !ok {
			value = "true"
		}
		clean := strings.TrimRight(name, "+-")
		def, hasDef := initial[clean]
		prev := multi[clean]
		var vals []string
		switch {
		case strings.HasSuffix(name, "+"):
			if hasDef {
				vals = append(vals, def)
			}
			vals = append(append(vals, prev...), value)
		case strings.HasSuffix(name, "-"):
			vals = append(vals, value)
			if hasDef {
				vals = append(vals, def)
			}
			vals = append(vals, prev...)
		default:
			vals = append(slices.Clone(prev), value)
		}
		delete(initial, clean)
		multi[clean] = vals
	}
	for k, v := range initial {
		multi[k] = []string{v}
	}
	names := make([]string, 0, len(multi))
	for k := range multi {
		names = append(names, k)
	}
	slices.Sort(names)
	var args []string
	for _, k := range names {
		for _, v := range multi[k] {
			args = append(args, "--"+k+"="+v)
		}
	}
	return args
}

// NodeArgs is the k3s.io/node-args annotation k3s writes on its Node: its
// arguments (command, then the configuration's, then the command line's),
// each "--flag=value" split in two, as a JSON list.
func NodeArgs(args []string) (string, error) {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "--") && strings.Contains(a, "=") {
			k, v, _ := strings.Cut(a, "=")
			out = append(out, k, v)
			continue
		}
		out = append(out, a)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encoding the node's arguments: %w", err)
	}
	return string(raw), nil
}
