package spreadreplicas

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/internal/argsfuzz"
)

// FuzzArgs decodes, defaults and validates arbitrary SpreadReplicas args;
// argsfuzz.Fuzz lists what must hold.
func FuzzArgs(f *testing.F) {
	argsfuzz.Fuzz(f, argsfuzz.Plugin{
		AddToScheme: AddToScheme,
		New:         func() runtime.Object { return &SpreadReplicasArgs{} },
		Validate:    ValidateSpreadReplicasArgs,
	},
		// The chart's args (charts/ballast/values.yaml, descheduler.plugins.spreadReplicas).
		"highThresholds: {cpu: 80, memory: 85}\nevictionCooldown: 10m\nmaxEvictionsPerNode: 2\nmaxEvictionsPerNamespace: 5\n"+
			"maxEvictionsPerCycle: 5\nwindow: 5m\nschedulerNames: [ballast-scheduler]\n",
		`{"highThresholds":{"memory":70},"evictionCooldown":"1m","maxEvictionsPerNode":1,"namespaces":{"include":["apps"]}}`,
		`{"highThresholds":{"cpu":0},"window":"0s","maxEvictionsPerNamespace":0,"schedulerNames":[""]}`,
	)
}
