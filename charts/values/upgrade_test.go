package values

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func fromYAML(t *testing.T, doc string) map[string]any {
	t.Helper()
	out := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOverlay(t *testing.T) {
	for _, tc := range []struct {
		name          string
		previous, now string
		want          string
	}{
		{
			name:     "nothing given now keeps everything",
			previous: "global:\n  schedulerMode: replaceDefault\ndescheduler:\n  dryRun: true\n",
			now:      "{}",
			want:     "global:\n  schedulerMode: replaceDefault\ndescheduler:\n  dryRun: true\n",
		},
		{
			name:     "maps merge key by key, now wins",
			previous: "scheduler:\n  replicas: 2\n  logLevel: 3\n",
			now:      "scheduler:\n  logLevel: 4\n",
			want:     "scheduler:\n  replicas: 2\n  logLevel: 4\n",
		},
		{
			name:     "lists are replaced, not appended",
			previous: "load-watcher:\n  windows: [1m, 5m, 15m]\n",
			now:      "load-watcher:\n  windows: [5m]\n",
			want:     "load-watcher:\n  windows: [5m]\n",
		},
		{
			name:     "null removes a key",
			previous: "descheduler:\n  dryRun: true\n  logLevel: 4\n",
			now:      "descheduler:\n  dryRun: null\n",
			want:     "descheduler:\n  logLevel: 4\n",
		},
		{
			name:     "a scalar replaces a map",
			previous: "a:\n  b: 1\n",
			now:      "a: 2\n",
			want:     "a: 2\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			previous, now := fromYAML(t, tc.previous), fromYAML(t, tc.now)
			before := fromYAML(t, tc.previous)
			got := Overlay(previous, now)
			if diff := cmp.Diff(fromYAML(t, tc.want), got); diff != "" {
				t.Errorf("Overlay (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(before, previous); diff != "" {
				t.Errorf("Overlay modified its argument (-before,+after):\n%s", diff)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	old := fromYAML(t, "global:\n  schedulerMode: replaceDefault\nscheduler:\n  replicas: 2\n  logLevel: 3\nload-watcher:\n  windows: [1m, 5m]\n")
	// --set parses numbers as int64; YAML read back gives float64: equal values must not show.
	now := map[string]any{
		"scheduler":    map[string]any{"replicas": int64(2), "logLevel": int64(4)},
		"descheduler":  map[string]any{"dryRun": true},
		"load-watcher": map[string]any{"windows": []any{"1m", "5m"}},
	}
	got := Diff(old, now)
	want := []Change{
		{Path: "descheduler.dryRun", New: true},
		{Path: "global.schedulerMode", Old: "replaceDefault"},
		{Path: "scheduler.logLevel", Old: float64(3), New: int64(4)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Diff (-want,+got):\n%s", diff)
	}
	var buf bytes.Buffer
	WriteDiff(&buf, got)
	wantText := "  + descheduler.dryRun: true\n  - global.schedulerMode: replaceDefault\n  ~ scheduler.logLevel: 3 → 4\n"
	if buf.String() != wantText {
		t.Errorf("WriteDiff:\n%s\nwant:\n%s", buf.String(), wantText)
	}
	if got := Diff(old, old); len(got) != 0 {
		t.Errorf("Diff of equal values = %v, want none", got)
	}
}

func TestLookup(t *testing.T) {
	vals := map[string]any{"global": map[string]any{"image": map[string]any{"tag": "0.2.0"}}, "n": 3}
	for _, tc := range []struct {
		path []string
		want any
	}{
		{[]string{"global", "image", "tag"}, "0.2.0"},
		{[]string{"n"}, 3},
		{[]string{"global", "image", "registry"}, nil},
		{[]string{"n", "deeper"}, nil},
		{[]string{"missing", "x"}, nil},
	} {
		if got := Lookup(vals, tc.path...); got != tc.want {
			t.Errorf("Lookup(%v) = %v, want %v", tc.path, got, tc.want)
		}
	}
}
