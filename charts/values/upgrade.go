package values

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"

	"sigs.k8s.io/yaml"
)

// Overlay returns the values an upgrade installs: the values of the previous
// install with this run's values on top, merged key by key the way Helm
// merges a values file over another (maps merge, anything else is replaced,
// and a null removes the key). Neither argument is modified.
func Overlay(previous, now map[string]any) map[string]any {
	out := make(map[string]any, len(previous)+len(now))
	for k, v := range previous {
		out[k] = v
	}
	for k, v := range now {
		if v == nil {
			delete(out, k)
			continue
		}
		nowMap, nowIsMap := v.(map[string]any)
		prevMap, prevIsMap := out[k].(map[string]any)
		if nowIsMap && prevIsMap {
			out[k] = Overlay(prevMap, nowMap)
			continue
		}
		out[k] = v
	}
	return out
}

// Change is one value that differs between two sets of values.
type Change struct {
	// Path is the dotted key, as --set spells it.
	Path string
	// Old and New are nil when the key is absent on that side.
	Old, New any
}

// Diff lists the leaf values that differ between old and new, by path.
// Lists are compared whole.
func Diff(old, new map[string]any) []Change {
	var out []Change
	diff("", old, new, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func diff(prefix string, old, new map[string]any, out *[]Change) {
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range new {
		keys[k] = true
	}
	for k := range keys {
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		o, n := old[k], new[k]
		om, oIsMap := o.(map[string]any)
		nm, nIsMap := n.(map[string]any)
		switch {
		case oIsMap && nIsMap:
			diff(path, om, nm, out)
		case oIsMap && n == nil:
			diff(path, om, nil, out)
		case nIsMap && o == nil:
			diff(path, nil, nm, out)
		case !reflect.DeepEqual(normalise(o), normalise(n)):
			*out = append(*out, Change{Path: path, Old: o, New: n})
		}
	}
}

// normalise makes values read back from YAML (float64 numbers) comparable
// with values parsed from --set (int64 numbers).
func normalise(v any) any {
	data, err := yaml.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := yaml.Unmarshal(data, &out); err != nil {
		return v
	}
	return out
}

// WriteDiff prints changes one per line: "+ path: new" for a value set now,
// "- path: old" for one no longer set, "~ path: old → new" for one changed.
func WriteDiff(w io.Writer, changes []Change) {
	for _, c := range changes {
		switch {
		case c.Old == nil:
			fmt.Fprintf(w, "  + %s: %s\n", c.Path, inline(c.New))
		case c.New == nil:
			fmt.Fprintf(w, "  - %s: %s\n", c.Path, inline(c.Old))
		default:
			fmt.Fprintf(w, "  ~ %s: %s → %s\n", c.Path, inline(c.Old), inline(c.New))
		}
	}
}

// inline renders a value on one line: strings as they are, anything else
// as JSON.
func inline(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// Lookup returns the value at path (one key per level) in vals, nil when a
// key on the way is missing or not a map.
func Lookup(vals map[string]any, path ...string) any {
	var cur any = vals
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}
