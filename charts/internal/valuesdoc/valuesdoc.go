// Package valuesdoc turns the helm-docs style comments of a values.yaml
// ("# -- text" above a key) into a reference table, and finds keys without one.
package valuesdoc

import (
	"encoding/json"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Entry documents one value.
type Entry struct {
	Key         string
	Type        string
	Default     string
	Description string
}

// Parse returns the documented keys of a values file in file order, and the
// keys that are neither documented nor inside a documented key.
func Parse(data []byte) (entries []Entry, undocumented []string, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("parse values: %w", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("values must be a mapping")
	}
	err = walk(doc.Content[0], "", &entries, &undocumented)
	return entries, undocumented, err
}

func walk(m *yaml.Node, prefix string, entries *[]Entry, undocumented *[]string) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := m.Content[i], m.Content[i+1]
		path := key.Value
		if prefix != "" {
			path = prefix + "." + key.Value
		}
		if desc, ok := description(key.HeadComment); ok {
			def, err := defaultOf(val)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			*entries = append(*entries, Entry{Key: path, Type: typeOf(val), Default: def, Description: desc})
			continue
		}
		if val.Kind == yaml.MappingNode && len(val.Content) > 0 {
			if err := walk(val, path, entries, undocumented); err != nil {
				return err
			}
			continue
		}
		*undocumented = append(*undocumented, path)
	}
	return nil
}

// description extracts the text of the last "# --" comment block.
func description(comment string) (string, bool) {
	lines := strings.Split(comment, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "# --") {
			start = i
		}
	}
	if start < 0 {
		return "", false
	}
	var parts []string
	for i, l := range lines[start:] {
		l = strings.TrimSpace(l)
		if i == 0 {
			l = strings.TrimPrefix(l, "# --")
		} else {
			l = strings.TrimPrefix(l, "#")
		}
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " "), true
}

func typeOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "list"
	}
	switch n.Tag {
	case "!!int":
		return "int"
	case "!!float":
		return "float"
	case "!!bool":
		return "bool"
	case "!!null":
		return "null"
	}
	return "string"
}

func defaultOf(n *yaml.Node) (string, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return "", err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// Markdown renders entries as the docs/values.md reference.
func Markdown(entries []Entry) string {
	var b strings.Builder
	b.WriteString("# Ballast chart values\n\n")
	b.WriteString("<!-- Generated from charts/ballast/values.yaml by hack/gen-values-doc.sh; do not edit. -->\n\n")
	b.WriteString("Every setting of the `ballast` chart, for `helm install -f`, `ballast install -f` or `--set`. ")
	b.WriteString("Wrong values are refused before anything is written; see [How values are checked](#how-values-are-checked).\n\n")
	b.WriteString(checkedValues)
	section := ""
	for _, e := range entries {
		top, _, nested := strings.Cut(e.Key, ".")
		if !nested {
			top = "General"
		}
		if top != section {
			section = top
			fmt.Fprintf(&b, "\n## %s\n\n| Key | Type | Default | Description |\n|-----|------|---------|-------------|\n", top)
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", e.Key, e.Type, escape(e.Default), escape(e.Description))
	}
	return b.String()
}

func escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// checkedValues says how validation works.
const checkedValues = `## How values are checked

Nothing is written that the API server, the cluster or a component would refuse,
or that would stop scheduling. The components are the one source of truth for
their own configuration: a value is wrong when the load-watcher, scheduler or
descheduler would refuse, at start, the configuration it renders.

- ` + "`ballast render`" + ` and ` + "`ballast install`" + ` (both paths: k3s's HelmChart and the Helm SDK)
  render the chart, then check what it renders, without a cluster:
  - **the API server's rules** for every rendered object, for the fields values
    reach: metadata, labels and annotations, selectors, image references (as the
    kubelet parses them: an image with a space is taken into a Deployment and its
    pods never start), container resources (a request above its limit), ports,
    environment, volumes and mounts, tolerations, node selectors, affinity, topology
    spread constraints, security contexts, Services, ConfigMaps (1 MiB at most),
    disruption budgets, RBAC and NetworkPolicies; each object is decoded strictly,
    so a field its type does not have (a misspelt ` + "`nodeAffinity`" + `) is refused
    rather than dropped. The API server's own validation packages, with their
    conversion to internal types, would take the ` + "`ballast`" + ` binary past its 64 MiB
    budget (64.2 MiB for pods and Deployments alone; [performance.md](performance.md#cli)), so
    these rules are written with the apimachinery helpers those packages use
    (` + "`installer/pkg/startcheck`" + `);
  - **each component's own start-up checks**: the scheduler's flag parsing, its
    KubeSchedulerConfiguration scheme with Ballast's plugin args and the building
    of every profile's plugins; the descheduler's flags and its policy scheme with
    every upstream plugin and Ballast's; load-watcher's flags and collector
    configuration;
  - **what the objects would do together**: a component's Deployment with no
    replica; ` + "`replaceDefault`" + ` mode (the cluster's own scheduler renamed) with no running
    Ballast scheduler serving ` + "`default-scheduler`" + `, or the namespace opt-in naming a
    scheduler nothing runs (no pod would be scheduled again); a scheduler or
    descheduler reading the release's load-watcher with no load-watcher pod behind
    its Service; a staleness limit (load-watcher's, the scheduler's, the
    descheduler's) no longer than load-watcher's sampling period, so that usage
    turns stale between two samples.

  A refusal names the values keys it comes from (found by rendering again without
  each value given) with the API server's or the component's own message, and
  nothing is written:

  ` + "```" + `
  scheduler.plugins.loadAware.scoringStrategy.targetUtilization=0: the scheduler would refuse this at start
  (Deployment/ballast-scheduler): ... scoringStrategy.targetUtilization: Invalid value: 0: must be above 0 and at most 100
  ` + "```" + `

- ` + "`ballast render --validate`" + ` has the cluster's API server judge the objects too, as a
  server-side dry run (nothing is stored): each object as a server-side apply, and
  each Deployment's pod as its ReplicaSet would create it, so that admission
  (Pod Security, priority classes, quotas) is asked as well. A kind the cluster
  does not serve (a ServiceMonitor without the Prometheus Operator) is refused;
  objects in a namespace that does not exist yet are checked offline only.
- ` + "`helm install`" + ` users get the same protection from the chart itself:
  ` + "`values.schema.json`" + ` refuses wrong types, out-of-range numbers, zero or
  malformed durations, unknown keys (in ` + "`global`" + ` and in every section), image tags,
  names and registries that are no image reference, negative or malformed
  quantities and unknown resource names, label and annotation keys that are no
  qualified name (a space), tolerations with an unknown operator or effect, and
  malformed spread constraints and affinity; template checks refuse what a schema
  cannot say, naming every key involved and the fix: settings that only make sense
  together (leader election durations, windows shorter than load-watcher's period,
  a request above its limit), ` + "`global.schedulerMode=replaceDefault`" + ` with
  ` + "`scheduler.enabled=false`" + `, a component enabled with ` + "`replicas: 0`" + `, staleness limits no
  longer than ` + "`load-watcher.period`" + `, and labels that would take the place of the ones
  Ballast's selectors find its pods by.
- Tests (in CI) keep the chart and the CLI's checks from drifting.
  ` + "`TestChartRefusesWhatComponentsRefuse`" + `: for every number, duration and enumerated
  value of the chart, and every image reference, quantity, label map, annotation
  map, object name, toleration list, spread constraint list and affinity, it tries
  zero, negative, fractional, huge, out-of-bounds, unit-less, wrongly typed,
  malformed and unknown values, and fails when the chart accepts what the API
  server's rules or a component would refuse, or refuses what every component
  accepts without a reason it lists (a weight of 0, which kube-scheduler reads as 1;
  a port of 0; a policy-wide eviction cap of 0, which would silently stop the
  descheduler). ` + "`TestChartRefusesWhatStopsScheduling`" + `: over every combination of the
  mode, each component on or off and its replicas, load-watcher's address and the
  opt-in, and of the sampling period with every staleness limit, the chart refuses
  exactly what the objects it renders without its checks would do to stop
  scheduling, naming every key that alone makes the difference.
- ` + "`global`" + ` accepts, besides its own keys, the keys platforms set when they install
  a chart (` + "`systemDefaultRegistry`" + `, ` + "`clusterCIDR`" + `, ` + "`clusterDNS`" + `, ` + "`cattle`" + ` and the like);
  they are not used.

`
