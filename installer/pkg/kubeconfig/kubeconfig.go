// Package kubeconfig gives a Ballast component that cannot use in-cluster
// credentials (one run outside the cluster, or as a host process) a
// kubeconfig of its own: a dedicated ServiceAccount bound to the component's
// least-privilege roles, a bound token, and a server address the component
// can reach. It never copies the caller's credentials.
package kubeconfig

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ballast-sched/ballast/charts"
)

// SecretKey is the key of the kubeconfig in its Secret.
const SecretKey = "kubeconfig"

// Options select the component and where its kubeconfig points.
type Options struct {
	Client      kubernetes.Interface
	Namespace   string
	ReleaseName string
	// Component is load-watcher, scheduler or descheduler.
	Component string
	// Server is the API server URL the component will use.
	Server string
	// CAData is the API server's CA bundle.
	CAData []byte
	// TLSServerName is the name to verify the server certificate against when it differs from Server's host.
	TLSServerName string
	// Duration is the token's lifetime; the API server may shorten it.
	Duration time.Duration
}

// DefaultDuration is the default token lifetime: short enough that a leaked
// kubeconfig expires within a month, long enough for a monthly rotation.
const DefaultDuration = 30 * 24 * time.Hour

// RenewWithin is how long before its token ends `ballast status` warns of a
// generated kubeconfig.
const RenewWithin = 7 * 24 * time.Hour

// Labels and annotations of what `ballast kubeconfig` creates.
const (
	// ManagedBy is the app.kubernetes.io/managed-by value of those objects:
	// ballast uninstall deletes them, and the command changes no object
	// with another.
	ManagedBy = "ballast-cli"
	// ReleaseLabel names the release whose component the objects serve.
	ReleaseLabel = "app.kubernetes.io/instance"
	// ExpiresAnnotation, on a Secret, is when the token of its kubeconfig
	// ends (RFC 3339).
	ExpiresAnnotation = "ballast-sched.io/kubeconfig-expires"
	// DurationAnnotation, on a Secret, is the lifetime its token was asked
	// for, which a renewal asks for again.
	DurationAnnotation = "ballast-sched.io/kubeconfig-duration"
	// FilesAnnotation, on the ServiceAccount, records the kubeconfig files
	// written for it (a JSON object: path → File), which the cluster cannot
	// see otherwise.
	FilesAnnotation = "ballast-sched.io/kubeconfig-files"
)

// managedLabels mark every object `ballast kubeconfig` creates, so uninstall
// finds and deletes them.
func managedLabels(release, component string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/part-of": "ballast", "app.kubernetes.io/component": component,
		"app.kubernetes.io/managed-by": ManagedBy, ReleaseLabel: release,
	}
}

// Owned reports whether an object carries the labels of what `ballast
// kubeconfig` creates; whyNot says what it carries instead.
func Owned(labels map[string]string) (owned bool, whyNot string) {
	if labels["app.kubernetes.io/part-of"] == "ballast" && labels["app.kubernetes.io/managed-by"] == ManagedBy {
		return true, ""
	}
	if m := labels["app.kubernetes.io/managed-by"]; m != "" {
		return false, "it is managed by " + m
	}
	return false, "it does not carry app.kubernetes.io/managed-by=" + ManagedBy
}

// ServiceAccountName is the dedicated ServiceAccount of an external component.
func ServiceAccountName(release, component string) string {
	return charts.ComponentFullname(release, component) + "-external"
}

// SecretName is the Secret a component's kubeconfig goes to by default.
func SecretName(release, component string) string {
	return charts.ComponentFullname(release, component) + "-kubeconfig"
}

// Generated is a kubeconfig Generate made.
type Generated struct {
	Kubeconfig     []byte
	ServiceAccount string
	Server         string
	// Expires is when its token ends, as the API server says.
	Expires time.Time
	// Duration is the lifetime that was asked for.
	Duration time.Duration
}

// NotOursError is an object that `ballast kubeconfig` would have to change
// and did not create.
type NotOursError struct {
	Kind, Namespace, Name, Why, Fix string
}

func (e *NotOursError) Error() string {
	name := e.Name
	if e.Namespace != "" {
		name = e.Namespace + "/" + name
	}
	return fmt.Sprintf("%s %s exists and was not created by ballast kubeconfig (%s), so it is left as it is: %s",
		e.Kind, name, e.Why, e.Fix)
}

// Generate ensures the ServiceAccount and its bindings to the component's
// chart roles exist, requests a bound token and returns the kubeconfig. An
// existing ServiceAccount or binding of that name that the command did not
// create is refused, never taken over.
func Generate(ctx context.Context, o Options) (Generated, error) {
	if o.Server == "" {
		return Generated{}, fmt.Errorf("server address is required")
	}
	role := charts.ComponentFullname(o.ReleaseName, o.Component)
	if _, err := o.Client.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}); err != nil {
		return Generated{}, fmt.Errorf("ClusterRole %s of component %s (install Ballast first): %w", role, o.Component, err)
	}
	sa := ServiceAccountName(o.ReleaseName, o.Component)
	labels := managedLabels(o.ReleaseName, o.Component)
	fix := "delete or rename it, or install Ballast under another --release-name"
	if err := ensure(ctx, "ServiceAccount", o.Namespace, sa, fix, func() error {
		_, err := o.Client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, &corev1.ServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: o.Namespace, Labels: labels},
		}, metav1.CreateOptions{})
		return err
	}, func() (metav1.Object, error) {
		return o.Client.CoreV1().ServiceAccounts(o.Namespace).Get(ctx, sa, metav1.GetOptions{})
	}); err != nil {
		return Generated{}, err
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: o.Namespace}}
	if err := ensure(ctx, "ClusterRoleBinding", "", sa, fix, func() error {
		_, err := o.Client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: sa, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   subject,
		}, metav1.CreateOptions{})
		return err
	}, func() (metav1.Object, error) {
		return o.Client.RbacV1().ClusterRoleBindings().Get(ctx, sa, metav1.GetOptions{})
	}); err != nil {
		return Generated{}, err
	}
	// The leader-election Role exists only for components that elect a leader.
	if _, err := o.Client.RbacV1().Roles(o.Namespace).Get(ctx, role, metav1.GetOptions{}); err == nil {
		if err := ensure(ctx, "RoleBinding", o.Namespace, sa, fix, func() error {
			_, err := o.Client.RbacV1().RoleBindings(o.Namespace).Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: o.Namespace, Labels: labels},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
				Subjects:   subject,
			}, metav1.CreateOptions{})
			return err
		}, func() (metav1.Object, error) {
			return o.Client.RbacV1().RoleBindings(o.Namespace).Get(ctx, sa, metav1.GetOptions{})
		}); err != nil {
			return Generated{}, err
		}
	}

	seconds := int64(o.Duration / time.Second)
	tr, err := o.Client.CoreV1().ServiceAccounts(o.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return Generated{}, fmt.Errorf("request a token for %s: %w", sa, err)
	}

	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["ballast"] = &clientcmdapi.Cluster{Server: o.Server, CertificateAuthorityData: o.CAData, TLSServerName: o.TLSServerName}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts[sa] = &clientcmdapi.Context{Cluster: "ballast", AuthInfo: sa, Namespace: o.Namespace}
	cfg.CurrentContext = sa
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return Generated{}, err
	}
	return Generated{Kubeconfig: data, ServiceAccount: sa, Server: o.Server, Expires: tr.Status.ExpirationTimestamp.Time, Duration: o.Duration}, nil
}

// ensure creates an object, or finds the one of that name and checks that
// `ballast kubeconfig` created it.
func ensure(ctx context.Context, kind, namespace, name, fix string, create func() error, get func() (metav1.Object, error)) error {
	err := create()
	if err == nil {
		return ctx.Err()
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s %s: %w", kind, name, err)
	}
	obj, err := get()
	if err != nil {
		return fmt.Errorf("read %s %s: %w", kind, name, err)
	}
	if owned, why := Owned(obj.GetLabels()); !owned {
		return &NotOursError{Kind: kind, Namespace: namespace, Name: name, Why: why, Fix: fix}
	}
	return nil
}

// CheckSecret refuses a Secret named name that exists and that `ballast
// kubeconfig` did not create: a kubeconfig never replaces, nor relabels, a
// Secret of someone else's. Call it before Generate, so that nothing is
// created for a kubeconfig that cannot be stored.
func CheckSecret(ctx context.Context, client kubernetes.Interface, namespace, name string) error {
	s, err := client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read Secret %s/%s: %w", namespace, name, err)
	}
	if owned, why := Owned(s.Labels); !owned {
		return &NotOursError{Kind: "Secret", Namespace: namespace, Name: name, Why: why,
			Fix: "name another with --secret, or write the kubeconfig to a file with --file"}
	}
	return nil
}

// StoreSecret saves a component's kubeconfig in a Secret, never a
// ConfigMap, replacing one an earlier run stored; a Secret of that name
// that the command did not create is refused (CheckSecret), even between
// the check and the write.
func StoreSecret(ctx context.Context, client kubernetes.Interface, namespace, name, release, component string, g Generated) error {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: managedLabels(release, component),
			Annotations: map[string]string{
				ExpiresAnnotation:  g.Expires.UTC().Format(time.RFC3339),
				DurationAnnotation: g.Duration.String(),
			}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{SecretKey: g.Kubeconfig},
	}
	_, err := client.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		var old *corev1.Secret
		if old, err = client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
			if owned, why := Owned(old.Labels); !owned {
				return &NotOursError{Kind: "Secret", Namespace: namespace, Name: name, Why: why,
					Fix: "name another with --secret, or write the kubeconfig to a file with --file"}
			}
			// Only a Secret that has not changed since it was read.
			secret.ResourceVersion = old.ResourceVersion
			_, err = client.CoreV1().Secrets(namespace).Update(ctx, secret, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("store kubeconfig in Secret %s/%s: %w", namespace, name, err)
	}
	return nil
}

// ReachableServer replaces a loopback host in server (k3s.yaml says
// https://127.0.0.1:6443) with host, keeping scheme and port. Other servers
// are returned unchanged.
func ReachableServer(server, host string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", fmt.Errorf("server %q: %w", server, err)
	}
	h := u.Hostname()
	ip := net.ParseIP(h)
	if h != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return server, nil
	}
	if host == "" {
		return "", fmt.Errorf("server %s is a loopback address, unreachable from elsewhere: pass --server", server)
	}
	if port := u.Port(); port != "" {
		u.Host = net.JoinHostPort(host, port)
	} else {
		u.Host = host
	}
	return u.String(), nil
}

// NodeAddress returns the InternalIP of a control-plane node (any node when
// none is labelled), a server address reachable from the cluster's network.
func NodeAddress(ctx context.Context, client kubernetes.Interface) (string, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	var fallback string
	for _, n := range nodes.Items {
		for _, a := range n.Status.Addresses {
			if a.Type != corev1.NodeInternalIP {
				continue
			}
			if _, cp := n.Labels["node-role.kubernetes.io/control-plane"]; cp {
				return a.Address, nil
			}
			if fallback == "" {
				fallback = a.Address
			}
		}
	}
	if fallback == "" {
		return "", fmt.Errorf("no node has an InternalIP")
	}
	return fallback, nil
}
