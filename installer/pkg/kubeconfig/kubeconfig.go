// Package kubeconfig gives a Ballast component that cannot use in-cluster
// credentials (one run outside the cluster, or as a host process) a
// kubeconfig of its own: a dedicated ServiceAccount bound to the component's
// least-privilege roles, a bound token, and a server address the component
// can reach. It never copies the caller's credentials.
package kubeconfig

import (
	"context"
	"errors"
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

// managedLabels mark every object `ballast kubeconfig` creates, so uninstall
// finds and deletes them.
func managedLabels(component string) map[string]string {
	return map[string]string{"app.kubernetes.io/part-of": "ballast", "app.kubernetes.io/component": component, "app.kubernetes.io/managed-by": ManagedBy}
}

// ManagedBy is the app.kubernetes.io/managed-by value of those objects.
const ManagedBy = "ballast-cli"

// ServiceAccountName is the dedicated ServiceAccount of an external component.
func ServiceAccountName(release, component string) string {
	return charts.ComponentFullname(release, component) + "-external"
}

// Generate ensures the ServiceAccount and its bindings to the component's
// chart roles exist, requests a bound token and returns the kubeconfig.
func Generate(ctx context.Context, o Options) ([]byte, error) {
	if o.Server == "" {
		return nil, fmt.Errorf("server address is required")
	}
	role := charts.ComponentFullname(o.ReleaseName, o.Component)
	if _, err := o.Client.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("ClusterRole %s of component %s (install Ballast first): %w", role, o.Component, err)
	}
	sa := ServiceAccountName(o.ReleaseName, o.Component)
	labels := managedLabels(o.Component)
	if err := create(ctx, func() error {
		_, err := o.Client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, &corev1.ServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: o.Namespace, Labels: labels},
		}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return nil, fmt.Errorf("create ServiceAccount %s: %w", sa, err)
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: o.Namespace}}
	if err := create(ctx, func() error {
		_, err := o.Client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: sa, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   subject,
		}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return nil, fmt.Errorf("bind ClusterRole %s: %w", role, err)
	}
	// The leader-election Role exists only for components that elect a leader.
	if _, err := o.Client.RbacV1().Roles(o.Namespace).Get(ctx, role, metav1.GetOptions{}); err == nil {
		if err := create(ctx, func() error {
			_, err := o.Client.RbacV1().RoleBindings(o.Namespace).Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: o.Namespace, Labels: labels},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
				Subjects:   subject,
			}, metav1.CreateOptions{})
			return err
		}); err != nil {
			return nil, fmt.Errorf("bind Role %s: %w", role, err)
		}
	}

	seconds := int64(o.Duration / time.Second)
	tr, err := o.Client.CoreV1().ServiceAccounts(o.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("request a token for %s: %w", sa, err)
	}

	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["ballast"] = &clientcmdapi.Cluster{Server: o.Server, CertificateAuthorityData: o.CAData, TLSServerName: o.TLSServerName}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts[sa] = &clientcmdapi.Context{Cluster: "ballast", AuthInfo: sa, Namespace: o.Namespace}
	cfg.CurrentContext = sa
	return clientcmd.Write(*cfg)
}

// StoreSecret saves a component's kubeconfig in a Secret, never a ConfigMap,
// replacing an older one.
func StoreSecret(ctx context.Context, client kubernetes.Interface, namespace, name, component string, kubeconfig []byte) error {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: managedLabels(component)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{SecretKey: kubeconfig},
	}
	_, err := client.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = client.CoreV1().Secrets(namespace).Update(ctx, secret, metav1.UpdateOptions{})
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

func create(ctx context.Context, fn func() error) error {
	if err := fn(); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return ctx.Err()
}

// Delete removes every object `ballast kubeconfig` created in namespace:
// the ServiceAccounts (which invalidates their tokens), their bindings and
// the Secrets holding kubeconfigs. Helm does not know these objects, so
// without this they would outlive Ballast and come back to life on a
// reinstall. It returns how many objects it deleted.
func Delete(ctx context.Context, client kubernetes.Interface, namespace string) (int, error) {
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=ballast,app.kubernetes.io/managed-by=" + ManagedBy}
	deleted := 0
	del := func(kind, name string, fn func() error) error {
		switch err := fn(); {
		case err == nil:
			deleted++
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("delete %s %s: %w", kind, name, err)
		}
		return nil
	}
	var errs []error
	if list, err := client.RbacV1().ClusterRoleBindings().List(ctx, sel); err != nil {
		errs = append(errs, err)
	} else {
		for _, b := range list.Items {
			// Only bindings of this namespace's ServiceAccounts: another installation may share the cluster.
			if len(b.Subjects) == 0 || b.Subjects[0].Namespace != namespace {
				continue
			}
			errs = append(errs, del("ClusterRoleBinding", b.Name, func() error {
				return client.RbacV1().ClusterRoleBindings().Delete(ctx, b.Name, metav1.DeleteOptions{})
			}))
		}
	}
	if list, err := client.RbacV1().RoleBindings(namespace).List(ctx, sel); err != nil {
		errs = append(errs, err)
	} else {
		for _, b := range list.Items {
			errs = append(errs, del("RoleBinding", b.Name, func() error {
				return client.RbacV1().RoleBindings(namespace).Delete(ctx, b.Name, metav1.DeleteOptions{})
			}))
		}
	}
	if list, err := client.CoreV1().Secrets(namespace).List(ctx, sel); err != nil {
		errs = append(errs, err)
	} else {
		for _, s := range list.Items {
			errs = append(errs, del("Secret", s.Name, func() error {
				return client.CoreV1().Secrets(namespace).Delete(ctx, s.Name, metav1.DeleteOptions{})
			}))
		}
	}
	if list, err := client.CoreV1().ServiceAccounts(namespace).List(ctx, sel); err != nil {
		errs = append(errs, err)
	} else {
		for _, sa := range list.Items {
			errs = append(errs, del("ServiceAccount", sa.Name, func() error {
				return client.CoreV1().ServiceAccounts(namespace).Delete(ctx, sa.Name, metav1.DeleteOptions{})
			}))
		}
	}
	return deleted, errors.Join(errs...)
}
