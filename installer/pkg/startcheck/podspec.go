package startcheck

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	corehelper "k8s.io/kubernetes/pkg/apis/core/v1/helper"
)

// The rules below are the API server's for a pod template (k8s.io/kubernetes
// pkg/apis/core/validation), for the fields a chart's values reach, written
// with the apimachinery helpers the API server's own rules use: the API's
// validation packages, with their conversion to internal types, would take
// the ballast binary past its size budget (docs/values.md). A server-side
// dry run (`ballast render --validate`) has the API server itself judge.

// validatePodTemplate checks a Deployment's pod template.
func validatePodTemplate(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, p.Child("metadata", "labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, p.Child("metadata", "annotations"))...)
	spec, sp := &t.Spec, p.Child("spec")
	if spec.RestartPolicy != "" && spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(sp.Child("restartPolicy"), spec.RestartPolicy, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	volumes, verrs := validateVolumes(spec.Volumes, sp.Child("volumes"))
	errs = append(errs, verrs...)
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(sp.Child("containers"), ""))
	}
	names := sets.New[string]()
	for i := range spec.InitContainers {
		errs = append(errs, validateContainer(&spec.InitContainers[i], volumes, names, sp.Child("initContainers").Index(i))...)
	}
	for i := range spec.Containers {
		errs = append(errs, validateContainer(&spec.Containers[i], volumes, names, sp.Child("containers").Index(i))...)
	}
	for _, name := range []struct{ fld, v string }{{"serviceAccountName", spec.ServiceAccountName},
		{"schedulerName", spec.SchedulerName}, {"priorityClassName", spec.PriorityClassName}} {
		if name.v == "" {
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(name.v) {
			errs = append(errs, field.Invalid(sp.Child(name.fld), name.v, msg))
		}
	}
	for i, s := range spec.ImagePullSecrets {
		if s.Name == "" {
			errs = append(errs, field.Required(sp.Child("imagePullSecrets").Index(i).Child("name"), ""))
		}
	}
	errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, sp.Child("nodeSelector"))...)
	errs = append(errs, validateTolerations(spec.Tolerations, sp.Child("tolerations"))...)
	errs = append(errs, validateAffinity(spec.Affinity, sp.Child("affinity"))...)
	errs = append(errs, validateTopologySpreadConstraints(spec.TopologySpreadConstraints, sp.Child("topologySpreadConstraints"))...)
	if sc := spec.SecurityContext; sc != nil {
		scp := sp.Child("securityContext")
		errs = append(errs, validateSeccompProfile(sc.SeccompProfile, scp.Child("seccompProfile"))...)
		if sc.FSGroupChangePolicy != nil && !sets.New(corev1.FSGroupChangeOnRootMismatch, corev1.FSGroupChangeAlways).Has(*sc.FSGroupChangePolicy) {
			errs = append(errs, field.NotSupported(scp.Child("fsGroupChangePolicy"), *sc.FSGroupChangePolicy,
				[]corev1.PodFSGroupChangePolicy{corev1.FSGroupChangeOnRootMismatch, corev1.FSGroupChangeAlways}))
		}
		errs = append(errs, validateIDs(scp, sc.RunAsUser, sc.RunAsGroup)...)
	}
	return errs
}

// validateVolumes checks the volumes and returns their names.
func validateVolumes(volumes []corev1.Volume, p *field.Path) (sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, v := range volumes {
		vp := p.Index(i)
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, msg))
		}
		if names.Has(v.Name) {
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		names.Insert(v.Name)
		var ref string
		var items []corev1.KeyToPath
		switch {
		case v.ConfigMap != nil:
			ref, items = v.ConfigMap.Name, v.ConfigMap.Items
			vp = vp.Child("configMap", "name")
		case v.Secret != nil:
			ref, items = v.Secret.SecretName, v.Secret.Items
			vp = vp.Child("secret", "secretName")
		default:
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(ref) {
			errs = append(errs, field.Invalid(vp, ref, msg))
		}
		for j, it := range items {
			ip := p.Index(i).Child("items").Index(j)
			if it.Key == "" {
				errs = append(errs, field.Required(ip.Child("key"), ""))
			}
			if it.Path == "" || strings.HasPrefix(it.Path, "/") || sets.New(strings.Split(it.Path, "/")...).Has("..") {
				errs = append(errs, field.Invalid(ip.Child("path"), it.Path, "must be a relative path without '..'"))
			}
		}
	}
	return names, errs
}

// validateContainer checks one container; names holds the names of the
// pod's containers so far.
func validateContainer(c *corev1.Container, volumes, names sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(c.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
	}
	if names.Has(c.Name) {
		errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
	}
	names.Insert(c.Name)
	errs = append(errs, validateImage(c.Image, p.Child("image"))...)
	if c.ImagePullPolicy != "" && !sets.New(corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever).Has(c.ImagePullPolicy) {
		errs = append(errs, field.NotSupported(p.Child("imagePullPolicy"), c.ImagePullPolicy,
			[]corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}))
	}
	ports := sets.New[string]()
	for i, port := range c.Ports {
		pp := p.Child("ports").Index(i)
		if port.Name != "" {
			for _, msg := range validation.IsValidPortName(port.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
			}
			if ports.Has(port.Name) {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			}
			ports.Insert(port.Name)
		}
		for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
			errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, msg))
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, msg))
			}
		}
		errs = append(errs, validateProtocol(port.Protocol, pp.Child("protocol"))...)
	}
	for i, e := range c.Env {
		for _, msg := range validation.IsRelaxedEnvVarName(e.Name) {
			errs = append(errs, field.Invalid(p.Child("env").Index(i).Child("name"), e.Name, msg))
		}
	}
	errs = append(errs, validateResources(&c.Resources, p.Child("resources"))...)
	mounts := sets.New[string]()
	for i, m := range c.VolumeMounts {
		mp := p.Child("volumeMounts").Index(i)
		if !volumes.Has(m.Name) {
			errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(mp.Child("mountPath"), ""))
		}
		if mounts.Has(m.MountPath) {
			errs = append(errs, field.Invalid(mp.Child("mountPath"), m.MountPath, "must be unique"))
		}
		mounts.Insert(m.MountPath)
	}
	if sc := c.SecurityContext; sc != nil {
		errs = append(errs, validateSeccompProfile(sc.SeccompProfile, p.Child("securityContext", "seccompProfile"))...)
		errs = append(errs, validateIDs(p.Child("securityContext"), sc.RunAsUser, sc.RunAsGroup)...)
	}
	return errs
}

// validateImage refuses an image the API server takes into a pod template
// but its pods never run with: the API server refuses a pod whose image has
// leading or trailing spaces (so the ReplicaSet controller never creates
// one), and the kubelet refuses any other reference it cannot parse
// (InvalidImageName).
func validateImage(image string, p *field.Path) field.ErrorList {
	if image == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if _, err := name.ParseReference(image); err != nil {
		return field.ErrorList{field.Invalid(p, image, "not an image reference the kubelet can pull: "+err.Error())}
	}
	return nil
}

// validateResources is the API server's validateResourceRequirements for
// a container.
func validateResources(r *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(list corev1.ResourceList, lp *field.Path) {
		for res, q := range list {
			rp := lp.Key(string(res))
			errs = append(errs, validateContainerResourceName(res, rp)...)
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(rp, q.String(), "must be greater than or equal to 0"))
			}
			if corehelper.IsExtendedResourceName(res) && q.MilliValue()%1000 != 0 {
				errs = append(errs, field.Invalid(rp, q.String(), "must be an integer"))
			}
		}
	}
	check(r.Limits, p.Child("limits"))
	check(r.Requests, p.Child("requests"))
	for res, q := range r.Requests {
		limit, ok := r.Limits[res]
		switch {
		case ok && q.Cmp(limit) != 0 && !corehelper.IsOvercommitAllowed(res):
			errs = append(errs, field.Invalid(p.Child("requests"), q.String(), fmt.Sprintf("must be equal to %s limit of %s", res, limit.String())))
		case ok && q.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(p.Child("requests"), q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", res, limit.String())))
		case !ok && !corehelper.IsOvercommitAllowed(res):
			errs = append(errs, field.Required(p.Child("limits"), "Limit must be set for non overcommitable resources"))
		}
	}
	return errs
}

func validateContainerResourceName(res corev1.ResourceName, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(res)) {
		errs = append(errs, field.Invalid(p, res, msg))
	}
	if len(errs) > 0 {
		return errs
	}
	if !strings.Contains(string(res), "/") {
		if !sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage).Has(res) && !corehelper.IsHugePageResourceName(res) {
			errs = append(errs, field.Invalid(p, res, "must be a standard resource for containers"))
		}
	} else if !corehelper.IsNativeResource(res) && !corehelper.IsExtendedResourceName(res) {
		errs = append(errs, field.Invalid(p, res, "doesn't follow extended resource name standard"))
	}
	return errs
}

func validateProtocol(proto corev1.Protocol, p *field.Path) field.ErrorList {
	if proto != "" && !sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP).Has(proto) {
		return field.ErrorList{field.NotSupported(p, proto, []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP})}
	}
	return nil
}

func validateIDs(p *field.Path, user, group *int64) field.ErrorList {
	var errs field.ErrorList
	if user != nil {
		for _, msg := range validation.IsValidUserID(*user) {
			errs = append(errs, field.Invalid(p.Child("runAsUser"), *user, msg))
		}
	}
	if group != nil {
		for _, msg := range validation.IsValidGroupID(*group) {
			errs = append(errs, field.Invalid(p.Child("runAsGroup"), *group, msg))
		}
	}
	return errs
}

func validateSeccompProfile(sp *corev1.SeccompProfile, p *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	switch sp.Type {
	case corev1.SeccompProfileTypeLocalhost:
		if sp.LocalhostProfile == nil || *sp.LocalhostProfile == "" {
			return field.ErrorList{field.Required(p.Child("localhostProfile"), "must be set when seccomp type is Localhost")}
		}
	case corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined:
		if sp.LocalhostProfile != nil {
			return field.ErrorList{field.Invalid(p.Child("localhostProfile"), sp.LocalhostProfile, "can only be set when seccomp type is Localhost")}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), sp.Type, []corev1.SeccompProfileType{
			corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined})}
	}
	return nil
}

// validateTolerations is the API server's ValidateTolerations, with the
// comparison operators (Lt, Gt) behind their alpha feature gate, off.
func validateTolerations(tolerations []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		tp := p.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, tp.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(tp.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(tp.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(tp.Child("operator"), t.Value, msg))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(tp.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(tp.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		if t.Effect != "" && !sets.New(corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute).Has(t.Effect) {
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect,
				[]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
		}
	}
	return errs
}

func validateAffinity(a *corev1.Affinity, p *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		np := p.Child("nodeAffinity")
		if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			rp := np.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			if len(req.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(rp, "must have at least one node selector term"))
			}
			for i, term := range req.NodeSelectorTerms {
				errs = append(errs, validateNodeSelectorTerm(term, rp.Index(i))...)
			}
		}
		for i, pref := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			pp := np.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(pref.Weight, pp.Child("weight"))...)
			errs = append(errs, validateNodeSelectorTerm(pref.Preference, pp.Child("preference"))...)
		}
	}
	type podTerms struct {
		fld  string
		req  []corev1.PodAffinityTerm
		pref []corev1.WeightedPodAffinityTerm
	}
	var terms []podTerms
	if pa := a.PodAffinity; pa != nil {
		terms = append(terms, podTerms{"podAffinity", pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution})
	}
	if pa := a.PodAntiAffinity; pa != nil {
		terms = append(terms, podTerms{"podAntiAffinity", pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution})
	}
	for _, pa := range terms {
		fld := pa.fld
		for i, term := range pa.req {
			errs = append(errs, validatePodAffinityTerm(term, p.Child(fld, "requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
		}
		for i, w := range pa.pref {
			wp := p.Child(fld, "preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(w.Weight, wp.Child("weight"))...)
			errs = append(errs, validatePodAffinityTerm(w.PodAffinityTerm, wp.Child("podAffinityTerm"))...)
		}
	}
	return errs
}

func validateWeight(w int32, p *field.Path) field.ErrorList {
	if w <= 0 || w > 100 {
		return field.ErrorList{field.Invalid(p, w, "must be in the range 1-100")}
	}
	return nil
}

func validateNodeSelectorTerm(term corev1.NodeSelectorTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range term.MatchExpressions {
		rp := p.Child("matchExpressions").Index(i)
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				errs = append(errs, field.Forbidden(rp.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(r.Values) != 1 {
				errs = append(errs, field.Required(rp.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
			}
		default:
			errs = append(errs, field.Invalid(rp.Child("operator"), r.Operator, "not a valid selector operator"))
		}
		errs = append(errs, metav1validation.ValidateLabelName(r.Key, rp.Child("key"))...)
		for j, v := range r.Values {
			for _, msg := range validation.IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(rp.Child("values").Index(j), v, msg))
			}
		}
	}
	for i, r := range term.MatchFields {
		rp := p.Child("matchFields").Index(i)
		if r.Key != "metadata.name" {
			errs = append(errs, field.NotSupported(rp.Child("key"), r.Key, []string{"metadata.name"}))
		}
		if (r.Operator != corev1.NodeSelectorOpIn && r.Operator != corev1.NodeSelectorOpNotIn) || len(r.Values) != 1 {
			errs = append(errs, field.Invalid(rp, r.Operator, "must be 'In' or 'NotIn' with only one value for a node field selector"))
		}
	}
	return errs
}

func validatePodAffinityTerm(term corev1.PodAffinityTerm, p *field.Path) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs := metav1validation.ValidateLabelSelector(term.LabelSelector, opts, p.Child("labelSelector"))
	errs = append(errs, metav1validation.ValidateLabelSelector(term.NamespaceSelector, opts, p.Child("namespaceSelector"))...)
	for _, ns := range term.Namespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(p.Child("namespace"), ns, msg))
		}
	}
	if term.TopologyKey == "" {
		return append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
	}
	return append(errs, metav1validation.ValidateLabelName(term.TopologyKey, p.Child("topologyKey"))...)
}

func validateTopologySpreadConstraints(constraints []corev1.TopologySpreadConstraint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, c := range constraints {
		cp := p.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(cp.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(cp.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, cp.Child("topologyKey"))...)
		}
		if !sets.New(corev1.DoNotSchedule, corev1.ScheduleAnyway).Has(c.WhenUnsatisfiable) {
			errs = append(errs, field.NotSupported(cp.Child("whenUnsatisfiable"), c.WhenUnsatisfiable,
				[]corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}))
		}
		key := c.TopologyKey + "/" + string(c.WhenUnsatisfiable)
		if seen.Has(key) {
			errs = append(errs, field.Duplicate(cp.Child("{topologyKey, whenUnsatisfiable}"), key))
		}
		seen.Insert(key)
		if c.MinDomains != nil && (*c.MinDomains <= 0 || c.WhenUnsatisfiable != corev1.DoNotSchedule) {
			errs = append(errs, field.Invalid(cp.Child("minDomains"), *c.MinDomains,
				fmt.Sprintf("must be greater than zero, and only with whenUnsatisfiable=%s", corev1.DoNotSchedule)))
		}
		for _, p := range []struct {
			fld string
			pol *corev1.NodeInclusionPolicy
		}{{"nodeAffinityPolicy", c.NodeAffinityPolicy}, {"nodeTaintsPolicy", c.NodeTaintsPolicy}} {
			if p.pol != nil && !sets.New(corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore).Has(*p.pol) {
				errs = append(errs, field.NotSupported(cp.Child(p.fld), *p.pol,
					[]corev1.NodeInclusionPolicy{corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore}))
			}
		}
		for j, k := range c.MatchLabelKeys {
			errs = append(errs, metav1validation.ValidateLabelName(k, cp.Child("matchLabelKeys").Index(j))...)
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, cp.Child("labelSelector"))...)
	}
	return errs
}
