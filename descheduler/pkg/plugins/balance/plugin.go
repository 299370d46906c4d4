package balance

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"
)

// Plugin is what every balance plugin holds besides its own args, built
// once by NewPlugin so the two plugins cannot be wired differently.
type Plugin struct {
	Logger klog.Logger
	Handle frameworktypes.Handle
	Deps   Deps
	// PodFilter accepts the pods the descheduler's evictor and the args'
	// namespaces let the plugin move.
	PodFilter podutil.FilterFunc
	// PlacedByBallast accepts the pods of the args' SchedulerNames.
	PlacedByBallast podutil.FilterFunc
}

// NewPlugin completes deps for the plugin called name and builds its
// filters from the settings every balance plugin takes.
func NewPlugin(ctx context.Context, name string, handle frameworktypes.Handle, deps Deps, args *EvictionArgs) (Plugin, error) {
	deps, err := deps.Complete(name, handle)
	if err != nil {
		return Plugin{}, err
	}
	podFilter, err := NewPodFilter(handle, args.Namespaces, name)
	if err != nil {
		return Plugin{}, err
	}
	return Plugin{
		Logger:          klog.FromContext(ctx).WithValues("plugin", name),
		Handle:          handle,
		Deps:            deps,
		PodFilter:       podFilter,
		PlacedByBallast: PlacedBy(args.SchedulerNames),
	}, nil
}

// DecodeArgs returns the args of the plugin called name as it uses them: a
// copy of obj, checked by validate and then defaulted by setDefaults. obj
// of another type is an error.
func DecodeArgs[T any, PT interface {
	*T
	runtime.Object
	DeepCopy() *T
}](name string, obj runtime.Object, validate func(runtime.Object) error, setDefaults func(runtime.Object)) (*T, error) {
	in, ok := obj.(PT)
	if !ok || in == nil {
		return nil, fmt.Errorf("want args to be of type %s, got %T", reflect.TypeFor[T]().Name(), obj)
	}
	if err := validate(in); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", name, err)
	}
	args := in.DeepCopy()
	setDefaults(PT(args))
	return args, nil
}
