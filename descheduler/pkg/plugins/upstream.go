package plugins

import (
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/defaultevictor"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/nodeutilization"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/podlifetime"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/removeduplicates"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/removefailedpods"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/removepodshavingtoomanyrestarts"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/removepodsviolatinginterpodantiaffinity"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/removepodsviolatingnodeaffinity"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/removepodsviolatingnodetaints"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint"
)

// RegisterUpstreamArgs adds the upstream descheduler's plugins to registry by
// their args, validation and defaults, without builders: enough to decode
// and validate a policy that names them, as the descheduler does at start.
// The descheduler binary registers them with their builders through its
// upstream command (descheduler.SetupPlugins); this list is held equal to
// that one by TestUpstreamArgsAreTheDeschedulers.
//
// It does not call the upstream registration itself because the package
// that holds it links the descheduler's command options (the API server's
// serving, etcd's client, gRPC), which the `ballast` CLI, where policies are
// checked, must not carry.
func RegisterUpstreamArgs(registry pluginregistry.Registry) {
	for _, p := range []struct {
		name     string
		args     runtime.Object
		validate pluginregistry.PluginArgValidator
		defaults pluginregistry.PluginArgDefaulter
	}{
		{defaultevictor.PluginName, &defaultevictor.DefaultEvictorArgs{}, defaultevictor.ValidateDefaultEvictorArgs, defaultevictor.SetDefaults_DefaultEvictorArgs},
		{nodeutilization.LowNodeUtilizationPluginName, &nodeutilization.LowNodeUtilizationArgs{}, nodeutilization.ValidateLowNodeUtilizationArgs, nodeutilization.SetDefaults_LowNodeUtilizationArgs},
		{nodeutilization.HighNodeUtilizationPluginName, &nodeutilization.HighNodeUtilizationArgs{}, nodeutilization.ValidateHighNodeUtilizationArgs, nodeutilization.SetDefaults_HighNodeUtilizationArgs},
		{podlifetime.PluginName, &podlifetime.PodLifeTimeArgs{}, podlifetime.ValidatePodLifeTimeArgs, podlifetime.SetDefaults_PodLifeTimeArgs},
		{removeduplicates.PluginName, &removeduplicates.RemoveDuplicatesArgs{}, removeduplicates.ValidateRemoveDuplicatesArgs, removeduplicates.SetDefaults_RemoveDuplicatesArgs},
		{removefailedpods.PluginName, &removefailedpods.RemoveFailedPodsArgs{}, removefailedpods.ValidateRemoveFailedPodsArgs, removefailedpods.SetDefaults_RemoveFailedPodsArgs},
		{removepodshavingtoomanyrestarts.PluginName, &removepodshavingtoomanyrestarts.RemovePodsHavingTooManyRestartsArgs{},
			removepodshavingtoomanyrestarts.ValidateRemovePodsHavingTooManyRestartsArgs, removepodshavingtoomanyrestarts.SetDefaults_RemovePodsHavingTooManyRestartsArgs},
		{removepodsviolatinginterpodantiaffinity.PluginName, &removepodsviolatinginterpodantiaffinity.RemovePodsViolatingInterPodAntiAffinityArgs{},
			removepodsviolatinginterpodantiaffinity.ValidateRemovePodsViolatingInterPodAntiAffinityArgs,
			removepodsviolatinginterpodantiaffinity.SetDefaults_RemovePodsViolatingInterPodAntiAffinityArgs},
		{removepodsviolatingnodeaffinity.PluginName, &removepodsviolatingnodeaffinity.RemovePodsViolatingNodeAffinityArgs{},
			removepodsviolatingnodeaffinity.ValidateRemovePodsViolatingNodeAffinityArgs, removepodsviolatingnodeaffinity.SetDefaults_RemovePodsViolatingNodeAffinityArgs},
		{removepodsviolatingnodetaints.PluginName, &removepodsviolatingnodetaints.RemovePodsViolatingNodeTaintsArgs{},
			removepodsviolatingnodetaints.ValidateRemovePodsViolatingNodeTaintsArgs, removepodsviolatingnodetaints.SetDefaults_RemovePodsViolatingNodeTaintsArgs},
		{removepodsviolatingtopologyspreadconstraint.PluginName, &removepodsviolatingtopologyspreadconstraint.RemovePodsViolatingTopologySpreadConstraintArgs{},
			removepodsviolatingtopologyspreadconstraint.ValidateRemovePodsViolatingTopologySpreadConstraintArgs,
			removepodsviolatingtopologyspreadconstraint.SetDefaults_RemovePodsViolatingTopologySpreadConstraintArgs},
	} {
		registry[p.name] = pluginregistry.PluginUtilities{PluginArgInstance: p.args, PluginArgValidator: p.validate, PluginArgDefaulter: p.defaults}
	}
}
