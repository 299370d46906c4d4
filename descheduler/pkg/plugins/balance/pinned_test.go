package balance

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type fakeVolumes struct {
	claims  map[string]*v1.PersistentVolumeClaim
	volumes map[string]*v1.PersistentVolume
}

func (f fakeVolumes) Claim(_, name string) (*v1.PersistentVolumeClaim, error) {
	if c, ok := f.claims[name]; ok {
		return c, nil
	}
	return nil, errors.New("not found")
}

func (f fakeVolumes) Volume(name string) (*v1.PersistentVolume, error) {
	if v, ok := f.volumes[name]; ok {
		return v, nil
	}
	return nil, errors.New("not found")
}

func node(name, zone string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		v1.LabelHostname: name, v1.LabelTopologyZone: zone}}}
}

// affinity is a volume's required node affinity: key In values.
func affinity(key string, values ...string) *v1.VolumeNodeAffinity {
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}}}}
}

func TestPinnedBy(t *testing.T) {
	nodes := []*v1.Node{node("pi-1", "rack-a"), node("pi-2", "rack-a"), node("nuc", "desk")}
	bound := func(name, pv string) *v1.PersistentVolumeClaim {
		return &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PersistentVolumeClaimSpec{VolumeName: pv}}
	}
	vols := fakeVolumes{
		claims: map[string]*v1.PersistentVolumeClaim{
			"local":       bound("local", "pv-local"),
			"local-path":  bound("local-path", "pv-local-path"),
			"zonal":       bound("zonal", "pv-zonal"),
			"nfs":         bound("nfs", "pv-nfs"),
			"provisioned": {ObjectMeta: metav1.ObjectMeta{Name: "provisioned", Annotations: map[string]string{selectedNode: "pi-1"}}},
			"elsewhere":   {ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Annotations: map[string]string{selectedNode: "nuc"}}},
			"lost":        bound("lost", "pv-gone"),
		},
		volumes: map[string]*v1.PersistentVolume{
			// A local volume, and what k3s's local-path provisioner makes: a
			// hostPath volume with node affinity to one host.
			"pv-local": {ObjectMeta: metav1.ObjectMeta{Name: "pv-local"}, Spec: v1.PersistentVolumeSpec{
				PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disk"}},
				NodeAffinity:           affinity(v1.LabelHostname, "pi-1")}},
			"pv-local-path": {ObjectMeta: metav1.ObjectMeta{Name: "pv-local-path"}, Spec: v1.PersistentVolumeSpec{
				PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/lib/rancher/k3s/storage/x"}},
				NodeAffinity:           affinity(v1.LabelHostname, "pi-1")}},
			// Reachable from every node of its zone: pi-2 too.
			"pv-zonal": {ObjectMeta: metav1.ObjectMeta{Name: "pv-zonal"}, Spec: v1.PersistentVolumeSpec{NodeAffinity: affinity(v1.LabelTopologyZone, "rack-a")}},
			"pv-nfs": {ObjectMeta: metav1.ObjectMeta{Name: "pv-nfs"}, Spec: v1.PersistentVolumeSpec{
				PersistentVolumeSource: v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "nas", Path: "/media"}}}},
		},
	}
	pod := func(node string, claims ...string) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "home"}, Spec: v1.PodSpec{NodeName: node,
			Volumes: []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}}}
		for _, c := range claims {
			p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: c, VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		pod    *v1.Pod
		pinned bool
	}{
		{name: "no claim", pod: pod("pi-1")},
		{name: "local volume on its node", pod: pod("pi-1", "local"), pinned: true},
		{name: "local-path volume on its node", pod: pod("pi-1", "local-path"), pinned: true},
		{name: "a network volume beside a local one", pod: pod("pi-1", "nfs", "local-path"), pinned: true},
		{name: "zonal volume another node of the zone reaches", pod: pod("pi-1", "zonal")},
		{name: "network volume", pod: pod("pi-1", "nfs")},
		{name: "volume being provisioned on its node", pod: pod("pi-1", "provisioned"), pinned: true},
		{name: "claim provisioned for another node", pod: pod("pi-1", "elsewhere")},
		{name: "claim that cannot be read", pod: pod("pi-1", "missing"), pinned: true},
		{name: "volume that cannot be read", pod: pod("pi-1", "lost"), pinned: true},
		{name: "pod on no node", pod: pod("", "local")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why := PinnedBy(tc.pod, nodes, vols)
			if (why != "") != tc.pinned {
				t.Errorf("PinnedBy = %q, want pinned %t", why, tc.pinned)
			}
		})
	}
	// The only node that can reach a zonal volume is the pod's own.
	if why := PinnedBy(pod("pi-1", "zonal"), []*v1.Node{nodes[0], nodes[2]}, vols); why == "" {
		t.Error("a zonal volume no other node reaches does not pin its pod")
	}
}
