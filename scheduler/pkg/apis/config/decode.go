package config

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DecodeArgs returns the args of plugin name as the plugin uses them: a
// copy of obj (the defaults alone when obj is nil), defaulted by
// setDefaults and checked by validate. obj of another type is an error.
func DecodeArgs[T any, PT interface {
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
