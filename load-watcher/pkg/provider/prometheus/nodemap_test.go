package prometheus

import (
	"testing"

	"github.com/prometheus/common/model"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

func TestNodeIndexLookup(t *testing.T) {
	idx := newNodeIndex([]provider.Node{
		{Name: "server-1", InternalIP: "10.0.0.1"},
		{Name: "agent-1", InternalIP: "10.0.0.2"},
		{Name: "agent-v6", InternalIP: "fd00::0:5"},
		{Name: "10.0.0.9"}, // a node literally named like an IP
	})
	tests := []struct {
		name   string
		labels model.LabelSet
		want   string // "" = no match
	}{
		{name: "node label wins", labels: model.LabelSet{"node": "agent-1", "instance": "10.0.0.1:9100"}, want: "agent-1"},
		{name: "unknown node label falls through to instance", labels: model.LabelSet{"node": "nope", "instance": "server-1"}, want: "server-1"},
		{name: "instance is the node name", labels: model.LabelSet{"instance": "server-1"}, want: "server-1"},
		{name: "instance host is the node name", labels: model.LabelSet{"instance": "agent-1:9100"}, want: "agent-1"},
		{name: "instance host is the InternalIP", labels: model.LabelSet{"instance": "10.0.0.2:9100"}, want: "agent-1"},
		{name: "bare InternalIP", labels: model.LabelSet{"instance": "10.0.0.1"}, want: "server-1"},
		{name: "IPv6 instance, non-canonical address", labels: model.LabelSet{"instance": "[fd00::5]:9100"}, want: "agent-v6"},
		{name: "node named like an IP", labels: model.LabelSet{"instance": "10.0.0.9:9100"}, want: "10.0.0.9"},
		{name: "unknown IP", labels: model.LabelSet{"instance": "10.9.9.9:9100"}, want: ""},
		{name: "no labels", labels: model.LabelSet{}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ok := idx.lookup(model.Metric(tt.labels))
			got := ""
			if ok {
				got = n.Name
			}
			if got != tt.want {
				t.Errorf("lookup(%v) = %q, want %q", tt.labels, got, tt.want)
			}
		})
	}
}
