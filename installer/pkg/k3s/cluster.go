package k3s

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	helmv1 "github.com/k3s-io/helm-controller/pkg/apis/helm.cattle.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// ManifestNodeAnnotation names, on the HelmChart, the one server whose
// manifests directory carries it. k3s applies every file of a server's
// manifests directory again each time that server starts, so a second copy
// on another server would bring Ballast back after an uninstall.
const ManifestNodeAnnotation = "ballast-sched.io/manifest-node"

var (
	// HelmChartResource is helm-controller's HelmChart.
	HelmChartResource = schema.GroupVersionResource{Group: "helm.cattle.io", Version: "v1", Resource: "helmcharts"}
	// AddonResource is k3s's record of an applied manifest file, named after
	// the file up to its first dot.
	AddonResource = schema.GroupVersionResource{Group: "k3s.cattle.io", Version: "v1", Resource: "addons"}
)

// Cluster is what the API says about the k3s servers and Ballast's HelmChart.
type Cluster struct {
	Servers []Server
	// Local is the node name of the host the command runs on.
	Local string
	// Leader is the host whose embedded scheduler holds the kube-scheduler
	// lease; "" when nobody does.
	Leader string
	// Chart is Ballast's HelmChart; nil when the cluster has none.
	Chart *helmv1.HelmChart
}

// ReadCluster reads the servers, the scheduler lease and Ballast's HelmChart.
func ReadCluster(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, local string) (Cluster, error) {
	c := Cluster{Local: local}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return c, fmt.Errorf("list nodes: %w", err)
	}
	c.Servers = Servers(nodes.Items)
	if c.Leader, err = SchedulerLeader(ctx, client); err != nil {
		return c, err
	}
	if c.Chart, err = GetHelmChart(ctx, dyn); err != nil {
		return c, err
	}
	return c, nil
}

// GetHelmChart returns Ballast's HelmChart, nil when there is none or the
// API server does not serve HelmCharts.
func GetHelmChart(ctx context.Context, dyn dynamic.Interface) (*helmv1.HelmChart, error) {
	u, err := dyn.Resource(HelmChartResource).Namespace(HelmChartNamespace).Get(ctx, HelmChartName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read HelmChart %s/%s: %w", HelmChartNamespace, HelmChartName, err)
	}
	hc := &helmv1.HelmChart{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, hc); err != nil {
		return nil, fmt.Errorf("decode HelmChart %s/%s: %w", HelmChartNamespace, HelmChartName, err)
	}
	return hc, nil
}

// ChartValues returns the values of the cluster's HelmChart.
func (c Cluster) ChartValues() (map[string]any, error) {
	vals := map[string]any{}
	if c.Chart == nil {
		return vals, nil
	}
	if err := yaml.Unmarshal([]byte(c.Chart.Spec.ValuesContent), &vals); err != nil {
		return nil, fmt.Errorf("values of HelmChart %s/%s: %w", HelmChartNamespace, HelmChartName, err)
	}
	return vals, nil
}

// ChartMode is the scheduler mode of the cluster's HelmChart, "" without one.
func (c Cluster) ChartMode() (Mode, error) {
	if c.Chart == nil {
		return "", nil
	}
	vals, err := c.ChartValues()
	if err != nil {
		return "", err
	}
	if m := GlobalString(vals, "schedulerMode"); m != "" {
		return Mode(m), nil
	}
	return ModeSecond, nil
}

// ManifestElsewhere returns the server other than this one whose manifests
// directory carries the HelmChart, "" when it is this one, nobody says, or
// that server is no longer in the cluster.
func (c Cluster) ManifestElsewhere() string {
	if c.Chart == nil {
		return ""
	}
	node := c.Chart.Annotations[ManifestNodeAnnotation]
	if node == "" || node == c.Local {
		return ""
	}
	for _, s := range c.Servers {
		if s.Node == node {
			return node
		}
	}
	return ""
}

// CheckServers fails when a server's embedded scheduler cannot be told
// apart, naming each such server.
func (c Cluster) CheckServers() error {
	var unknown []string
	for _, s := range c.Servers {
		if s.Scheduler == SchedulerUnknown {
			unknown = append(unknown, s.Node+" ("+s.Detail+")")
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("cannot tell whether the embedded scheduler of server %s serves default-scheduler: "+
			"k3s records its arguments in the %s annotation of every node it starts; start k3s there first",
			strings.Join(unknown, ", "), NodeArgsAnnotation)
	}
	return nil
}

// in returns the servers in state, except the node skip.
func (c Cluster) in(state SchedulerState, skip string) []string {
	var out []string
	for _, s := range c.Servers {
		if s.Node != skip && s.Scheduler == state {
			out = append(out, s.Node)
		}
	}
	return out
}

// leaderLast orders the servers to restart: the lease holder last. A server
// restarted while another holds the lease does not lead afterwards, so the
// holder's restart is the one moment the embedded scheduler that schedules
// changes, and by then every other server is restarted too.
func (c Cluster) leaderLast(nodes []string) []string {
	out := slices.Clone(nodes)
	slices.SortStableFunc(out, func(a, b string) int {
		switch {
		case a == c.Leader && b != c.Leader:
			return 1
		case b == c.Leader && a != c.Leader:
			return -1
		}
		return 0
	})
	return out
}

// RestartCommand restarts k3s on a server, systemd then OpenRC.
const RestartCommand = "sudo systemctl restart k3s (OpenRC: sudo rc-service k3s restart)"

// ConversionSteps lists what is left before every server's embedded
// scheduler serves only the bootstrap profile, in order; none once all do.
// localWritten says whether this host's drop-in is written.
func (c Cluster) ConversionSteps(localWritten bool) []string {
	others := c.in(SchedulerDefault, c.Local)
	restart := others
	if localWritten {
		restart = c.in(SchedulerDefault, "")
	}
	var steps []string
	if len(others) > 0 {
		steps = append(steps, fmt.Sprintf("on %s (not converted): sudo ballast install --mode replaceDefault, "+
			"which writes that server's drop-in; do not restart k3s there yet", strings.Join(others, ", ")))
	}
	if len(restart) > 0 {
		steps = append(steps, c.restartStep(restart, "converted"))
	}
	return steps
}

// RevertSteps lists what is left, once this host's drop-in is removed and
// Ballast no longer serves default-scheduler, before every server's embedded
// scheduler serves it again; command removes a server's drop-in.
func (c Cluster) RevertSteps(command string) []string {
	others := c.in(SchedulerConverted, c.Local)
	restart := c.in(SchedulerConverted, "")
	var steps []string
	if len(others) > 0 {
		steps = append(steps, fmt.Sprintf("on %s (still converted): %s, which removes that server's drop-in",
			strings.Join(others, ", "), command))
	}
	if len(restart) > 0 {
		steps = append(steps, c.restartStep(restart, "not converted"))
	}
	return steps
}

func (c Cluster) restartStep(nodes []string, want string) string {
	ordered := c.leaderLast(nodes)
	step := fmt.Sprintf("restart k3s on %s, one after another in this order: %s", strings.Join(ordered, ", "), RestartCommand)
	if slices.Contains(nodes, c.Leader) && len(nodes) > 1 {
		step += fmt.Sprintf("; %s goes last because its embedded scheduler holds the lease %s/%s: while it is up no "+
			"other embedded scheduler leads, so one scheduler serves default-scheduler throughout", c.Leader, SchedulerLeaseNamespace, SchedulerLeaseName)
	}
	return step + fmt.Sprintf("; then `ballast status` shows every server %s", want)
}

// Describe says what a server's embedded scheduler does; for this host it
// also compares with the drop-in on disk (dropIn: written or not).
func (c Cluster) Describe(s Server, dropIn bool) string {
	local := s.Node == c.Local
	switch {
	case s.Scheduler == SchedulerConverted && local && !dropIn:
		return "converted, drop-in removed: restart k3s to serve default-scheduler again"
	case s.Scheduler == SchedulerConverted:
		return "converted: drop-in in effect"
	case s.Scheduler == SchedulerDefault && local && dropIn:
		return "drop-in written, k3s not restarted: serves default-scheduler until it restarts"
	case s.Scheduler == SchedulerDefault:
		return "not converted: serves default-scheduler"
	case s.Scheduler == SchedulerDisabled:
		return "no embedded scheduler (--disable-scheduler)"
	}
	return "unknown: " + s.Detail
}

// LocalNodeName returns this host's node name: the subject of the kubelet
// client certificate k3s issues to the node (CN system:node:<name>), else
// the lower-cased hostname, k3s's default node name.
func LocalNodeName(p Paths) (string, error) {
	data, err := os.ReadFile(p.KubeletClientCert())
	if err == nil {
		if name, ok := nodeNameFromCert(data); ok {
			return name, nil
		}
	}
	host, herr := os.Hostname()
	if herr != nil {
		return "", errors.Join(fmt.Errorf("hostname: %w", herr), err)
	}
	return strings.ToLower(host), nil
}

func nodeNameFromCert(data []byte) (string, bool) {
	block, _ := pem.Decode(data)
	if block == nil {
		return "", false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", false
	}
	name, ok := strings.CutPrefix(cert.Subject.CommonName, "system:node:")
	return name, ok && name != ""
}
