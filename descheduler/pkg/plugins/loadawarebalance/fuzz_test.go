package loadawarebalance

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/internal/argsfuzz"
)

// FuzzArgs decodes, defaults and validates arbitrary LoadAwareBalance args;
// argsfuzz.Fuzz lists what must hold.
func FuzzArgs(f *testing.F) {
	argsfuzz.Fuzz(f, argsfuzz.Plugin{
		AddToScheme: AddToScheme,
		New:         func() runtime.Object { return &LoadAwareBalanceArgs{} },
		Validate:    ValidateLoadAwareBalanceArgs,
	},
		// The chart's args (charts/ballast/values.yaml, descheduler.plugins.loadAwareBalance).
		"highThresholds: {cpu: 80, memory: 85}\nlowThresholds: {cpu: 50, memory: 60}\ndeviationThresholds: {cpu: 20, memory: 20}\n"+
			"consecutiveHotCycles: 1\nevictionCooldown: 10m\nmaxEvictionsPerNode: 2\nmaxEvictionsPerNamespace: 5\n"+
			"maxEvictionsPerCycle: 5\nwindow: 5m\nschedulerNames: [ballast-scheduler]\n",
		`{"highThresholds":{"cpu":50},"lowThresholds":{"cpu":60},"deviationThresholds":{"gpu":1}}`,
		`{"window":"-5m","maxEvictionsPerCycle":-1,"schedulerNames":[]}`,
		`{"namespaces":{"include":["a"],"exclude":["b"]}}`,
	)
}
