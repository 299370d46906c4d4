package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
)

// FuzzDecodeUsage feeds arbitrary bytes to the client's decoder: nothing
// may panic, every error must wrap ErrRefused, and every node an accepted
// answer leaves usable must hold only finite percentages in range, in
// windows the answer lists, with a sample age that is not negative.
func FuzzDecodeUsage(f *testing.F) {
	good, err := json.Marshal(goodAnswer())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"apiVersion":"load-watcher/v1","time":"2026-05-06T07:08:09Z","periodSeconds":15,"staleAfterSeconds":45,"windows":["1m"],"nodes":{"a":{"sampleTime":"2026-05-06T07:08:04Z","sampleAgeSeconds":-1,"windows":{"1m":{"cpu":{"avg":-1}}}}}}`))
	f.Add(bytes.Replace(good, []byte(`"avg":30`), []byte(`"avg":1e308`), 1))
	f.Add(bytes.Replace(good, []byte(`"1m"`), []byte(`"0s"`), -1))
	v := verifier{maxBytes: 1 << 20, maxSkew: DefaultMaxClockSkew}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := v.decode(bytes.NewReader(data), answerTime)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("error does not wrap ErrRefused: %v", err)
			}
			return
		}
		for name, n := range a.list.Nodes {
			if _, bad := a.invalid[name]; bad {
				continue
			}
			if !(n.SampleAgeSeconds >= 0) || n.SampleTime.After(a.list.Time.Add(v.maxSkew)) {
				t.Fatalf("node %s accepted with sample age %v, time %v", name, n.SampleAgeSeconds, n.SampleTime)
			}
			checkWindows(t, name, n, a.list)
		}
		cache := staleCache{staleAfter: time.Minute, now: func() time.Time { return answerTime }}
		cache.store(a.list, a.invalid, answerTime)
		for name := range a.invalid {
			if _, ok := cache.snapshot().Node(name); ok {
				t.Fatalf("node %s refused but usable in the snapshot", name)
			}
		}
	})
}

func checkWindows(t *testing.T, name string, n apiv1.NodeUsage, list *apiv1.UsageList) {
	t.Helper()
	for w, byRes := range n.Windows {
		if _, err := apiv1.ParseWindow(w); err != nil {
			t.Fatalf("node %s accepted with window %q", name, w)
		}
		for r, s := range byRes {
			for _, x := range []float64{s.Avg, s.Std, s.Max, s.P95, s.Latest} {
				if math.IsNaN(x) || x < 0 || x > MaxPercent {
					t.Fatalf("node %s accepted with %s %s = %v", name, w, r, x)
				}
			}
			if errs := verifyStats(field.NewPath(name), s); len(errs) > 0 {
				t.Fatalf("node %s accepted with %v", name, errs)
			}
		}
	}
	_ = list
}
