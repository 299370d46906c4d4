package startcheck

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/charts"
)

// setting is one value of a grid: a key and the values it takes.
type setting struct {
	key    string
	values []any
}

// grid returns every combination of the settings' values, as values.
func grid(settings []setting) []map[string]any {
	out := []map[string]any{{}}
	for _, s := range settings {
		var next []map[string]any
		for _, vals := range out {
			for _, v := range s.values {
				c := map[string]any{}
				for k, x := range vals {
					c[k] = x
				}
				c[s.key] = v
				next = append(next, c)
			}
		}
		out = next
	}
	return out
}

// nest turns {"a.b": v} into {"a": {"b": v}}.
func nest(flat map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range flat {
		path := strings.Split(k, ".")
		m := out
		for _, p := range path[:len(path)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[path[len(path)-1]] = v
	}
	return out
}

func describe(flat map[string]any) string {
	var parts []string
	for k, v := range flat {
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// TestChartRefusesWhatStopsScheduling is the property that keeps the
// chart's checks across components and the CLI's check of what the
// rendered objects do together (schedulingRefusals) from drifting apart,
// over every combination of the values that decide who schedules and who
// reads usage (the mode, each component on or off and its replicas,
// load-watcher's address, the namespace opt-in) and of the sampling period
// with every staleness limit: the chart refuses a combination exactly when
// the objects it renders without its checks would leave pods with no
// scheduler, or a scheduler or descheduler without usage; its message
// names every key that alone makes the difference, and `ballast render`
// refuses it too.
func TestChartRefusesWhatStopsScheduling(t *testing.T) {
	if testing.Short() {
		t.Skip("renders the chart a few hundred times")
	}
	ctx := context.Background()
	who := grid([]setting{
		{"global.schedulerMode", []any{"second", "replaceDefault"}},
		{"scheduler.enabled", []any{true, false}},
		{"scheduler.replicas", []any{1, 0}},
		{"load-watcher.enabled", []any{true, false}},
		{"load-watcher.replicas", []any{1, 0}},
		{"global.loadWatcher.address", []any{"", "http://usage.example:2020"}},
		{"descheduler.enabled", []any{true, false}},
		{"optIn.enabled", []any{true, false}},
	})
	// Windows every period below fits in.
	windows := map[string]any{"load-watcher.windows": []any{"5m", "15m"}}
	stale := grid([]setting{
		{"load-watcher.period", []any{"15s", "1m", "2m"}},
		{"load-watcher.staleAfter", []any{"", "10s", "1m", "5m"}},
		{"scheduler.loadWatcherStaleAfter", []any{"15s", "90s", "5m"}},
		{"descheduler.extraArgs", []any{[]any{}, []any{"--load-watcher-stale-after=10m"}}},
	})
	var cases []map[string]any
	for _, flat := range who {
		// A replica count says nothing of a component that is off.
		if (flat["scheduler.enabled"] == false && flat["scheduler.replicas"] == 0) ||
			(flat["load-watcher.enabled"] == false && flat["load-watcher.replicas"] == 0) {
			continue
		}
		cases = append(cases, flat)
	}
	for _, flat := range stale {
		for k, v := range windows {
			flat[k] = v
		}
		cases = append(cases, flat)
	}
	c, err := charts.Load()
	if err != nil {
		t.Fatal(err)
	}
	defaults := c.Values
	refused := 0
	for _, flat := range cases {
		vals := nest(flat)
		t.Run(describe(flat), func(t *testing.T) {
			_, _, chartErr := charts.Render(ctx, charts.RenderOptions{Values: vals})
			manifest, err := renderUnchecked(t, ctx, vals)
			if err != nil {
				t.Fatalf("does not render without the chart's checks: %v", err)
			}
			refusals, err := Manifest(ctx, manifest, ReplaceDefault(vals))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case chartErr == nil && len(refusals) > 0:
				t.Fatalf("the chart renders it, but %v", refusals[0])
			case chartErr != nil && len(refusals) == 0:
				t.Fatalf("the chart refuses it, but the objects it renders would schedule: %v", chartErr)
			case chartErr == nil:
				return
			}
			refused++
			for k := range flat {
				if reflect.DeepEqual(valueAt(defaults, k), flat[k]) {
					continue // the chart's default: without it, the same values
				}
				alone := nest(withoutKey(flat, k))
				if _, _, err := charts.Render(ctx, charts.RenderOptions{Values: alone}); err == nil && !strings.Contains(chartErr.Error(), k) {
					t.Errorf("without %s the chart accepts it, but its message does not name it: %v", k, chartErr)
				}
			}
			if _, _, err := Render(ctx, charts.RenderOptions{Values: vals}); err == nil {
				t.Error("ballast render accepts it")
			}
		})
	}
	if refused < 20 {
		t.Fatalf("only %d combinations refused: the grid lost its way", refused)
	}
}

// valueAt returns the value at a dotted key of vals, nil when absent; a
// number as an int, as the grid gives it.
func valueAt(vals map[string]any, key string) any {
	var v any = vals
	for _, k := range strings.Split(key, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	if f, ok := v.(float64); ok && f == float64(int(f)) {
		return int(f)
	}
	return v
}

func withoutKey(flat map[string]any, key string) map[string]any {
	out := map[string]any{}
	for k, v := range flat {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// TestRenderNamesTheKeysThatStopScheduling runs `ballast render`'s own
// checks on objects the chart's checks would have refused (rendered
// without them), so a refusal is traced to the values keys by the CLI
// alone.
func TestRenderNamesTheKeysThatStopScheduling(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		values   map[string]any
		wantKeys []string
		wantErr  string
	}{
		{"replaceDefault with no scheduler", nest(map[string]any{"global.schedulerMode": "replaceDefault", "scheduler.enabled": false}),
			[]string{"global.schedulerMode=replaceDefault", "scheduler.enabled=false"}, "no pod would be scheduled again"},
		{"opt-in with no scheduler replica", nest(map[string]any{"scheduler.replicas": 0}),
			[]string{"scheduler.replicas=0"}, "schedulerName ballast-scheduler, and no running Ballast scheduler serves it"},
		{"no load-watcher replica", nest(map[string]any{"load-watcher.replicas": 0}),
			[]string{"load-watcher.replicas=0"}, "no load-watcher pod would run behind Service ballast-system/ballast-load-watcher"},
		{"scheduler's usage stale between samples", nest(map[string]any{"scheduler.loadWatcherStaleAfter": "10s"}),
			[]string{"scheduler.loadWatcherStaleAfter=10s"}, "the scheduler would place pods by their requests alone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifest, err := renderUnchecked(t, ctx, tc.values)
			if err != nil {
				t.Fatal(err)
			}
			refusals, err := Manifest(ctx, manifest, ReplaceDefault(tc.values))
			if err != nil {
				t.Fatal(err)
			}
			var found *Refusal
			for i, r := range refusals {
				if r.Component == scheduling && strings.Contains(r.Err.Error(), tc.wantErr) {
					found = &refusals[i]
				}
			}
			if found == nil {
				t.Fatalf("no refusal saying %q: %v", tc.wantErr, refusals)
			}
			// As Render traces it.
			got := attribute(ctx, charts.RenderOptions{Values: tc.values}, *found)
			for _, k := range tc.wantKeys {
				if !contains(got, k) {
					t.Errorf("keys %v do not hold %s", got, k)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
