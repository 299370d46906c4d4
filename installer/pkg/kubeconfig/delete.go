package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ballast-sched/ballast/charts"
)

// Removal is what Delete did.
type Removal struct {
	// Deleted counts the objects deleted (with dryRun: to delete).
	Deleted int
	// Skipped are objects of the names the command gives that were left,
	// each with why.
	Skipped []string
	// Files are the kubeconfig files written for the ServiceAccounts
	// deleted: they stay on their hosts, their tokens no longer valid.
	Files []string
}

// Delete removes every object `ballast kubeconfig` created in namespace for
// release: the ServiceAccounts (which invalidates their tokens), their
// bindings and the Secrets holding kubeconfigs. Helm does not know these
// objects, so without this they would outlive Ballast and come back to life
// on a reinstall. It deletes only what carries the command's labels, and of
// that only release's (objects an older ballast labelled with no release
// count as release's); an object of the names the command uses that it did
// not create is reported in Skipped, and left.
// With dryRun it deletes nothing, and counts what it would delete.
func Delete(ctx context.Context, client kubernetes.Interface, namespace, release string, dryRun bool) (Removal, error) {
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=ballast,app.kubernetes.io/managed-by=" + ManagedBy}
	var r Removal
	ours := func(kind, name string, labels map[string]string) bool {
		if owner := labels[ReleaseLabel]; owner != "" && owner != release {
			r.Skipped = append(r.Skipped, fmt.Sprintf("%s %s: created by ballast kubeconfig for release %s, not %s", kind, name, owner, release))
			return false
		}
		return true
	}
	del := func(kind, name string, fn func() error) error {
		if dryRun {
			r.Deleted++
			return nil
		}
		switch err := fn(); {
		case err == nil:
			r.Deleted++
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
			if len(b.Subjects) == 0 || b.Subjects[0].Namespace != namespace || !ours("ClusterRoleBinding", b.Name, b.Labels) {
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
			if !ours("RoleBinding", namespace+"/"+b.Name, b.Labels) {
				continue
			}
			errs = append(errs, del("RoleBinding", b.Name, func() error {
				return client.RbacV1().RoleBindings(namespace).Delete(ctx, b.Name, metav1.DeleteOptions{})
			}))
		}
	}
	if list, err := client.CoreV1().Secrets(namespace).List(ctx, sel); err != nil {
		errs = append(errs, err)
	} else {
		for _, s := range list.Items {
			if !ours("Secret", namespace+"/"+s.Name, s.Labels) {
				continue
			}
			errs = append(errs, del("Secret", s.Name, func() error {
				return client.CoreV1().Secrets(namespace).Delete(ctx, s.Name, metav1.DeleteOptions{})
			}))
		}
	}
	if list, err := client.CoreV1().ServiceAccounts(namespace).List(ctx, sel); err != nil {
		errs = append(errs, err)
	} else {
		for _, sa := range list.Items {
			if !ours("ServiceAccount", namespace+"/"+sa.Name, sa.Labels) {
				continue
			}
			for path := range files(sa.Annotations) {
				r.Files = append(r.Files, path)
			}
			errs = append(errs, del("ServiceAccount", sa.Name, func() error {
				return client.CoreV1().ServiceAccounts(namespace).Delete(ctx, sa.Name, metav1.DeleteOptions{})
			}))
		}
	}
	sort.Strings(r.Files)
	r.Skipped = append(r.Skipped, notOurs(ctx, client, namespace, release)...)
	return r, errors.Join(errs...)
}

// notOurs lists the objects of the names `ballast kubeconfig` gives release's
// components that exist without its labels: someone else's, never touched.
func notOurs(ctx context.Context, client kubernetes.Interface, namespace, release string) []string {
	var out []string
	for _, c := range charts.Components {
		if s, err := client.CoreV1().Secrets(namespace).Get(ctx, SecretName(release, c), metav1.GetOptions{}); err == nil {
			if owned, why := Owned(s.Labels); !owned {
				out = append(out, fmt.Sprintf("Secret %s/%s: not created by ballast kubeconfig (%s)", namespace, s.Name, why))
			}
		}
		if sa, err := client.CoreV1().ServiceAccounts(namespace).Get(ctx, ServiceAccountName(release, c), metav1.GetOptions{}); err == nil {
			if owned, why := Owned(sa.Labels); !owned {
				out = append(out, fmt.Sprintf("ServiceAccount %s/%s: not created by ballast kubeconfig (%s)", namespace, sa.Name, why))
			}
		}
	}
	return out
}
