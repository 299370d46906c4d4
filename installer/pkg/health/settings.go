package health

import (
	"fmt"
	"time"

	"github.com/ballast-sched/ballast/core/cli/log"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
)

// LoadWatcher is how status reaches load-watcher and judges its usage, as
// the installed release configures it.
type LoadWatcher struct {
	// Port is the load-watcher Service's API port (global.loadWatcher.port).
	Port int
	// TLS says whether load-watcher serves https
	// (global.loadWatcher.tls.enabled); a load-watcher Deployment that runs
	// with a certificate is asked over https whatever the values say.
	TLS bool
	// StaleAfter is how old a node's newest sample may be before Ballast's
	// scheduler stops trusting it (scheduler.loadWatcherStaleAfter); zero
	// means client.DefaultStaleAfter.
	StaleAfter time.Duration
	// From says where these settings come from, e.g. "release ballast
	// revision 3" or "the chart's defaults".
	From string
}

// LoadWatcherFromValues reads the settings from a release's values merged
// with its chart's defaults.
func LoadWatcherFromValues(vals chartutil.Values, from string) (LoadWatcher, error) {
	lw := LoadWatcher{From: from}
	port, err := vals.PathValue("global.loadWatcher.port")
	if err != nil {
		return lw, fmt.Errorf("values of %s: global.loadWatcher.port: %w", from, err)
	}
	switch p := port.(type) {
	case int:
		lw.Port = p
	case int64:
		lw.Port = int(p)
	case float64:
		lw.Port = int(p)
	default:
		return lw, fmt.Errorf("values of %s: global.loadWatcher.port is %T %v, not a port", from, port, port)
	}
	if tls, err := vals.PathValue("global.loadWatcher.tls.enabled"); err == nil {
		lw.TLS, _ = tls.(bool)
	}
	if s, err := vals.PathValue("scheduler.loadWatcherStaleAfter"); err == nil {
		str, _ := s.(string)
		if lw.StaleAfter, err = time.ParseDuration(str); err != nil {
			return lw, fmt.Errorf("values of %s: scheduler.loadWatcherStaleAfter: %w", from, err)
		}
	}
	return lw, nil
}

// LoadWatcherOfRelease reads how to reach load-watcher from the values of
// the release in namespace, or the chart's defaults without a release; a
// port other than 0 wins over the values' (--load-watcher-port).
func LoadWatcherOfRelease(logger *log.Logger, getter genericclioptions.RESTClientGetter, release, namespace string, port int) (LoadWatcher, error) {
	vals, from, found, err := helminstall.ReleaseValues(helminstall.Options{Getter: getter, ReleaseName: release, Namespace: namespace})
	if err != nil {
		return LoadWatcher{}, err
	}
	if !found {
		logger.V(1).Infof("no release %s in namespace %s: using the chart's defaults for load-watcher", release, namespace)
	}
	lw, err := LoadWatcherFromValues(vals, from)
	if err != nil {
		return lw, err
	}
	if port != 0 {
		lw.Port = port
		lw.From += ", port from --load-watcher-port"
	}
	logger.V(1).Infof("load-watcher: port %d, tls %t, stale after %s (from %s)", lw.Port, lw.TLS, lw.StaleAfter, lw.From)
	return lw, nil
}
