package k3sserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	k3sv1 "github.com/k3s-io/api/k3s.cattle.io/v1"
	k3scontrollers "github.com/k3s-io/api/pkg/generated/controllers/k3s.cattle.io"
	addoncontroller "github.com/k3s-io/api/pkg/generated/controllers/k3s.cattle.io/v1"
	"github.com/rancher/wrangler/v3/pkg/apply"
	"github.com/rancher/wrangler/v3/pkg/objectset"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// ManifestsDir is k3s's auto-deploy directory.
const ManifestsDir = DataDir + "/server/manifests"

// DeployInterval is how often k3s looks at the manifests directory again.
const DeployInterval = 15 * time.Second

// addonGVKsAnnotation lists, on an Addon, the kinds its file held when it
// was last applied, so objects of a kind the file no longer holds are
// found and removed too.
const addonGVKsAnnotation = "addon.k3s.cattle.io/gvks"

// Deployer applies the files of a k3s server's manifests directory as k3s's
// deploy controller does (k3s's pkg/deploy): every .yaml, .yml and .json
// file, except dotfiles and x when x.skip is there; a file is read again when
// its modification time changes and applied when its content does. Each
// file is recorded as an Addon in kube-system named after the file up to its
// first dot, which owns what the file holds, so an object taken out of the
// file is deleted at the next apply. Like k3s, it does nothing when a file
// is deleted: what the file made stays, with its Addon.
type Deployer struct {
	// Dir is the manifests directory.
	Dir string
	// Disabled are the base names (file name up to its first dot) of
	// manifests k3s's --disable removes: their objects and the files go.
	Disabled map[string]bool

	apply    apply.Apply
	addons   addoncontroller.AddonClient
	disco    discovery.DiscoveryInterface
	recorder record.EventRecorder
	modTime  map[string]time.Time
}

// NewDeployer connects a Deployer to the API server with cfg, the server's
// own credentials.
func NewDeployer(ctx context.Context, cfg *rest.Config, dir, node string) (*Deployer, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType, cfg.AcceptContentTypes = "", ""
	cfg.UserAgent = "deploy@" + node
	k8s, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the deploy controller's client: %w", err)
	}
	f, err := k3scontrollers.NewFactoryFromConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the Addon client: %w", err)
	}
	return &Deployer{
		Dir:      dir,
		apply:    apply.New(k8s, apply.NewClientFactory(cfg)).WithDynamicLookup(),
		addons:   f.K3s().V1().Addon(),
		disco:    k8s.Discovery(),
		recorder: eventRecorder(ctx, k8s, "deploy", node),
		modTime:  map[string]time.Time{},
	}, nil
}

// Run applies every file now, then those that change, every DeployInterval
// until ctx ends.
func (d *Deployer) Run(ctx context.Context) {
	force := true
	for {
		if err := d.Sync(ctx, force); err != nil {
			klog.FromContext(ctx).Error(err, "Applying the manifests directory")
		} else {
			force = false
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(DeployInterval):
		}
	}
}

// Sync looks at every file once: with force, every file is applied
// whatever its modification time and content.
func (d *Deployer) Sync(ctx context.Context, force bool) error {
	entries, err := os.ReadDir(d.Dir)
	if err != nil {
		return fmt.Errorf("reading %s: %w", d.Dir, err)
	}
	skips := map[string]bool{}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".skip"); ok {
			skips[name] = true
		}
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(d.Dir, e.Name())
		if e.IsDir() {
			continue
		}
		if d.Disabled[baseName(path)] {
			if err := d.remove(ctx, path); err != nil {
				errs = append(errs, fmt.Errorf("removing disabled %s: %w", path, err))
			}
			continue
		}
		if skipped(e.Name(), skips) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !force && info.ModTime().Equal(d.modTime[path]) {
			continue
		}
		if err := d.deploy(ctx, path, !force); err != nil {
			errs = append(errs, fmt.Errorf("applying %s: %w", path, err))
			continue
		}
		d.modTime[path] = info.ModTime()
	}
	return errors.Join(errs...)
}

// skipped reports whether k3s ignores a file: a dotfile, a file of another
// type, or one with a .skip marker beside it.
func skipped(name string, skips map[string]bool) bool {
	if strings.HasPrefix(name, ".") || skips[name] {
		return true
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return false
	}
	return true
}

// deploy applies one file under its Addon; with compareChecksum, a file
// whose content the Addon already records is left alone.
func (d *Deployer) deploy(ctx context.Context, path string, compareChecksum bool) error {
	addon, err := d.addon(baseName(path))
	if err != nil {
		return err
	}
	addon.Spec.Source = path
	if addon.UID == "" {
		created, err := d.addons.Create(addon)
		if err != nil {
			return fmt.Errorf("creating Addon %s: %w", addon.Name, err)
		}
		addon = created
		addon.APIVersion, addon.Kind = k3sv1.SchemeGroupVersion.WithKind("Addon").ToAPIVersionAndKind()
	}
	content, err := os.ReadFile(path)
	if err != nil {
		d.recorder.Eventf(addon, corev1.EventTypeWarning, "ReadManifestFailed", "Read manifest at %q failed: %v", path, err)
		return err
	}
	sum := sha256.Sum256(content)
	checksum := hex.EncodeToString(sum[:])
	if compareChecksum && checksum == addon.Spec.Checksum {
		return nil
	}
	objs, err := objects(content)
	if err != nil {
		d.recorder.Eventf(addon, corev1.EventTypeWarning, "ParseManifestFailed", "Parse manifest at %q failed: %v", path, err)
		return err
	}
	// Searching the kinds applied before too: an object whose kind left the
	// file is found and removed.
	gvks, err := d.served(append(objs.GVKs(), parseGVKs(addon.Annotations[addonGVKsAnnotation])...))
	if err != nil {
		return err
	}
	d.recorder.Eventf(addon, corev1.EventTypeNormal, "ApplyingManifest", "Applying manifest at %q", path)
	if err := d.apply.WithOwner(addon).WithGVK(gvks...).Apply(objs); err != nil {
		d.recorder.Eventf(addon, corev1.EventTypeWarning, "ApplyManifestFailed", "Applying manifest at %q failed: %v", path, err)
		return err
	}
	d.recorder.Eventf(addon, corev1.EventTypeNormal, "AppliedManifest", "Applied manifest at %q", path)
	klog.FromContext(ctx).Info("Applied manifest", "file", path, "addon", addon.Name)
	if addon.Annotations == nil {
		addon.Annotations = map[string]string{}
	}
	addon.Spec.Checksum = checksum
	addon.Annotations[addonGVKsAnnotation] = formatGVKs(objs.GVKs())
	if _, err := d.addons.Update(addon); err != nil {
		return fmt.Errorf("updating Addon %s: %w", addon.Name, err)
	}
	return nil
}

// remove deletes what a disabled file made, the file and its Addon, as k3s
// does for a manifest its --disable names.
func (d *Deployer) remove(ctx context.Context, path string) error {
	addon, err := d.addon(baseName(path))
	if err != nil {
		return err
	}
	gvks := parseGVKs(addon.Annotations[addonGVKsAnnotation])
	if content, err := os.ReadFile(path); err == nil {
		if objs, err := objects(content); err == nil {
			gvks = append(gvks, objs.GVKs()...)
		}
	}
	if gvks, err = d.served(gvks); err != nil {
		return err
	}
	if err := d.apply.WithOwner(addon).WithGVK(gvks...).ApplyObjects(); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Removed disabled manifest", "file", path)
	if err := d.addons.Delete(addon.Namespace, addon.Name, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// addon returns the Addon of a file, a new one (not yet created) when there
// is none.
func (d *Deployer) addon(name string) (*k3sv1.Addon, error) {
	a, err := d.addons.Get(metav1.NamespaceSystem, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return k3sv1.NewAddon(metav1.NamespaceSystem, name, k3sv1.Addon{}), nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Addon %s: %w", name, err)
	}
	// The client leaves the kind empty; the apply's owner needs it.
	a.APIVersion, a.Kind = k3sv1.SchemeGroupVersion.WithKind("Addon").ToAPIVersionAndKind()
	return a, nil
}

// served keeps the kinds the API server serves, once each: pruning by a kind
// it does not serve (a CRD gone) would fail the whole apply.
func (d *Deployer) served(gvks []schema.GroupVersionKind) ([]schema.GroupVersionKind, error) {
	var out []schema.GroupVersionKind
	for _, gvk := range gvks {
		if slices.Contains(out, gvk) {
			continue
		}
		list, err := d.disco.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("discovering %s: %w", gvk.GroupVersion(), err)
		}
		if slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Kind == gvk.Kind }) {
			out = append(out, gvk)
		}
	}
	return out, nil
}

// objects reads every object of a multi-document YAML or JSON file; a List
// stands for its items.
func objects(content []byte) (*objectset.ObjectSet, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(content)))
	var objs []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		js, err := utilyaml.ToJSON(doc)
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(js)) == 0 || string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		obj, _, err := unstructured.UnstructuredJSONScheme.Decode(js, nil, nil)
		if err != nil {
			return nil, err
		}
		if l, ok := obj.(*unstructured.UnstructuredList); ok {
			for i := range l.Items {
				objs = append(objs, &l.Items[i])
			}
			continue
		}
		objs = append(objs, obj)
	}
	return objectset.NewObjectSet(objs...), nil
}

// baseName is a manifest's Addon name: the file's name up to its first dot.
func baseName(path string) string {
	name, _, _ := strings.Cut(filepath.Base(path), ".")
	return name
}

func formatGVKs(gvks []schema.GroupVersionKind) string {
	s := make([]string, len(gvks))
	for i, g := range gvks {
		s[i] = g.String()
	}
	return strings.Join(s, ";")
}

func parseGVKs(s string) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, part := range strings.Split(s, ";") {
		gv, kind, ok := strings.Cut(part, ", Kind=")
		if !ok {
			continue
		}
		g, v, found := strings.Cut(gv, "/")
		if !found {
			g, v = "", gv
		}
		out = append(out, schema.GroupVersionKind{Group: g, Version: v, Kind: kind})
	}
	return out
}
