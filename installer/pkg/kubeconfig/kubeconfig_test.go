package kubeconfig

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	ours := managedLabels("ballast", "load-watcher")
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
	r, err := Delete(ctx, client, "ballast-system", "ballast", false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Deleted != 4 {
		t.Errorf("deleted %d objects, want 4", r.Deleted)
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
	if r, err := Delete(ctx, client, "ballast-system", "ballast", false); err != nil || r.Deleted != 0 {
		t.Errorf("second Delete: %d, %v; want nothing to do", r.Deleted, err)
	}
}

// A Secret the command did not create is never overwritten nor relabelled,
// so that uninstall, which deletes what carries the command's labels,
// never deletes it either.
func TestAUsersSecretIsNeverOverwritten(t *testing.T) {
	ctx := context.Background()
	theirs := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "lw", Namespace: "ballast-system", Labels: map[string]string{"team": "infra"}},
		Data:       map[string][]byte{"kubeconfig": []byte("theirs")},
	}
	client := fake.NewClientset(theirs.DeepCopy())
	var notOurs *NotOursError
	if err := CheckSecret(ctx, client, "ballast-system", "lw"); !errors.As(err, &notOurs) || !strings.Contains(err.Error(), "--secret") {
		t.Errorf("CheckSecret: %v, want a refusal naming --secret", err)
	}
	err := StoreSecret(ctx, client, "ballast-system", "lw", "ballast", "load-watcher", Generated{Kubeconfig: []byte("ours")})
	if !errors.As(err, &notOurs) {
		t.Errorf("StoreSecret: %v, want a refusal", err)
	}
	got, _ := client.CoreV1().Secrets("ballast-system").Get(ctx, "lw", metav1.GetOptions{})
	if diff := cmp.Diff(theirs, got); diff != "" {
		t.Errorf("the user's Secret changed (-want,+got):\n%s", diff)
	}

	// One the command created is replaced, and records when its token ends.
	ends := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := StoreSecret(ctx, client, "ballast-system", "mine", "ballast", "load-watcher", Generated{Kubeconfig: []byte("v1")}); err != nil {
		t.Fatal(err)
	}
	if err := CheckSecret(ctx, client, "ballast-system", "mine"); err != nil {
		t.Errorf("CheckSecret of the command's own Secret: %v", err)
	}
	if err := StoreSecret(ctx, client, "ballast-system", "mine", "ballast", "load-watcher",
		Generated{Kubeconfig: []byte("v2"), Expires: ends, Duration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	got, _ = client.CoreV1().Secrets("ballast-system").Get(ctx, "mine", metav1.GetOptions{})
	if string(got.Data[SecretKey]) != "v2" || got.Annotations[ExpiresAnnotation] != "2027-01-01T00:00:00Z" || got.Labels[ReleaseLabel] != "ballast" {
		t.Errorf("replaced Secret: %+v", got)
	}
}

// Generate never takes over a ServiceAccount or a binding of its names
// that it did not create: it would bind the component's roles to someone
// else's account, and uninstall would not know it.
func TestGenerateRefusesObjectsItDidNotCreate(t *testing.T) {
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher"}}
	for _, existing := range []runtime.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher-external", Namespace: "ballast-system"}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher-external",
			Labels: map[string]string{"app.kubernetes.io/managed-by": "Helm"}}},
	} {
		client := fake.NewClientset(role, existing)
		_, err := Generate(ctx, Options{Client: client, Namespace: "ballast-system", ReleaseName: "ballast", Component: "load-watcher",
			Server: "https://10.0.0.1:6443", Duration: time.Hour})
		var notOurs *NotOursError
		if !errors.As(err, &notOurs) {
			t.Errorf("with %T: err = %v, want a refusal", existing, err)
		}
	}
}

// Delete leaves what the command created for another release in the same
// namespace, and says what of its names it left and why.
func TestDeleteLeavesOtherReleasesAndSaysSo(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher-kubeconfig", Namespace: "ballast-system",
			Labels: map[string]string{"team": "infra"}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "other-load-watcher-kubeconfig", Namespace: "ballast-system",
			Labels: managedLabels("other", "load-watcher")}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ballast-scheduler-external", Namespace: "ballast-system",
			Labels: managedLabels("ballast", "scheduler"), Annotations: map[string]string{FilesAnnotation: `{"/etc/s.kubeconfig":{"server":"x"}}`}}},
	)
	r, err := Delete(ctx, client, "ballast-system", "ballast", true)
	if err != nil {
		t.Fatal(err)
	}
	if r.Deleted != 1 || len(r.Files) != 1 || len(r.Skipped) != 2 {
		t.Fatalf("dry run: %+v; want the ServiceAccount, its file, two left", r)
	}
	if sas, _ := client.CoreV1().ServiceAccounts("ballast-system").List(ctx, metav1.ListOptions{}); len(sas.Items) != 1 {
		t.Error("a dry run deleted")
	}
	for _, want := range []string{"for release other, not ballast", "not created by ballast kubeconfig"} {
		if !strings.Contains(strings.Join(r.Skipped, "\n"), want) {
			t.Errorf("skipped %q lacks %q", r.Skipped, want)
		}
	}
	if r, err = Delete(ctx, client, "ballast-system", "ballast", false); err != nil || r.Deleted != 1 {
		t.Fatalf("Delete: %+v, %v", r, err)
	}
	secrets, _ := client.CoreV1().Secrets("ballast-system").List(ctx, metav1.ListOptions{})
	if len(secrets.Items) != 2 {
		t.Errorf("Secrets left: %d, want both: the user's and the other release's", len(secrets.Items))
	}
}

// List finds the kubeconfigs and when their tokens end: from the Secret's
// annotation, from the token itself for a Secret an older ballast wrote,
// and from the ServiceAccount's record of files.
func TestListSaysWhenTokensEnd(t *testing.T) {
	ctx := context.Background()
	ends := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	claims := base64.RawURLEncoding.EncodeToString([]byte(`{"exp":` + strconv.FormatInt(ends.Unix(), 10) + `}`))
	legacy := "apiVersion: v1\nkind: Config\nclusters:\n- name: ballast\n  cluster: {server: \"https://10.0.0.1:6443\"}\n" +
		"users:\n- name: ballast-scheduler-external\n  user: {token: h." + claims + ".s}\n" +
		"contexts:\n- name: sa\n  context: {cluster: ballast, user: ballast-scheduler-external}\ncurrent-context: sa\n"
	oldLabels := map[string]string{"app.kubernetes.io/part-of": "ballast", "app.kubernetes.io/component": "scheduler", "app.kubernetes.io/managed-by": ManagedBy}
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "ns", Labels: oldLabels}, Data: map[string][]byte{SecretKey: []byte(legacy)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "new", Namespace: "ns", Labels: managedLabels("ballast", "load-watcher"),
			Annotations: map[string]string{ExpiresAnnotation: "2027-02-01T00:00:00Z"}}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ballast-descheduler-external", Namespace: "ns", Labels: managedLabels("ballast", "descheduler"),
			Annotations: map[string]string{FilesAnnotation: `{"/etc/d.kubeconfig":{"host":"pi-1","server":"https://x","expires":"2027-03-01T00:00:00Z"}}`}}},
	)
	got, err := List(ctx, client, "ns", "ballast")
	if err != nil {
		t.Fatal(err)
	}
	want := []Credential{
		{Component: "descheduler", ServiceAccount: "ballast-descheduler-external", File: "/etc/d.kubeconfig", Host: "pi-1", Server: "https://x",
			Expires: time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)},
		{Component: "load-watcher", Secret: "ns/new", Expires: time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)},
		{Component: "scheduler", ServiceAccount: "ballast-scheduler-external", Secret: "ns/old", Server: "https://10.0.0.1:6443", Expires: ends},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("credentials (-want,+got):\n%s", diff)
	}
	if _, soon := want[2].Expiring(ends.Add(-8 * 24 * time.Hour)); soon {
		t.Error("eight days ahead is not yet within the week")
	}
	if left, soon := want[2].Expiring(ends.Add(-6 * 24 * time.Hour)); !soon || left != 6*24*time.Hour {
		t.Errorf("six days ahead: %s, %t", left, soon)
	}
}
