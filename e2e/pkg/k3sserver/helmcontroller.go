package k3sserver

import (
	"context"
	"fmt"
	"strconv"
	"time"

	k3scrds "github.com/k3s-io/api/pkg/crds"
	helmchart "github.com/k3s-io/helm-controller/pkg/controllers/chart"
	helmcommon "github.com/k3s-io/helm-controller/pkg/controllers/common"
	helmcrds "github.com/k3s-io/helm-controller/pkg/crds"
	helmfactory "github.com/k3s-io/helm-controller/pkg/generated/controllers/helm.cattle.io"
	"github.com/rancher/wrangler/v3/pkg/apply"
	"github.com/rancher/wrangler/v3/pkg/crd"
	"github.com/rancher/wrangler/v3/pkg/generated/controllers/batch"
	"github.com/rancher/wrangler/v3/pkg/generated/controllers/core"
	"github.com/rancher/wrangler/v3/pkg/generated/controllers/rbac"
	"github.com/rancher/wrangler/v3/pkg/schemes"
	"github.com/rancher/wrangler/v3/pkg/start"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// HelmJobClusterRole is the ClusterRole k3s binds helm-controller's Jobs to.
const HelmJobClusterRole = "cluster-admin"

// CreateCRDs creates the custom resources a k3s server creates when it starts
// (k3s's Addon and ETCDSnapshotFile, helm-controller's HelmChart and
// HelmChartConfig) and waits until they are served.
func CreateCRDs(ctx context.Context, cfg *rest.Config) error {
	client, err := apiextclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the apiextensions client: %w", err)
	}
	var all []*apiextv1.CustomResourceDefinition
	for _, list := range []func() ([]*apiextv1.CustomResourceDefinition, error){k3scrds.List, helmcrds.List} {
		crds, err := list()
		if err != nil {
			return fmt.Errorf("reading k3s's CRDs: %w", err)
		}
		all = append(all, crds...)
	}
	if err := crd.BatchCreateCRDs(ctx, client.ApiextensionsV1().CustomResourceDefinitions(), nil, time.Minute, all); err != nil {
		return fmt.Errorf("creating k3s's CRDs: %w", err)
	}
	return nil
}

// HelmController is helm-controller's chart controller as a k3s server
// registers it.
type HelmController struct {
	// JobImage is the image of the install and delete Jobs (k3s's
	// --helm-job-image).
	JobImage string
	// APIServerPort is the port the Jobs of bootstrap charts reach the API
	// server on, from the host network (k3s's --https-listen-port).
	APIServerPort int
	// NodeName names this server in the events it records.
	NodeName string
}

// Start registers helm-controller's controllers as k3s's server does (on
// every namespace, claiming HelmCharts as "helm-controller", binding the
// Jobs' ServiceAccounts to cluster-admin) and starts them; they run until ctx
// ends. The CRDs must exist (CreateCRDs).
func (h HelmController) Start(ctx context.Context, cfg *rest.Config) error {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = helmcommon.Name
	// As from k3s's kubeconfig: JSON, which custom resources need.
	cfg.ContentType, cfg.AcceptContentTypes = "", ""
	k8s, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating helm-controller's client: %w", err)
	}
	helms, err := helmfactory.NewFactoryFromConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating helm-controller's HelmChart factory: %w", err)
	}
	batches, err := batch.NewFactoryFromConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating helm-controller's Job factory: %w", err)
	}
	rbacs, err := rbac.NewFactoryFromConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating helm-controller's RBAC factory: %w", err)
	}
	cores, err := core.NewFactoryFromConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating helm-controller's core factory: %w", err)
	}
	if h.JobImage != "" {
		helmchart.DefaultJobImage = h.JobImage
	}
	ap := apply.New(k8s, apply.NewClientFactory(cfg)).WithDynamicLookup().WithSetOwnerReference(false, false)
	helm, jobs, auth, cv1 := helms.Helm().V1(), batches.Batch().V1(), rbacs.Rbac().V1(), cores.Core().V1()
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithName(helmcommon.Name))
	helmchart.Register(ctx,
		metav1.NamespaceAll,
		helmcommon.Name,
		HelmJobClusterRole,
		strconv.Itoa(h.APIServerPort),
		k8s,
		ap,
		eventRecorder(ctx, k8s, helmcommon.Name, h.NodeName),
		helm.HelmChart(), helm.HelmChart().Cache(),
		helm.HelmChartConfig(), helm.HelmChartConfig().Cache(),
		jobs.Job(), jobs.Job().Cache(),
		auth.ClusterRoleBinding(),
		cv1.ServiceAccount(),
		cv1.ConfigMap(),
		cv1.Secret(), cv1.Secret().Cache(),
	)
	if err := start.All(ctx, 5, helms, batches, rbacs, cores); err != nil {
		return fmt.Errorf("starting helm-controller: %w", err)
	}
	klog.FromContext(ctx).Info("Started helm-controller", "jobImage", helmchart.DefaultJobImage, "jobClusterRole", HelmJobClusterRole)
	return nil
}

// eventRecorder records a controller's events in the API, as k3s's do.
func eventRecorder(ctx context.Context, k8s kubernetes.Interface, component, node string) record.EventRecorder {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartStructuredLogging(2)
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: k8s.CoreV1().Events(metav1.NamespaceAll)})
	return b.NewRecorder(schemes.All, corev1.EventSource{Component: component, Host: node})
}
