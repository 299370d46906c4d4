package plugins

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/spreadreplicas"
)

// The upstream plugins a policy check knows are those the descheduler
// registers, with the same args, validation and defaults.
func TestUpstreamArgsAreTheDeschedulers(t *testing.T) {
	upstream := pluginregistry.NewRegistry()
	descheduler.RegisterDefaultPlugins(upstream)
	ours := pluginregistry.NewRegistry()
	RegisterUpstreamArgs(ours)
	pointer := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	for name, want := range upstream {
		got, ok := ours[name]
		if !ok {
			t.Errorf("upstream plugin %s is not known", name)
			continue
		}
		if reflect.TypeOf(got.PluginArgInstance) != reflect.TypeOf(want.PluginArgInstance) {
			t.Errorf("%s: args %T, want %T", name, got.PluginArgInstance, want.PluginArgInstance)
		}
		if pointer(got.PluginArgValidator) != pointer(want.PluginArgValidator) || pointer(got.PluginArgDefaulter) != pointer(want.PluginArgDefaulter) {
			t.Errorf("%s: not the descheduler's validation and defaults", name)
		}
	}
	for name := range ours {
		if _, ok := upstream[name]; !ok {
			t.Errorf("%s is known, but the descheduler has no such plugin", name)
		}
	}
}

// Registered without deps, a plugin can be named in a policy but not built.
func TestRegisteredWithoutDepsIsNotBuilt(t *testing.T) {
	r := pluginregistry.NewRegistry()
	Register(r, nil)
	for _, name := range []string{loadawarebalance.PluginName, spreadreplicas.PluginName} {
		p, ok := r[name]
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		if _, err := p.PluginBuilder(context.Background(), p.PluginArgInstance, nil); err == nil || !strings.Contains(err.Error(), "decode policies only") {
			t.Errorf("%s built without deps: %v", name, err)
		}
	}
}
