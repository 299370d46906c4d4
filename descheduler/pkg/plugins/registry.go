// Package plugins registers Ballast's descheduler plugins, LoadAwareBalance
// and SpreadReplicas, in a descheduler plugin registry: once, for the
// descheduler binary, the simulator and the start-up check alike. It also
// knows the upstream descheduler's plugins by their args, so a policy can be
// decoded and validated without the descheduler's command.
package plugins

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"sigs.k8s.io/descheduler/pkg/descheduler/scheme"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/spreadreplicas"
)

// DepsFunc returns what the balance plugins share (one store of moves, so
// that none undoes or repeats another's; one usage source; one model of the
// scheduler), given the context and handle of the first plugin built.
type DepsFunc func(ctx context.Context, handle frameworktypes.Handle) (balance.Deps, error)

// inScheme adds the plugins' args to the descheduler's scheme, which a
// policy is decoded with, once per process.
var inScheme sync.Once

// Register adds LoadAwareBalance and SpreadReplicas to registry: their args,
// validation and defaults, and builders that build each plugin with what
// deps returns. With a nil deps the plugins can be named in a policy that is
// decoded and validated, and building one is an error.
func Register(registry pluginregistry.Registry, deps DepsFunc) {
	inScheme.Do(func() {
		utilruntime.Must(loadawarebalance.AddToScheme(scheme.Scheme))
		utilruntime.Must(spreadreplicas.AddToScheme(scheme.Scheme))
	})
	pluginregistry.Register(loadawarebalance.PluginName, builder(deps, loadawarebalance.New), &loadawarebalance.LoadAwareBalance{},
		&loadawarebalance.LoadAwareBalanceArgs{}, loadawarebalance.ValidateLoadAwareBalanceArgs,
		loadawarebalance.SetDefaults_LoadAwareBalanceArgs, registry)
	pluginregistry.Register(spreadreplicas.PluginName, builder(deps, spreadreplicas.New), &spreadreplicas.SpreadReplicas{},
		&spreadreplicas.SpreadReplicasArgs{}, spreadreplicas.ValidateSpreadReplicasArgs,
		spreadreplicas.SetDefaults_SpreadReplicasArgs, registry)
}

// builder is the registry's builder of a plugin made by build with the deps
// of deps.
func builder[P frameworktypes.Plugin](deps DepsFunc, build func(context.Context, runtime.Object, frameworktypes.Handle, balance.Deps) (P, error)) pluginregistry.PluginBuilder {
	return func(ctx context.Context, args runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
		if deps == nil {
			return nil, errors.New("registered to decode policies only: no usage source, store or model to build the plugin with")
		}
		d, err := deps(ctx, handle)
		if err != nil {
			return nil, err
		}
		return build(ctx, args, handle, d)
	}
}
