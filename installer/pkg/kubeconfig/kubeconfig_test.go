package kubeconfig

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestReachableServer(t *testing.T) {
	cases := []struct {
		name, server, host, want string
		wantErr                  bool
	}{
		{name: "k3s loopback", server: "https://127.0.0.1:6443", host: "192.168.1.10", want: "https://192.168.1.10:6443"},
		{name: "localhost", server: "https://localhost:6443", host: "10.0.0.5", want: "https://10.0.0.5:6443"},
		{name: "IPv6 loopback", server: "https://[::1]:6443", host: "fd00::10", want: "https://[fd00::10]:6443"},
		{name: "already reachable", server: "https://k8s.lan:6443", host: "192.168.1.10", want: "https://k8s.lan:6443"},
		{name: "loopback without a replacement", server: "https://127.0.0.1:6443", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReachableServer(tc.server, tc.host)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %t", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Delete removes what `ballast kubeconfig` created in the namespace, and
// nothing else: not Helm's objects, not another installation's bindings.
func TestDeleteRemovesOnlyWhatTheCommandCreated(t *testing.T) {
	ctx := context.Background()
	ours := managedLabels("load-watcher")
	helm := map[string]string{"app.kubernetes.io/part-of": "ballast", "app.kubernetes.io/managed-by": "Helm"}
	subject := func(ns string) []rbacv1.Subject {
		return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "ballast-load-watcher-external", Namespace: ns}}
	}
	client := fake.NewClientset(
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher-external", Namespace: "ballast-system", Labels: ours}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher", Namespace: "ballast-system", Labels: helm}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher-kubeconfig", Namespace: "ballast-system", Labels: ours}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher-external", Labels: ours}, Subjects: subject("ballast-system")},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "other-install", Labels: ours}, Subjects: subject("elsewhere")},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher", Labels: helm}, Subjects: subject("ballast-system")},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher-external", Namespace: "ballast-system", Labels: ours}, Subjects: subject("ballast-system")},
	)
	n, err := Delete(ctx, client, "ballast-system")
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("deleted %d objects, want 4", n)
	}
	sas, _ := client.CoreV1().ServiceAccounts("ballast-system").List(ctx, metav1.ListOptions{})
	secrets, _ := client.CoreV1().Secrets("ballast-system").List(ctx, metav1.ListOptions{})
	crbs, _ := client.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	rbs, _ := client.RbacV1().RoleBindings("ballast-system").List(ctx, metav1.ListOptions{})
	var left []string
	for _, o := range sas.Items {
		left = append(left, "sa/"+o.Name)
	}
	for _, o := range secrets.Items {
		left = append(left, "secret/"+o.Name)
	}
	for _, o := range crbs.Items {
		left = append(left, "crb/"+o.Name)
	}
	for _, o := range rbs.Items {
		left = append(left, "rb/"+o.Name)
	}
	want := []string{"sa/ballast-load-watcher", "crb/ballast-load-watcher", "crb/other-install"}
	if diff := cmp.Diff(want, left, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("objects left (-want,+got):\n%s", diff)
	}
	if n, err := Delete(ctx, client, "ballast-system"); err != nil || n != 0 {
		t.Errorf("second Delete: %d, %v; want nothing to do", n, err)
	}
}
