package startcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/charts"
)

// durationText is what a duration value of the chart looks like.
var durationText = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`)

// TestChartRefusesWhatComponentsRefuse is the property that keeps the
// chart's schema and template checks (what `helm install` users get) and
// the components' own start-up checks from drifting apart: for values made
// from every number, duration, duration list and enumerated string of the
// chart's values — zero, negative, fractional, huge, past the bounds,
// without a unit, of the wrong type, unknown — the chart refuses a value
// whenever a component would refuse the configuration it renders, and a
// value every component accepts renders. `ballast render` refuses it too,
// naming the values key.
func TestChartRefusesWhatComponentsRefuse(t *testing.T) {
	ctx := context.Background()
	c, err := charts.Load()
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(c.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	base := fingerprint(t, ctx, nil)
	cases := 0
	for _, l := range leaves(c.Values, nil) {
		node := schemaAt(schema, l.path)
		for _, v := range candidates(l.value, node, definitionAt(schema, l.path)) {
			key := strings.Join(l.path, ".")
			name := fmt.Sprintf("%s=%v", key, v)
			vals := set(l.path, v)
			cases++
			t.Run(name, func(t *testing.T) {
				_, _, chartErr := charts.Render(ctx, charts.RenderOptions{Values: vals})
				manifest, refusedByTemplate := renderWithoutSchema(t, ctx, vals)
				if refusedByTemplate != nil {
					// A rule of the chart's own (across components): it
					// refuses before any component could be asked.
					if chartErr == nil {
						t.Fatalf("rendering without the schema fails but with it passes: %v", refusedByTemplate)
					}
					return
				}
				refusals, err := Manifest(ctx, manifest, ReplaceDefault(vals))
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case len(refusals) > 0 && chartErr == nil:
					t.Errorf("the chart renders it, but %v", refusals[0])
				case len(refusals) == 0 && chartErr != nil && reaches(t, manifest, base):
					if why, ok := stricter[name]; ok {
						t.Logf("the chart refuses it on purpose: %s", why)
						return
					}
					t.Errorf("every component accepts what it renders, but the chart refuses it: %v", firstLine(chartErr))
				}
				if len(refusals) > 0 || chartErr != nil {
					_, _, err := Render(ctx, charts.RenderOptions{Values: vals})
					schemaPath := "'/" + strings.Join(l.path, "/")
					if err == nil || !(strings.Contains(err.Error(), key) || strings.Contains(err.Error(), schemaPath+"'") || strings.Contains(err.Error(), schemaPath+"/")) {
						t.Errorf("ballast render does not name %s: %v", key, err)
					}
				}
			})
		}
	}
	if cases < 100 {
		t.Fatalf("only %d cases made from the chart's values: the walk lost its way", cases)
	}
}

// TestChartRefusesUnknownKeys adds a key no one knows to global and to
// every section of the values that is not free-form, and expects the chart
// to refuse it, naming where.
func TestChartRefusesUnknownKeys(t *testing.T) {
	ctx := context.Background()
	c, err := charts.Load()
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(c.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	sections := 0
	for _, path := range sectionsOf(c.Values, nil) {
		node := schemaAt(schema, path)
		if node == nil || node["additionalProperties"] != false || node["patternProperties"] != nil {
			// A free-form map: labels, annotations, resources, selectors.
			if _, free := node["additionalProperties"].(map[string]any); free || node == nil || node["properties"] == nil {
				continue
			}
		}
		sections++
		p := append(append([]string(nil), path...), "schedulerMod")
		t.Run(strings.Join(p, "."), func(t *testing.T) {
			_, _, err := charts.Render(ctx, charts.RenderOptions{Values: set(p, "replaceDefault")})
			if err == nil || !strings.Contains(err.Error(), "schedulerMod") {
				t.Fatalf("unknown key accepted or not named: %v", err)
			}
		})
	}
	if sections < 10 {
		t.Fatalf("only %d sections found", sections)
	}
}

// candidates are the values tried for a leaf of the chart's values whose
// default is def and whose schema is node, a definition of the schema's
// when def names one: the values the API server, the kubelet or the
// components refuse, and the forms they take.
func candidates(def any, node map[string]any, definition string) []any {
	if enum, ok := node["enum"].([]any); ok {
		return append(append([]any(nil), enum...), "Bogus")
	}
	if c, ok := byDefinition[definition]; ok {
		return c
	}
	if items, ok := node["items"].(map[string]any); ok {
		if c, ok := byDefinition[strings.TrimPrefix(fmt.Sprint(items["$ref"]), "#/definitions/")+"[]"]; ok {
			return c
		}
	}
	switch d := def.(type) {
	case float64, int, int64:
		n := toFloat(d)
		return []any{0, -1, 0.5, 1, n * 2, 99, 100, 101, 1e9, "ten"}
	case string:
		if durationText.MatchString(d) {
			return []any{"0s", "-1s", "1ms", "1s", "90s", "10m", "100000h", "15", "5 minutes"}
		}
	case []any:
		if len(d) > 0 {
			if s, ok := d[0].(string); ok && durationText.MatchString(s) {
				return []any{[]any{"0s"}, []any{"1m", "1m"}, []any{"30s"}, []any{"1m"}, []any{"1m", "5m", "15m", "1h"}, []any{"5"}, []any{}}
			}
		}
	}
	return nil
}

// byDefinition are the candidates for a value of a schema definition (a
// list of them: name[]): image references, quantities, labels,
// annotations, object names, tolerations, spread constraints, affinity.
var byDefinition = map[string][]any{
	"imageTag":        {"v1.2.3-rc.1_linux", "1.0 beta", "v1 ", "-v1", "v1:2", strings.Repeat("a", 129)},
	"imageRepository": {"lab/load-watcher", "Load-Watcher", "load watcher", "load-watcher/", "a__b.c-d"},
	"quantity":        {"0", "-1", "1Mi", "0.5", 0.5, "1e3", "2Ti", "10 Mi", "1.2.3", "Mi", "1m"},
	"labels": {
		map[string]any{"my label": "x"}, map[string]any{"tier": "front end"}, map[string]any{"example.com/team": "lab"},
		map[string]any{"app.kubernetes.io/name": "x"}, map[string]any{"a/b/c": "x"}, map[string]any{"tier": strings.Repeat("a", 64)},
	},
	"annotations":  {map[string]any{"my note": "x"}, map[string]any{"example.com/note": "any text: at all"}},
	"dnsSubdomain": {"system-cluster-critical", "System Critical", "a_b", "lab.example"},
	"toleration[]": {
		[]any{map[string]any{"key": "a", "operator": "Equals", "value": "b"}},
		[]any{map[string]any{"operator": "Exists"}},
		[]any{map[string]any{"operator": "Equal", "value": "b"}},
		[]any{map[string]any{"key": "a", "operator": "Exists", "value": "b"}},
		[]any{map[string]any{"key": "a", "operator": "Exists", "effect": "NoSchedul"}},
		[]any{map[string]any{"key": "my key", "operator": "Exists"}},
		[]any{map[string]any{"key": "a", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}},
		[]any{map[string]any{"key": "a", "operator": "Lt", "value": "5"}},
		[]any{map[string]any{"key": "CriticalAddonsOnly", "operator": "Exists"}, map[string]any{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}},
	},
	"topologySpreadConstraint[]": {
		[]any{map[string]any{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}},
		[]any{map[string]any{"maxSkew": 0, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}},
		[]any{map[string]any{"maxSkew": 1, "whenUnsatisfiable": "ScheduleAnyway"}},
		[]any{map[string]any{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Never"}},
		[]any{map[string]any{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}},
		[]any{map[string]any{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": map[string]any{"matchLabels": map[string]any{"my app": "x"}}}},
	},
	"affinity": {
		map[string]any{"nodeAfinity": map[string]any{}},
		map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{}}}},
		map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{
			map[string]any{"matchExpressions": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}}}}}}}},
		map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{
			map[string]any{"matchExpressions": []any{map[string]any{"key": "kubernetes.io/arch", "operator": "Equals", "values": []any{"amd64"}}}}}}}},
		map[string]any{"podAntiAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{
			map[string]any{"weight": 101, "podAffinityTerm": map[string]any{"topologyKey": "kubernetes.io/hostname"}}}}},
		map[string]any{"podAntiAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{
			map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"app": "x"}}}}}},
	},
}

// definitionAt returns the name of the schema definition the value at
// path is made of, if any.
func definitionAt(schema map[string]any, path []string) string {
	node := schema
	for _, k := range path {
		node = resolve(schema, node)
		props, _ := node["properties"].(map[string]any)
		next, ok := props[k].(map[string]any)
		if !ok {
			return ""
		}
		node = next
	}
	ref, _ := node["$ref"].(string)
	return strings.TrimPrefix(ref, "#/definitions/")
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	case int64:
		return float64(n)
	}
	return 0
}

// schemaAt returns the schema of the value at path, following $ref.
func schemaAt(schema map[string]any, path []string) map[string]any {
	node := schema
	for _, k := range path {
		node = resolve(schema, node)
		props, _ := node["properties"].(map[string]any)
		next, ok := props[k].(map[string]any)
		if !ok {
			return nil
		}
		node = next
	}
	return resolve(schema, node)
}

func resolve(schema, node map[string]any) map[string]any {
	ref, ok := node["$ref"].(string)
	if !ok {
		return node
	}
	defs, _ := schema["definitions"].(map[string]any)
	if d, ok := defs[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any); ok {
		return d
	}
	return node
}

// sectionsOf lists the maps of vals (global and every section below).
func sectionsOf(vals map[string]any, prefix []string) [][]string {
	var out [][]string
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if m, ok := vals[k].(map[string]any); ok {
			p := append(append([]string(nil), prefix...), k)
			out = append(out, p)
			out = append(out, sectionsOf(m, p)...)
		}
	}
	return out
}

// set returns values holding v at path alone.
func set(path []string, v any) map[string]any {
	if len(path) == 1 {
		return map[string]any{path[0]: v}
	}
	return map[string]any{path[0]: set(path[1:], v)}
}

// renderWithoutSchema renders vals with the chart's template checks but not
// its schema: what the components would be given. err is a template's
// refusal.
func renderWithoutSchema(t *testing.T, ctx context.Context, vals map[string]any) (string, error) {
	t.Helper()
	c, err := charts.Load()
	if err != nil {
		t.Fatal(err)
	}
	c.Schema = nil
	manifest, _, err := charts.Render(ctx, charts.RenderOptions{Values: vals, Chart: c})
	return manifest, err
}

// fingerprint is what the components start with, for the chart's defaults
// with vals.
func fingerprint(t *testing.T, ctx context.Context, vals map[string]any) []container {
	t.Helper()
	manifest, err := renderWithoutSchema(t, ctx, vals)
	if err != nil {
		t.Fatal(err)
	}
	return containerPrint(t, manifest)
}

func containerPrint(t *testing.T, manifest string) []container {
	t.Helper()
	cs, err := containers(manifest)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// stricter are the values the chart refuses although every component would
// start with them, and why.
var stricter = map[string]string{
	"descheduler.maxEvictionsPerCycle=0": "a policy-wide cap of 0 evicts nothing: one setting would silently stop the descheduler",
	"global.loadWatcher.port=0":          "port 0 listens on a port chosen at random, which the Service cannot reach",
	"load-watcher.metricsPort=0":         "port 0 listens on a port chosen at random, which the Service cannot reach",
	"load-watcher.logLevel=-1":           "the scheduler and the descheduler refuse a negative verbosity; load-watcher's is kept alike",
	"scheduler.plugins.loadAware.weight=0": "kube-scheduler reads a weight of 0 as 1: it does not turn the plugin off, " +
		"as a user setting it would expect",
	"scheduler.plugins.loadVariationRiskBalancing.weight=0": "kube-scheduler reads a weight of 0 as 1",
	"scheduler.plugins.podCountBalance.weight=0":            "kube-scheduler reads a weight of 0 as 1",
	"scheduler.leaderElection.retryPeriod=0s":               "kube-scheduler reads 0s as its default, 2s",
}

// reaches reports whether manifest starts a component differently from base.
func reaches(t *testing.T, manifest string, base []container) bool {
	t.Helper()
	cs, err := containers(manifest)
	return err != nil || !reflect.DeepEqual(cs, base)
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.Index(s, "\n- "); i >= 0 {
		if j := strings.Index(s[i+3:], "\n"); j >= 0 {
			return s[i+3 : i+3+j]
		}
		return s[i+3:]
	}
	return s
}
