// Package defaultstest finds what a shipped configuration restates of its
// plugins' defaults, so that a default has one home (the scheme) and a
// shipped file states only choices. The scheduler's profiles and the
// descheduler's policy are held to it by their tests.
package defaultstest

import (
	"sort"
)

// RedundantKeys deletes each key of m in turn (m lies inside a document the
// caller decodes), asks same whether the decoded, defaulted configuration
// stayed the same, and puts the key back. It returns the keys, as paths
// below prefix, whose deletion changed nothing: they only restate a
// default. It descends into the maps of the keys that matter, so a key is
// reported at the highest level that restates a default.
func RedundantKeys(m map[string]any, prefix string, same func() bool) []string {
	var found []string
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		delete(m, k)
		redundant := same()
		m[k] = v
		if redundant {
			found = append(found, prefix+"."+k)
			continue
		}
		if child, ok := v.(map[string]any); ok {
			found = append(found, RedundantKeys(child, prefix+"."+k, same)...)
		}
	}
	return found
}
