package sim

import (
	v1 "k8s.io/api/core/v1"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

// schedulerThresholds are the LoadAware thresholds of the Ballast run's
// scheduler configuration, which serves default-scheduler in a simulation:
// what every run of a comparison judges hot nodes by, so that the stacks are
// measured alike and a user's values change the measure with the scheduler.
func schedulerThresholds(schedulerConfig string) (record.Thresholds, error) {
	settings, _, err := loadmodel.SchedulerSettings([]byte(schedulerConfig), v1.DefaultSchedulerName)
	if err != nil {
		return record.Thresholds{}, err
	}
	return record.Thresholds{CPU: settings.Thresholds[usage.CPU], Memory: settings.Thresholds[usage.Memory]}, nil
}
