// Package defaultstest finds what a shipped configuration restates of its
// plugins' defaults, so that a default has one home (the scheme) and a
// shipped file states only choices. The scheduler's profiles and the
// descheduler's policy are held to it by their tests.
package defaultstest

import (
	"fmt"
	"sort"
)

// RedundantPluginArgs walks the plugin args of a scheduler configuration or
// descheduler policy parsed into doc: every entry of every profile's
// pluginConfig, the profile named by its profileName key ("schedulerName"
// in a scheduler configuration, "name" in a descheduler policy). same(id)
// must decode doc as it is now and report whether the args of id
// ("<profile>/<plugin>") equal those of the whole file. It returns, sorted,
// the keys that only restate a default, as
// "profiles[<profile>].pluginConfig[<plugin>].args.<key>".
func RedundantPluginArgs(doc map[string]any, profileName string, same func(id string) bool) []string {
	var found []string
	profiles, _ := doc["profiles"].([]any)
	for _, p := range profiles {
		profile, _ := p.(map[string]any)
		entries, _ := profile["pluginConfig"].([]any)
		for _, e := range entries {
			entry, _ := e.(map[string]any)
			args, ok := entry["args"].(map[string]any)
			if !ok {
				continue
			}
			id := fmt.Sprintf("%v/%v", profile[profileName], entry["name"])
			prefix := fmt.Sprintf("profiles[%v].pluginConfig[%v].args", profile[profileName], entry["name"])
			found = append(found, RedundantKeys(args, prefix, func() bool { return same(id) })...)
		}
	}
	sort.Strings(found)
	return found
}

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
