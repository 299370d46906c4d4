package leaderrelease

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

func TestOnFirstPlugin(t *testing.T) {
	built := 0
	factory := func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
		built++
		return nil, nil
	}
	pointer := func(f frameworkruntime.PluginFactory) uintptr { return reflect.ValueOf(f).Pointer() }

	// Building a plugin starts the releaser first, which needs the
	// scheduler's client: without one, the plugin is not built.
	r := frameworkruntime.Registry{"LoadAware": factory}
	OnFirstPlugin(r, "ballast-system", "ballast-scheduler")
	if pointer(r["LoadAware"]) == pointer(factory) {
		t.Error("the factory was not wrapped")
	}
	_, err := r["LoadAware"](context.Background(), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "--leader-lease") {
		t.Errorf("building without a client: %v, want an error naming --leader-lease", err)
	}
	if built != 0 {
		t.Errorf("the plugin was built %d times despite the error", built)
	}
}
