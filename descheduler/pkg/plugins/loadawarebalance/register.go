package loadawarebalance

import (
	"k8s.io/apimachinery/pkg/runtime"
)

var (
	// SchemeBuilder registers the plugin's args defaulting with a scheme.
	SchemeBuilder      = runtime.NewSchemeBuilder()
	localSchemeBuilder = &SchemeBuilder
	// AddToScheme adds the plugin's args defaulting to a scheme.
	AddToScheme = localSchemeBuilder.AddToScheme
)

func init() {
	// Generated functions register themselves in the generated files; only
	// hand-written ones are registered here.
	localSchemeBuilder.Register(addDefaultingFuncs)
}
