package spreadreplicas

import (
	"k8s.io/apimachinery/pkg/runtime"
)

var (
	// SchemeBuilder registers the plugin's args defaulting with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addDefaultingFuncs)
	// AddToScheme adds the plugin's args defaulting to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
