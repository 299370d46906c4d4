package server

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
)

// randomSource returns a source over random usage: values with many
// decimals, on rounding boundaries, huge or tiny, resources missing in
// some windows, sample times in the past, the future and exactly at the
// staleness threshold, and nodes without samples. The windows are the
// defaults for even seeds and an unsorted pair without 15m for odd ones.
func randomSource(seed uint64) (*fakeSource, []string) {
	rng := rand.New(rand.NewPCG(seed, 0))
	windows := usage.DefaultWindows
	if seed%2 == 1 {
		windows = []usage.Window{usage.Window(10 * time.Minute), usage.Window(30 * time.Second)}
	}
	const staleAfter = 45 * time.Second
	value := func() float64 {
		switch rng.IntN(6) {
		case 0:
			return float64(rng.IntN(101))
		case 1:
			return float64(rng.IntN(100000))/1000 + 0.0005 // a rounding boundary
		case 2:
			return rng.Float64() * 1e-3
		case 3:
			return 1e15 + rng.Float64()*1e16
		default:
			return rng.Float64() * 130
		}
	}
	age := func() time.Duration {
		switch rng.IntN(5) {
		case 0:
			return staleAfter
		case 1:
			return staleAfter + time.Nanosecond
		case 2:
			return -time.Duration(rng.IntN(5000)) * time.Millisecond // ahead of the server's clock
		case 3:
			return time.Duration(rng.Int64N(int64(3 * time.Minute)))
		default:
			return time.Duration(rng.IntN(120)) * time.Second
		}
	}
	names := []string{`odd"name\ü`}
	for i := range 40 {
		names = append(names, fmt.Sprintf("node-%02d-%x", i, rng.Uint32()))
	}
	nodes := map[string]usage.NodeUsage{}
	for _, name := range names {
		sampleTime := now.Add(-age())
		n := usage.NodeUsage{Node: name, SampleTime: sampleTime, Stale: now.Sub(sampleTime) > staleAfter,
			Windows: map[usage.Window]map[usage.Resource]usage.Stats{}}
		onlyCPU := rng.IntN(8) == 0
		for _, w := range windows {
			byRes := map[usage.Resource]usage.Stats{}
			for _, res := range usage.Resources {
				if (onlyCPU && res == usage.Memory) || rng.IntN(10) == 0 {
					continue
				}
				byRes[res] = usage.Stats{Avg: value(), Std: value(), Max: value(), P95: value(), Latest: value(), Samples: rng.IntN(61)}
			}
			n.Windows[w] = byRes
		}
		nodes[name] = n
	}
	without := []string{"absent-" + strconv.Itoa(int(seed)), "zz-absent"}
	src := &fakeSource{
		snap:    &usage.Snapshot{Time: now, Source: "random-" + strconv.Itoa(int(seed)), Nodes: nodes},
		status:  collector.Status{Ready: true, Rounds: 7, NodesTracked: len(nodes), NodesWithoutSamples: without},
		windows: windows,
	}
	return src, names
}

// randomTargets are the requests asked of a random source: every shape
// of both endpoints, with a fresh and a stale node where there is one.
func randomTargets(src *fakeSource, names []string) []string {
	sorted := slices.Sorted(slices.Values(names))
	var fresh, stale string
	for _, name := range sorted {
		if n := src.snap.Nodes[name]; n.Stale && stale == "" && name[0] == 'n' {
			stale = name
		} else if !n.Stale && fresh == "" && name[0] == 'n' {
			fresh = name
		}
	}
	w := src.windows[len(src.windows)-1].String()
	return []string{
		"/api/v1/usage",
		"/api/v1/usage?window=" + w,
		"/api/v1/usage?node=" + fresh,
		"/api/v1/usage?node=" + stale + "&window=" + w,
		"/watcher",
		"/watcher?host=" + fresh,
	}
}

// TestRandomAnswersGolden pins every answer over random usage byte for
// byte (testdata/random-*.golden): the encoding must not change, whether
// it happens on request or once per round.
func TestRandomAnswersGolden(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(strconv.Itoa(int(seed)), func(t *testing.T) {
			src, names := randomSource(seed)
			var got bytes.Buffer
			for _, target := range randomTargets(src, names) {
				rec := get(t, src, target)
				if rec.Code != http.StatusOK {
					t.Fatalf("%s: status %d: %s", target, rec.Code, rec.Body)
				}
				fmt.Fprintf(&got, "GET %s\n%s\n", target, rec.Body.Bytes())
			}
			path := filepath.Join("testdata", fmt.Sprintf("random-%d.golden", seed))
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading golden file (run with -update to create it): %v", err)
			}
			if !bytes.Equal(want, got.Bytes()) {
				t.Errorf("answers differ from %s:\n%s", path, firstDifference(want, got.Bytes()))
			}
		})
	}
}

// firstDifference shows where two answers part, with some context.
func firstDifference(want, got []byte) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("at byte %d:\nwant …%s\ngot  …%s", i, want[from:min(len(want), i+80)], got[from:min(len(got), i+80)])
}
