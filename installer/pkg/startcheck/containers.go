package startcheck

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/core/startup"
)

// componentLabel names the Ballast component a workload runs.
const componentLabel = "app.kubernetes.io/component"

// examplePodIP stands for the address the kubelet gives a pod
// (status.podIP, status.hostIP): one of the documentation range.
const examplePodIP = "192.0.2.10"

// container is one container of a rendered workload, as its component would
// start in it.
type container struct {
	component string
	startup.Container
}

// containers returns the containers of the Deployments in manifest that run
// a Ballast component, each with its arguments, environment and the files
// the manifest's ConfigMaps mount into it.
func containers(manifest string) ([]container, error) {
	configMaps := map[string]*corev1.ConfigMap{}
	var deployments []*appsv1.Deployment
	dec := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the rendered manifests: %w", err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("reading the rendered manifests: %w", err)
		}
		switch meta.Kind {
		case "ConfigMap":
			cm := &corev1.ConfigMap{}
			if err := yaml.Unmarshal(doc, cm); err != nil {
				return nil, fmt.Errorf("reading a rendered ConfigMap: %w", err)
			}
			configMaps[cm.Namespace+"/"+cm.Name] = cm
		case "Deployment":
			d := &appsv1.Deployment{}
			if err := yaml.Unmarshal(doc, d); err != nil {
				return nil, fmt.Errorf("reading a rendered Deployment: %w", err)
			}
			deployments = append(deployments, d)
		}
	}
	var out []container
	for _, d := range deployments {
		component := d.Labels[componentLabel]
		if component == "" {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			sc := startup.Container{
				Workload:    "Deployment/" + d.Name,
				LongRunning: true,
				Env:         env(d, c, configMaps),
				Files:       files(d, c, configMaps),
			}
			mapping := expansion.MappingFuncFor(sc.Env)
			for _, a := range c.Args {
				sc.Args = append(sc.Args, expansion.Expand(a, mapping))
			}
			out = append(out, container{component: component, Container: sc})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].component < out[j].component })
	return out, nil
}

// env returns the container's environment as the kubelet would set it,
// with example values for what only the kubelet knows.
func env(d *appsv1.Deployment, c corev1.Container, configMaps map[string]*corev1.ConfigMap) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			out[e.Name] = expansion.Expand(e.Value, expansion.MappingFuncFor(out))
		case e.ValueFrom.FieldRef != nil:
			switch e.ValueFrom.FieldRef.FieldPath {
			case "status.podIP", "status.hostIP":
				out[e.Name] = examplePodIP
			case "metadata.namespace":
				out[e.Name] = d.Namespace
			case "metadata.name":
				out[e.Name] = d.Name + "-0"
			default:
				out[e.Name] = ""
			}
		case e.ValueFrom.ConfigMapKeyRef != nil:
			if cm, ok := configMaps[d.Namespace+"/"+e.ValueFrom.ConfigMapKeyRef.Name]; ok {
				out[e.Name] = cm.Data[e.ValueFrom.ConfigMapKeyRef.Key]
			}
		}
	}
	return out
}

// files returns what the manifest's ConfigMaps mount into the container, by
// path in the container. A ConfigMap the manifest does not hold (optional,
// or made by someone else) mounts nothing.
func files(d *appsv1.Deployment, c corev1.Container, configMaps map[string]*corev1.ConfigMap) map[string][]byte {
	volumes := map[string]*corev1.ConfigMapVolumeSource{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			volumes[v.Name] = v.ConfigMap
		}
	}
	out := map[string][]byte{}
	for _, m := range c.VolumeMounts {
		src, ok := volumes[m.Name]
		if !ok {
			continue
		}
		cm, ok := configMaps[d.Namespace+"/"+src.Name]
		if !ok {
			continue
		}
		keys := map[string]string{} // key → path in the volume
		if len(src.Items) == 0 {
			for k := range cm.Data {
				keys[k] = k
			}
		}
		for _, it := range src.Items {
			keys[it.Key] = it.Path
		}
		for k, p := range keys {
			data, ok := cm.Data[k]
			if !ok {
				continue
			}
			switch {
			case m.SubPath == "":
				out[path.Join(m.MountPath, p)] = []byte(data)
			case m.SubPath == p:
				out[m.MountPath] = []byte(data)
			}
		}
	}
	return out
}
