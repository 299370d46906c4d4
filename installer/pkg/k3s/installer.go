package k3s

import (
	"context"
	"errors"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/installer/pkg/startcheck"
)

// Mode is how Ballast schedules (the chart's global.schedulerMode).
type Mode string

const (
	// ModeSecond runs Ballast next to k3s's scheduler; workloads opt in by schedulerName.
	ModeSecond Mode = "second"
	// ModeReplaceDefault makes Ballast serve default-scheduler and renames k3s's.
	ModeReplaceDefault Mode = "replaceDefault"
)

// DefaultBootstrapSchedulerName is the chart's global.bootstrapSchedulerName default.
const DefaultBootstrapSchedulerName = "ballast-bootstrap"

// Installer writes and removes Ballast's files on a k3s server.
type Installer struct {
	Paths Paths
	// Euid returns the effective user id; os.Geteuid when nil.
	Euid func() int
}

// InstallOptions are what `ballast install` was asked for.
type InstallOptions struct {
	// Values are the user's values (-f, --set); chart defaults fill the rest.
	Values map[string]any
	// Namespace receives Ballast's objects; default charts.DefaultNamespace.
	Namespace string
	// Mode defaults to ModeSecond.
	Mode Mode
	// BootstrapSchedulerName defaults to the values' global.bootstrapSchedulerName,
	// then DefaultBootstrapSchedulerName.
	BootstrapSchedulerName string
	// AdmissionPolicyGate turns on, through a k3s drop-in, the beta
	// MutatingAdmissionPolicy API of a 1.34-1.35 server, which the chart's
	// namespace opt-in needs; false removes a drop-in an earlier install wrote.
	AdmissionPolicyGate bool
	// AllowVersionSkew drops the chart's kubeVersion constraint, which
	// helm-controller otherwise enforces against the cluster's version.
	AllowVersionSkew bool
	// WaitForRelease, in replaceDefault mode, is called after the HelmChart
	// is written and before the scheduler drop-in is: it must return once
	// helm-controller has deployed the release with the given values. The
	// install Job's pod asks for default-scheduler, which k3s stops serving
	// once it restarts with the drop-in, so the drop-in must wait for it.
	// Nil means the drop-in is never written by this call.
	WaitForRelease func(ctx context.Context, values map[string]any) error
	// ManifestNode is this server's node name, recorded on the HelmChart
	// (ManifestNodeAnnotation) so other servers know where its manifest is.
	ManifestNode string
	// ManifestElsewhere names the server that carries the HelmChart
	// manifest when it is not this one: then this server writes none and
	// removes a copy an earlier install left, so that only one server's
	// start can apply it again.
	ManifestElsewhere string
	// Images is an images archive to place in k3s's images directory, from
	// where k3s imports it into this node's containerd.
	Images string
	// DryRun validates and says what would change, writing nothing; the
	// scheduler drop-in of replaceDefault mode is then reported pending,
	// as helm-controller has deployed nothing.
	DryRun bool
}

// ErrDropInNotWritten is returned in replaceDefault mode when the HelmChart
// was written but the scheduler drop-in was not, because helm-controller had
// not deployed the release yet; running the install again completes it.
var ErrDropInNotWritten = errors.New("the k3s scheduler drop-in is not written yet")

// InstallResult says what changed on the host.
type InstallResult struct {
	// Manifest is the HelmChart file; ManifestChanged is false when it
	// already had this content. ManifestContent is what it holds (with
	// DryRun: would hold).
	Manifest        string
	ManifestChanged bool
	ManifestContent []byte
	// RestartK3s is true when a k3s config drop-in changed: k3s reads them only at start.
	RestartK3s bool
	// Values are the values written into the HelmChart.
	Values map[string]any
	// CopyRemoved is true when ManifestElsewhere was set and this server's
	// copy of the manifest was removed.
	CopyRemoved bool
	// Images is where the images archive was placed; ImagesChanged is false
	// when it was already there with this content.
	Images        string
	ImagesChanged bool
	// Changes are the host files written or removed (with DryRun: that
	// would be), in order, e.g. "write /var/lib/…/ballast.yaml".
	Changes []string
	// DropInPending, in replaceDefault mode, is true when the scheduler
	// drop-in is still to be written once helm-controller has deployed.
	DropInPending bool
}

// Install validates the values by rendering the chart, then writes the
// HelmChart (and, in replaceDefault mode, the scheduler drop-in). Nothing is
// written when validation fails. Concurrent runs on one host are serialised by
// a lock; the loser fails with ErrLocked.
func (in Installer) Install(ctx context.Context, opts InstallOptions) (InstallResult, error) {
	if err := in.checkPrivileges(); err != nil {
		return InstallResult{}, err
	}
	mode := opts.Mode
	if mode == "" {
		mode = ModeSecond
	}
	if mode != ModeSecond && mode != ModeReplaceDefault {
		return InstallResult{}, fmt.Errorf("unknown mode %q: want %s or %s", mode, ModeSecond, ModeReplaceDefault)
	}
	bootstrap := opts.BootstrapSchedulerName
	if bootstrap == "" {
		bootstrap = GlobalString(opts.Values, "bootstrapSchedulerName")
	}
	if bootstrap == "" {
		bootstrap = DefaultBootstrapSchedulerName
	}
	ns := opts.Namespace
	if ns == "" {
		ns = charts.DefaultNamespace
	}
	vals := withMode(opts.Values, mode, bootstrap)

	// Render exactly what helm-controller will render: schema and chart checks fail here, before any write.
	if _, _, err := startcheck.Render(ctx, charts.RenderOptions{ReleaseName: HelmChartName, Namespace: ns, Values: vals}); err != nil {
		return InstallResult{}, fmt.Errorf("invalid values, nothing written: %w", err)
	}
	archive, err := chartArchive(opts.AllowVersionSkew)
	if err != nil {
		return InstallResult{}, err
	}
	hc, err := NewHelmChart(archive, vals, ns)
	if err != nil {
		return InstallResult{}, err
	}
	if opts.ManifestNode != "" {
		hc.Annotations = map[string]string{ManifestNodeAnnotation: opts.ManifestNode}
	}
	manifest, err := EncodeHelmChart(hc)
	if err != nil {
		return InstallResult{}, err
	}

	if !opts.DryRun {
		unlock, err := lock(in.Paths.LockFile())
		if err != nil {
			return InstallResult{}, err
		}
		defer unlock()
	}

	for _, path := range []string{in.Paths.DropIn(), in.Paths.BootstrapSchedulerConfig(), in.Paths.AdmissionPolicyDropIn()} {
		if err := ensureManaged(path); err != nil {
			return InstallResult{}, err
		}
	}
	if opts.ManifestElsewhere != "" {
		if err := ensureOwnManifest(in.Paths.Manifest()); err != nil {
			return InstallResult{}, err
		}
	}
	ops := &fileOps{dryRun: opts.DryRun}
	res := InstallResult{Manifest: in.Paths.Manifest(), ManifestContent: manifest, Values: vals}
	gateChanged, err := setAdmissionPolicyGate(ops, in.Paths, opts.AdmissionPolicyGate && mode == ModeSecond)
	if err != nil {
		return res, err
	}
	// Every return below reports a restart when the gate drop-in changed.
	done := func(err error) (InstallResult, error) {
		res.RestartK3s = res.RestartK3s || gateChanged
		res.Changes = ops.done
		return res, err
	}
	if mode != ModeReplaceDefault {
		if res.RestartK3s, err = disableBootstrapScheduler(ops, in.Paths); err != nil {
			return done(err)
		}
	}
	// The images before the HelmChart, so Ballast's pods find them.
	if opts.Images != "" {
		if res.Images, res.ImagesChanged, err = placeImages(ops, in.Paths, opts.Images); err != nil {
			return done(err)
		}
	}
	if opts.ManifestElsewhere != "" {
		res.CopyRemoved, err = ops.remove(in.Paths.Manifest())
	} else {
		res.ManifestChanged, err = ops.write(in.Paths.Manifest(), manifest, 0o600)
	}
	if err != nil {
		return done(err)
	}
	if mode != ModeReplaceDefault {
		return done(nil)
	}
	// Ballast's pods ask for the bootstrap scheduler, which exists once k3s
	// restarts with the drop-in; helm-controller's install Job asks for
	// default-scheduler, which k3s then no longer serves. So the drop-in is
	// written only once the release is deployed, never before.
	if current, err := bootstrapSchedulerEnabled(in.Paths, bootstrap); err != nil || current {
		return done(err)
	}
	if opts.DryRun {
		res.DropInPending = true
		return done(nil)
	}
	if opts.WaitForRelease == nil {
		return done(fmt.Errorf("%w: nothing confirmed that helm-controller deployed Ballast", ErrDropInNotWritten))
	}
	if err := opts.WaitForRelease(ctx, vals); err != nil {
		return done(fmt.Errorf("%w: %v", ErrDropInNotWritten, err))
	}
	if res.RestartK3s, err = enableBootstrapScheduler(ops, in.Paths, bootstrap); err != nil {
		return done(err)
	}
	return done(nil)
}

// PreviousValues returns the values of the HelmChart an earlier install
// wrote; found is false when there is none.
func (in Installer) PreviousValues() (vals map[string]any, found bool, err error) {
	data, err := os.ReadFile(in.Paths.Manifest())
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", in.Paths.Manifest(), err)
	}
	hc, err := DecodeHelmChart(data)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", in.Paths.Manifest(), err)
	}
	vals = map[string]any{}
	if err := yaml.Unmarshal([]byte(hc.Spec.ValuesContent), &vals); err != nil {
		return nil, false, fmt.Errorf("%s: values: %w", in.Paths.Manifest(), err)
	}
	return vals, true, nil
}

func chartArchive(allowVersionSkew bool) ([]byte, error) {
	if !allowVersionSkew {
		return charts.Archive()
	}
	files, err := charts.Files()
	if err != nil {
		return nil, err
	}
	return charts.ArchiveFiles(charts.WithoutKubeVersion(files))
}

// GlobalString returns the string value global.<key> in vals, "" when unset.
func GlobalString(vals map[string]any, key string) string {
	g, _ := vals["global"].(map[string]any)
	s, _ := g[key].(string)
	return s
}

// FileAction is a host file an uninstall removes, or leaves and why.
type FileAction struct {
	Path string
	// What names the file for a reader: "HelmChart manifest",
	// "scheduler drop-in", "images archive".
	What   string
	Remove bool
	// Why says why a file is left: it is not Ballast's.
	Why string
}

// UninstallPlan is what an uninstall does on this host: the files it
// removes, those of Ballast's names it leaves because they are not
// Ballast's, and whether k3s must restart after.
type UninstallPlan struct {
	Files []FileAction
	// ManifestOurs is true when this host carries the HelmChart manifest
	// ballast install wrote.
	ManifestOurs bool
	// RestartK3s is true when a k3s config drop-in is removed.
	RestartK3s bool
}

// Removed are the files the plan removes, of kind what ("" for all).
func (p UninstallPlan) Removed(what string) []string {
	var out []string
	for _, f := range p.Files {
		if f.Remove && (what == "" || f.What == what) {
			out = append(out, f.Path)
		}
	}
	return out
}

// Left are the files the plan leaves.
func (p UninstallPlan) Left() []FileAction {
	var out []FileAction
	for _, f := range p.Files {
		if !f.Remove {
			out = append(out, f)
		}
	}
	return out
}

// What files an uninstall considers.
const (
	WhatManifest       = "HelmChart manifest"
	WhatDropIn         = "k3s scheduler drop-in"
	WhatSchedulerConf  = "bootstrap scheduler configuration"
	WhatAdmissionGate  = "k3s admission policy drop-in"
	WhatImagesArchive  = "images archive"
	WhatBallastState   = "Ballast's state directory"
	manifestNotOursWhy = "it was not written by ballast install (it does not start with Ballast's header)"
)

// PlanUninstall reads which of the files an install writes are on this host
// and which of them are Ballast's: those carry its header or marker line
// (an images archive: the checksum recorded when it was placed). Others of
// those names are someone else's, and are left.
func (in Installer) PlanUninstall() (UninstallPlan, error) {
	var plan UninstallPlan
	if exists(in.Paths.Manifest()) {
		a := FileAction{Path: in.Paths.Manifest(), What: WhatManifest, Remove: true}
		if err := ensureOwnManifest(a.Path); err != nil {
			a.Remove, a.Why = false, manifestNotOursWhy
		}
		plan.ManifestOurs = a.Remove
		plan.Files = append(plan.Files, a)
	}
	// The drop-in before the configuration it points to, so that k3s never
	// points at a file that is gone.
	for _, f := range []FileAction{
		{Path: in.Paths.DropIn(), What: WhatDropIn},
		{Path: in.Paths.BootstrapSchedulerConfig(), What: WhatSchedulerConf},
		{Path: in.Paths.AdmissionPolicyDropIn(), What: WhatAdmissionGate},
	} {
		if !exists(f.Path) {
			continue
		}
		f.Remove, f.Why = isManaged(f.Path)
		if f.Remove && f.What != WhatSchedulerConf {
			plan.RestartK3s = true
		}
		plan.Files = append(plan.Files, f)
	}
	images, err := planPlacedImages(in.Paths)
	if err != nil {
		return plan, err
	}
	plan.Files = append(plan.Files, images...)
	return plan, nil
}

// UninstallResult says what was removed.
type UninstallResult struct {
	ManifestRemoved bool
	// ImagesRemoved are the images archives an install placed.
	ImagesRemoved []string
	// DropInRemoved is true when the scheduler drop-in was removed.
	DropInRemoved bool
	// RestartK3s is true when a k3s config drop-in was removed.
	RestartK3s bool
	// Left are the files of Ballast's names that are not Ballast's, left
	// in place, each with why.
	Left []FileAction
}

// Uninstall deletes the HelmChart through the API with deleteHelmChart (then
// helm-controller uninstalls the release), and only then removes the host
// files that are Ballast's (PlanUninstall): deleting the manifest alone
// leaves Ballast running.
func (in Installer) Uninstall(ctx context.Context, deleteHelmChart func(context.Context) error) (UninstallResult, error) {
	if err := in.checkPrivileges(); err != nil {
		return UninstallResult{}, err
	}
	unlock, err := lock(in.Paths.LockFile())
	if err != nil {
		return UninstallResult{}, err
	}
	defer unlock()

	var res UninstallResult
	plan, err := in.PlanUninstall()
	if err != nil {
		return res, err
	}
	res.Left = plan.Left()
	if deleteHelmChart != nil {
		if err := deleteHelmChart(ctx); err != nil {
			return res, fmt.Errorf("delete HelmChart %s/%s, host files left in place: %w", HelmChartNamespace, HelmChartName, err)
		}
	}
	for _, f := range plan.Files {
		if !f.Remove {
			continue
		}
		removed, err := removeFile(f.Path)
		if err != nil {
			return res, err
		}
		switch {
		case !removed:
		case f.What == WhatManifest:
			res.ManifestRemoved = true
		case f.What == WhatDropIn:
			res.DropInRemoved, res.RestartK3s = true, true
		case f.What == WhatAdmissionGate:
			res.RestartK3s = true
		case f.What == WhatImagesArchive:
			res.ImagesRemoved = append(res.ImagesRemoved, f.Path)
		}
	}
	for _, f := range []string{in.Paths.PlacedImages(), in.Paths.LockFile()} {
		if _, err := removeFile(f); err != nil {
			return res, err
		}
	}
	// The state directory is Ballast's own; leave it only if someone put other files there.
	_ = os.Remove(in.Paths.StateDir())
	return res, nil
}

func (in Installer) checkPrivileges() error {
	euid := os.Geteuid
	if in.Euid != nil {
		euid = in.Euid
	}
	// Only the real host needs root; a --root tree belongs to whoever prepared it.
	if in.Paths.Root == "/" && euid() != 0 {
		return fmt.Errorf("installing on a k3s server writes %s, which only root may write: run with sudo, "+
			"or use --helm to install through the API with your kubeconfig", in.Paths.ManifestsDir())
	}
	return nil
}

// WithMode returns a copy of vals with the settings mode relies on: the
// scheduler mode, and in replaceDefault mode the bootstrap scheduler's name
// (from the values, else DefaultBootstrapSchedulerName).
func WithMode(vals map[string]any, mode Mode) map[string]any {
	bootstrap := GlobalString(vals, "bootstrapSchedulerName")
	if bootstrap == "" {
		bootstrap = DefaultBootstrapSchedulerName
	}
	return withMode(vals, mode, bootstrap)
}

// withMode returns a copy of vals with the scheduler mode settings the host files rely on.
func withMode(vals map[string]any, mode Mode, bootstrap string) map[string]any {
	out := make(map[string]any, len(vals)+1)
	for k, v := range vals {
		out[k] = v
	}
	global := map[string]any{}
	if g, ok := out["global"].(map[string]any); ok {
		for k, v := range g {
			global[k] = v
		}
	}
	if mode == ModeReplaceDefault {
		global["schedulerMode"] = string(ModeReplaceDefault)
		global["bootstrapSchedulerName"] = bootstrap
	} else {
		delete(global, "schedulerMode")
		delete(global, "bootstrapSchedulerName")
	}
	if len(global) > 0 {
		out["global"] = global
	} else {
		delete(out, "global")
	}
	return out
}
