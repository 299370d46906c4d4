// Package schedulerconfig is the descheduler's model of the scheduler it
// moves pods for: the settings of a profile of the scheduler's configuration
// file (its ConfigMap, mounted), read with loadmodel.SchedulerSettings and
// read again when the file changes.
package schedulerconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// schedulerConfigPoll is how often the scheduler's configuration file is
// read again: a mounted ConfigMap changes in place when the chart's values
// change, and the scheduler restarts with the new one.
const schedulerConfigPoll = 30 * time.Second

// Model is the model of the scheduler running the configuration
// in path (the scheduler's own file, mounted from its ConfigMap), read again
// when the file changes. A file that becomes unreadable or invalid after the
// start keeps the last good model and is reported.
type Model struct {
	path, profile string
	current       atomic.Pointer[balance.SchedulerModel]
	last          []byte
}

var _ balance.LoadModel = (*Model)(nil)

// newSchedulerModel reads the scheduler's settings from path, for the profile
// named profile. An empty path, or a file that is not there (the chart's
// scheduler is off and another one runs), gives the scheduler's defaults; a
// file that does not decode or validate is an error naming the field.
func New(logger klog.Logger, path, profile string) (*Model, error) {
	m := &Model{path: path, profile: profile}
	if path == "" {
		m.set(loadmodel.Settings{})
		logger.Info("No --scheduler-config: the descheduler predicts a scheduler with LoadAware's defaults")
		return m, nil
	}
	if err := m.read(logger); err != nil {
		return nil, err
	}
	return m, nil
}

// read reads the file and, when it changed, builds the model from it.
func (m *Model) read(logger klog.Logger) error {
	data, err := os.ReadFile(m.path)
	if errors.Is(err, fs.ErrNotExist) {
		if m.current.Load() == nil || m.last != nil {
			logger.Info("The scheduler's configuration is not there: the descheduler predicts a scheduler with LoadAware's defaults",
				"schedulerConfig", m.path)
		}
		m.last = nil
		m.set(loadmodel.Settings{})
		return nil
	}
	if err != nil {
		return fmt.Errorf("--scheduler-config %q: %w", m.path, err)
	}
	if m.last != nil && bytes.Equal(data, m.last) {
		return nil
	}
	settings, found, err := loadmodel.SchedulerSettings(data, m.profile)
	if err != nil {
		return fmt.Errorf("--scheduler-config %q, profile %q: %w", m.path, m.profile, err)
	}
	if !found {
		logger.Info("The scheduler's configuration sets no LoadAware args for the profile: the descheduler predicts LoadAware's defaults",
			"schedulerConfig", m.path, "schedulerProfile", m.profile)
	} else {
		logger.Info("Predicting the scheduler's settings", "schedulerConfig", m.path, "schedulerProfile", m.profile,
			"thresholds", settings.Thresholds, "strategy", settings.ScoringStrategy.Type, "combine", settings.ScoringStrategy.Combine)
	}
	m.last = data
	m.set(settings)
	return nil
}

func (m *Model) set(s loadmodel.Settings) {
	model := balance.NewSchedulerModel(s)
	m.current.Store(&model)
}

// Run reads the file again every schedulerConfigPoll until ctx ends.
func (m *Model) Run(ctx context.Context) {
	if m.path == "" {
		return
	}
	logger := klog.FromContext(ctx)
	t := time.NewTicker(schedulerConfigPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := m.read(logger); err != nil {
				logger.Error(err, "Keeping the scheduler's last good settings")
			}
		}
	}
}

func (m *Model) model() *balance.SchedulerModel { return m.current.Load() }

func (m *Model) EstimatePod(pod *v1.Pod) loadmodel.Amount { return m.model().EstimatePod(pod) }

func (m *Model) Share(amount loadmodel.Amount, node *v1.Node) balance.NodeLoad {
	return m.model().Share(amount, node)
}

func (m *Model) Place(est loadmodel.Amount, node *v1.Node, current balance.NodeLoad, high balance.ResourceThresholds) balance.Placement {
	return m.model().Place(est, node, current, high)
}

func (m *Model) SchedulerThresholds() balance.ResourceThresholds {
	return m.model().SchedulerThresholds()
}
