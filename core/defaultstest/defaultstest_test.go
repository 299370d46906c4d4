package defaultstest

import (
	"reflect"
	"slices"
	"testing"
)

// TestRedundantKeys defaults a toy configuration: a missing "window" is 5m,
// a missing "thresholds" is {cpu: 85, memory: 90}, and a missing
// "strategy.type" is LeastLoaded.
func TestRedundantKeys(t *testing.T) {
	defaulted := func(doc map[string]any) map[string]any {
		out := map[string]any{"window": "5m", "thresholds": map[string]any{"cpu": 85, "memory": 90}, "strategy": map[string]any{"type": "LeastLoaded"}}
		for k, v := range doc {
			if k == "strategy" {
				s := map[string]any{"type": "LeastLoaded"}
				for sk, sv := range v.(map[string]any) {
					s[sk] = sv
				}
				v = s
			}
			out[k] = v
		}
		return out
	}
	doc := map[string]any{
		"window":     "5m",                                          // restated
		"thresholds": map[string]any{"cpu": 85, "memory": 90},       // restated as a whole
		"strategy":   map[string]any{"type": "LeastLoaded", "x": 1}, // type restated, x chosen
		"other":      true,                                          // chosen
	}
	want := defaulted(doc)
	got := RedundantKeys(doc, "args", func() bool { return reflect.DeepEqual(defaulted(doc), want) })
	if !slices.Equal(got, []string{"args.strategy.type", "args.thresholds", "args.window"}) {
		t.Errorf("RedundantKeys = %q", got)
	}
	if len(doc) != 4 || len(doc["strategy"].(map[string]any)) != 2 {
		t.Errorf("the document was not put back: %v", doc)
	}
}
