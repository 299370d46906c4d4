package k3sserver

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/ballast-sched/ballast/cluster"
)

const (
	cmX = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n  namespace: default\ndata:\n  a: \"1\"\n"
	cmY = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n  namespace: default\n"
	cmZ = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: three\n  namespace: default\n"
)

// TestDeployer holds the deploy controller to what k3s does with its
// manifests directory.
func TestDeployer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c, err := cluster.Start(t, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	if err := CreateCRDs(ctx, c.RestConfig); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d, err := NewDeployer(ctx, c.RestConfig, dir, "server-1")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		// A new modification time, as any later write has.
		later := time.Now().Add(time.Duration(len(content)) * time.Millisecond)
		if err := os.Chtimes(filepath.Join(dir, name), later, later); err != nil {
			t.Fatal(err)
		}
	}
	sync := func(force bool) {
		t.Helper()
		if err := d.Sync(ctx, force); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(name string) bool {
		t.Helper()
		_, err := c.Client.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	addon := func(name string) bool {
		t.Helper()
		_, err := d.addons.Get(metav1.NamespaceSystem, name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}

	write("app.yaml", cmX+"---\n"+cmY)
	write("skipped.yaml", cmZ)
	write("skipped.yaml.skip", "")
	write(".hidden.yaml", cmZ)
	write("notes.txt", cmZ)
	sync(true)
	if !exists("one") || !exists("two") {
		t.Fatalf("app.yaml applied: one %t, two %t; want both", exists("one"), exists("two"))
	}
	if exists("three") {
		t.Error("a skipped, hidden or non-YAML file was applied")
	}
	if !addon("app") {
		t.Error("no Addon kube-system/app records app.yaml")
	}

	// A ConfigMap taken out of the file goes at the next look.
	write("app.yaml", cmX)
	sync(false)
	if !exists("one") || exists("two") {
		t.Errorf("after two left app.yaml: one %t, two %t; want one only", exists("one"), exists("two"))
	}

	// Deleting the file does nothing, as in k3s.
	if err := os.Remove(filepath.Join(dir, "app.yaml")); err != nil {
		t.Fatal(err)
	}
	sync(false)
	if !exists("one") || !addon("app") {
		t.Errorf("after app.yaml was deleted: one %t, Addon %t; k3s leaves both", exists("one"), addon("app"))
	}

	// A file --disable names is removed with what it made.
	write("app.yaml", cmX)
	d.Disabled = map[string]bool{"app": true}
	sync(false)
	if exists("one") || addon("app") {
		t.Errorf("disabled app.yaml: one %t, Addon %t; want both gone", exists("one"), addon("app"))
	}
	if _, err := os.Stat(filepath.Join(dir, "app.yaml")); !os.IsNotExist(err) {
		t.Errorf("disabled app.yaml is still there (%v)", err)
	}
}
