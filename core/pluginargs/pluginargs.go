// Package pluginargs turns the args object a framework hands a plugin's
// constructor into the args the plugin runs with, in one order for every
// Ballast plugin, the scheduler's and the descheduler's: a copy of the object
// (the zero args when there is none), defaulted, then validated — so what is
// validated is what runs, and the caller's object is never changed.
package pluginargs

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Decode returns the args of the plugin called name as it runs with them:
// a copy of obj, or the zero args when obj is nil, defaulted by setDefaults
// and checked by validate. obj of another type is an error, in the words
// kube-scheduler's own plugins use.
func Decode[T any, PT interface {
	*T
	DeepCopy() *T
}](name string, obj runtime.Object, setDefaults func(*T), validate func(*field.Path, *T) error) (*T, error) {
	args := new(T)
	switch in := obj.(type) {
	case nil:
	case PT:
		if in != nil {
			args = in.DeepCopy()
		}
	default:
		return nil, fmt.Errorf("want args to be of type %s, got %T", reflect.TypeFor[T]().Name(), obj)
	}
	setDefaults(args)
	if err := validate(nil, args); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", name, err)
	}
	return args, nil
}
