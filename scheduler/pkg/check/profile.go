package check

import (
	"fmt"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/util/sets"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// extensionPoints are the extension points of a profile, by the name the
// framework gives their plugin type, in the framework's order, with the
// plugin set of each.
func extensionPoints(p *schedconfig.Plugins) []struct {
	name string
	set  *schedconfig.PluginSet
} {
	return []struct {
		name string
		set  *schedconfig.PluginSet
	}{
		{"PreFilterPlugin", &p.PreFilter},
		{"FilterPlugin", &p.Filter},
		{"PostFilterPlugin", &p.PostFilter},
		{"ReservePlugin", &p.Reserve},
		{"PreScorePlugin", &p.PreScore},
		{"ScorePlugin", &p.Score},
		{"PreBindPlugin", &p.PreBind},
		{"BindPlugin", &p.Bind},
		{"PostBindPlugin", &p.PostBind},
		{"PermitPlugin", &p.Permit},
		{"PreEnqueuePlugin", &p.PreEnqueue},
		{"QueueSortPlugin", &p.QueueSort},
		{"PlacementGeneratePlugin", &p.PlacementGenerate},
		{"PlacementScorePlugin", &p.PlacementScore},
	}
}

// Profile refuses what kube-scheduler's framework refuses when it builds
// profile's plugins, from what each plugin is known to implement
// (PluginExtensionPoints) rather than by building them: a plugin that does
// not exist, one enabled at an extension point it does not implement or
// twice, args given twice, a profile without exactly one queue sort plugin,
// without a bind plugin or with two placement generators, and score weights
// that could overflow. TestCheckRefusesWhatTheFrameworkRefuses (in the
// plugins package, which builds them) holds the two to the same verdicts.
func Profile(profile *schedconfig.KubeSchedulerProfile) error {
	configured := sets.New[string]()
	for _, pc := range profile.PluginConfig {
		if configured.Has(pc.Name) {
			return fmt.Errorf("repeated config for plugin %s", pc.Name)
		}
		configured.Insert(pc.Name)
	}
	if profile.Plugins == nil {
		return nil
	}
	implements := func(plugin, point string) bool { return slices.Contains(PluginExtensionPoints[plugin], point) }
	count := map[string]int{}
	points := extensionPoints(profile.Plugins)
	for _, e := range points {
		seen := sets.New[string]()
		for _, p := range e.set.Enabled {
			if _, ok := PluginExtensionPoints[p.Name]; !ok {
				return fmt.Errorf("%s %q does not exist", e.name, p.Name)
			}
			if !implements(p.Name, e.name) {
				return fmt.Errorf("plugin %q does not extend %s plugin", p.Name, e.name)
			}
			if seen.Has(p.Name) {
				return fmt.Errorf("plugin %q already registered as %q", p.Name, e.name)
			}
			seen.Insert(p.Name)
		}
		count[e.name] = len(e.set.Enabled)
	}
	if multi := profile.Plugins.MultiPoint.Enabled; len(multi) > 0 {
		for _, e := range points {
			disabled := sets.New[string]()
			for _, p := range e.set.Disabled {
				disabled.Insert(p.Name)
			}
			if disabled.Has("*") {
				continue
			}
			enabled := sets.New[string]()
			for _, p := range e.set.Enabled {
				enabled.Insert(p.Name)
			}
			expanded := sets.New[string]()
			for _, p := range multi {
				if _, ok := PluginExtensionPoints[p.Name]; !ok {
					return fmt.Errorf("%s %q does not exist", e.name, p.Name)
				}
				if !implements(p.Name, e.name) || disabled.Has(p.Name) || enabled.Has(p.Name) {
					continue
				}
				if expanded.Has(p.Name) {
					return fmt.Errorf("plugin %q already registered as %q", p.Name, e.name)
				}
				expanded.Insert(p.Name)
			}
			count[e.name] += expanded.Len()
		}
	}
	switch {
	case count["QueueSortPlugin"] != 1:
		return fmt.Errorf("only one queue sort plugin required for profile with scheduler name %q, but got %d",
			profile.SchedulerName, count["QueueSortPlugin"])
	case count["BindPlugin"] == 0:
		return fmt.Errorf("at least one bind plugin is needed for profile with scheduler name %q", profile.SchedulerName)
	case count["PlacementGeneratePlugin"] > 1:
		return fmt.Errorf("at most one placement generate plugin is allowed for profile with scheduler name %q", profile.SchedulerName)
	}
	for _, s := range []struct {
		point, what string
		enabled     []schedconfig.Plugin
	}{
		{"ScorePlugin", "score plugins", profile.Plugins.Score.Enabled},
		{"PlacementScorePlugin", "placement score plugins", profile.Plugins.PlacementScore.Enabled},
	} {
		if err := checkScoreWeights(append(slices.Clone(s.enabled), profile.Plugins.MultiPoint.Enabled...),
			func(name string) bool { return implements(name, s.point) }); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	return nil
}

// maxScore and maxTotalScore are the framework's bounds of one plugin's
// score and of a node's total (fwk.MaxScore, fwk.MaxTotalScore, held equal by
// the plugins package's tests): the framework package links CEL and the
// dynamic resource allocation libraries, which the check does without.
const (
	maxScore      int64 = 100
	maxTotalScore int64 = math.MaxInt64
)

// checkScoreWeights refuses weights whose sum could overflow the total
// score, as the framework does: a plugin's first weight counts, 0 counts 1.
func checkScoreWeights(plugins []schedconfig.Plugin, scores func(string) bool) error {
	weights := map[string]int64{}
	var total int64
	for _, p := range plugins {
		if _, ok := weights[p.Name]; ok || !scores(p.Name) {
			continue
		}
		w := int64(p.Weight)
		if w == 0 {
			w = 1
		}
		weights[p.Name] = w
		if w*maxScore > maxTotalScore-total {
			return fmt.Errorf("total score of Score plugins could overflow")
		}
		total += w * maxScore
	}
	return nil
}

// ScoreBounds are maxScore and maxTotalScore, for the test that holds them
// to the framework's.
func ScoreBounds() (int64, int64) { return maxScore, maxTotalScore }
