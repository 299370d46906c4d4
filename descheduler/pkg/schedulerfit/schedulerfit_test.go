package schedulerfit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func node(name string, edit ...func(*v1.Node)) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"),
			v1.ResourcePods: resource.MustParse("110")}}}
	for _, e := range edit {
		e(n)
	}
	return n
}

func pod(name, on string, edit ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: v1.PodSpec{NodeName: on, SchedulerName: "ballast-scheduler", Containers: []v1.Container{{Name: "c", Image: "x",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("512Mi")}}}}},
		Status: v1.PodStatus{Phase: v1.PodRunning}}
	for _, e := range edit {
		e(p)
	}
	return p
}

// newFit builds the filters of the configuration config (none: the default
// profile) over a fake cluster holding objs.
func newFit(t *testing.T, config string, objs ...runtime.Object) *Fit {
	t.Helper()
	path := ""
	if config != "" {
		path = filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	factory.Core().V1().Pods().Informer()
	factory.Core().V1().Nodes().Informer()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f, err := New(ctx, path, "ballast-scheduler", client, factory)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return f
}

// The scheduler's own filters, not a subset: a volume's node affinity, a
// taint, a host port and requests all turn a node down, each named by the
// scheduler's plugin, and a pod placed as if it were not bound does not
// count against itself.
func TestFits(t *testing.T) {
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-db"}, Spec: v1.PersistentVolumeSpec{
		Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/db"}},
		ClaimRef:               &v1.ObjectReference{Namespace: "default", Name: "data-db"},
		NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{"pi-1"}}}}}}}},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound}}
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-db", Namespace: "default",
		Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
		Spec:   v1.PersistentVolumeClaimSpec{VolumeName: "pv-db", AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound}}
	db := pod("db", "pi-1", func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data-db"}}}}
	})
	tainted := node("tainted", func(n *v1.Node) {
		n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}
	})
	small := node("small", func(n *v1.Node) { n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("1") })
	port := func(p *v1.Pod) {
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 8080, HostPort: 8080}}
	}
	web := pod("web", "pi-1", port)
	other := pod("other", "pi-2", port)
	// One 800m pod on small: web's 500m more does not fit its 1 CPU.
	busy := pod("busy", "small", func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("800m") })
	f := newFit(t, "", node("pi-1"), node("pi-2"), node("pi-3"), tainted, small, pv, pvc, db, web, other, busy)
	for _, tc := range []struct {
		name, node string
		pod        *v1.Pod
		want       string // the plugin that turns the node down; empty: it fits
	}{
		{name: "a volume kept on pi-1", pod: db, node: "pi-2", want: "VolumeBinding"},
		{name: "its own node, as if not bound there", pod: db, node: "pi-1"},
		{name: "a taint it does not tolerate", pod: pod("plain", "pi-1"), node: "tainted", want: "TaintToleration"},
		{name: "a host port taken", pod: web, node: "pi-2", want: "NodePorts"},
		{name: "the host port free", pod: web, node: "pi-3"},
		{name: "requests that do not fit", pod: web, node: "small", want: "NodeResourcesFit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n *v1.Node
			for _, x := range []*v1.Node{node("pi-1"), node("pi-2"), node("pi-3"), tainted, small} {
				if x.Name == tc.node {
					n = x
				}
			}
			err := f.Fits(context.Background(), tc.pod, []*v1.Node{n})[0]
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("turned down: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Fits = %v, want it turned down by %s", err, tc.want)
			}
		})
	}
	// Many nodes judged in one call, on one view and one pre-filter state,
	// get each the verdict a call of their own gets.
	all := []*v1.Node{node("pi-1"), node("pi-2"), node("pi-3"), tainted, small}
	for _, p := range []*v1.Pod{db, web, pod("plain", "pi-1")} {
		together := f.Fits(context.Background(), p, all)
		if len(together) != len(all) {
			t.Fatalf("%s: %d verdicts for %d nodes", p.Name, len(together), len(all))
		}
		for i, n := range all {
			alone := f.Fits(context.Background(), p, []*v1.Node{n})[0]
			if (alone == nil) != (together[i] == nil) || (alone != nil && alone.Error() != together[i].Error()) {
				t.Errorf("%s on %s: %v judged with the other nodes, %v alone", p.Name, n.Name, together[i], alone)
			}
		}
	}
}

// Ballast's plugins of the scheduler's profile are left out (the balance
// plugins judge load themselves), and a profile the file does not have is
// kube-scheduler's default one.
func TestFitsWithTheSchedulersProfile(t *testing.T) {
	const config = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ballast-scheduler
  plugins:
    multiPoint:
      enabled: [{name: LoadAware}]
    filter:
      disabled: [{name: TaintToleration}]
  pluginConfig:
  - name: LoadAware
    args: {thresholds: {memory: 60}}
`
	tainted := node("tainted", func(n *v1.Node) {
		n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}
	})
	f := newFit(t, config, node("pi-1"), tainted)
	// The profile turns TaintToleration off at Filter: the scheduler would
	// place the pod there, so the fit says so.
	if err := f.Fits(context.Background(), pod("plain", "pi-1"), []*v1.Node{tainted})[0]; err != nil {
		t.Errorf("the profile's filters turned the node down: %v", err)
	}
	g := newFit(t, strings.Replace(config, "ballast-scheduler", "other", 1), node("pi-1"), tainted)
	if err := g.Fits(context.Background(), pod("plain", "pi-1"), []*v1.Node{tainted})[0]; err == nil || !strings.Contains(err.Error(), "TaintToleration") {
		t.Errorf("without the profile, kube-scheduler's defaults: %v, want TaintToleration", err)
	}
}

func TestReadsAreWhatTheFiltersList(t *testing.T) {
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := New(ctx, "", "ballast-scheduler", client, factory); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	listed := map[Resource]bool{}
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" {
			listed[Resource{a.GetResource().Group, a.GetResource().Resource}] = true
		}
	}
	want := map[Resource]bool{}
	for _, r := range Reads {
		want[r] = true
	}
	if diff := cmp.Diff(want, listed); diff != "" {
		t.Errorf("Reads is not what the filters list (-Reads,+listed):\n%s", diff)
	}
}
