package integration

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/core/cli/kube"
)

// startCluster starts a control plane for one test; -short skips the test.
func startCluster(t *testing.T) (*cluster.Cluster, context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c, err := cluster.Start(t, cluster.Options{})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	return c, t.Context()
}

func createNamespace(t *testing.T, ctx context.Context, client kubernetes.Interface, name string) {
	t.Helper()
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// serviceAccountUser is how the API server names a ServiceAccount.
func serviceAccountUser(namespace, name string) (string, []string) {
	return "system:serviceaccount:" + namespace + ":" + name,
		[]string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
}

// asServiceAccount returns a client config that acts with exactly the
// ServiceAccount's permissions (admin credentials, impersonating it).
func asServiceAccount(c *cluster.Cluster, namespace, name string) *rest.Config {
	cfg := rest.CopyConfig(c.RestConfig)
	user, groups := serviceAccountUser(namespace, name)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return cfg
}

// serviceAccountKubeconfig writes a kubeconfig impersonating the
// ServiceAccount, for components that take a kubeconfig path.
func serviceAccountKubeconfig(t *testing.T, c *cluster.Cluster, namespace, name string) string {
	t.Helper()
	cfg := c.RestConfig
	user, groups := serviceAccountUser(namespace, name)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, TLSServerName: cfg.ServerName, InsecureSkipTLSVerify: cfg.Insecure}
	kc.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		Impersonate: user, ImpersonateGroups: groups}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "sa"}
	kc.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func waitFor(t *testing.T, ctx context.Context, what string, timeout time.Duration, cond func(context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lastErr error
	for {
		ok, err := cond(ctx)
		if ok {
			return
		}
		lastErr = err
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, lastErr)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// helmGetter is the Helm SDK's view of the cluster.
func helmGetter(c *cluster.Cluster, namespace string) genericclioptions.RESTClientGetter {
	return cluster.WithVersion(kube.Flags{Kubeconfig: c.KubeconfigPath()}.Getter(namespace, ""))
}
