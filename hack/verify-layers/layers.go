package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// prefix is what every Ballast module path and package path starts with:
// a module's path is prefix + its directory.
const prefix = "github.com/ballast-sched/ballast"

// A floor is a directory of the repository and the directories below it that
// its packages, tests included, may import. A package belongs to the floor of
// the longest directory that holds it; it may import the packages of that
// directory (a floor's rooms, its subdirectories with floors of their own
// included) and those of the directories the floor lists. So a subdirectory
// with a floor of its own is a part of its parent that the rest of the parent
// may use but that may not use the rest of the parent.
//
// A floor at the top of the repository is a module of go.work as well: it may
// require the modules of the directories it lists, and no other of
// Ballast's. docs/architecture.md draws the same table.
type floor struct {
	dir   string
	below []string
}

// module reports whether the floor is a module of its own: every floor at the
// top of the repository is one.
func (f floor) module() bool { return !strings.Contains(f.dir, "/") }

// floors is the house, ground floor first.
var floors = []floor{
	// The ground floor: what every component shares and none owns (usage
	// types and client, the load model, test certificates, the CLI toolkit).
	{dir: "core"},
	// The build's own tools.
	{dir: "hack"},
	{dir: "load-watcher", below: []string{"core"}},
	{dir: "charts", below: []string{"core"}},
	{dir: "images", below: []string{"core"}},
	// The scheduler can run load-watcher's collector in its own process
	// (library mode).
	{dir: "scheduler", below: []string{"core", "load-watcher"}},
	{dir: "descheduler", below: []string{"core"}},
	// The in-process cluster: etcd, kube-apiserver, controllers and
	// kube-scheduler in one process, for the tests and the simulator. Above
	// the components, so that none of them requires a control plane.
	{dir: "cluster", below: []string{"core"}},
	// The installer runs every component's start-up checks on the
	// configuration it renders, and explains placements with the
	// scheduler's plugins.
	{dir: "installer", below: []string{"core", "charts", "load-watcher", "scheduler", "descheduler"}},
	{dir: "simulator", below: []string{"core", "charts", "cluster", "load-watcher", "scheduler", "descheduler"}},
	{dir: "simulator/scenario", below: []string{"core"}},
	// The simulation engine, split by direction: the model of the world
	// (scenario time, usage) at the bottom, the Ballast stack it drives on
	// top of it, what is observed and recorded of a run, how a run is told
	// (tables, HTML), and the engine that runs all of them.
	{dir: "simulator/sim/model", below: []string{"core", "cluster", "simulator/scenario"}},
	// The best placement possible, which runs are measured against.
	{dir: "simulator/sim/oracle", below: []string{"core", "simulator/scenario", "simulator/sim/model"}},
	{dir: "simulator/sim/stack", below: []string{"core", "charts", "cluster", "load-watcher", "scheduler", "descheduler",
		"simulator/scenario", "simulator/sim/model"}},
	{dir: "simulator/sim/record", below: []string{"core", "simulator/scenario", "simulator/sim/model", "simulator/sim/oracle"}},
	{dir: "simulator/sim/report", below: []string{"core", "simulator/scenario", "simulator/sim/model", "simulator/sim/oracle", "simulator/sim/record"}},
	{dir: "simulator/sim", below: []string{"core", "charts", "cluster", "load-watcher", "scheduler", "descheduler", "simulator/scenario"}},
	// The tests that need the components and the in-process cluster
	// together.
	{dir: "integration", below: []string{"core", "charts", "cluster", "load-watcher", "scheduler", "descheduler", "installer"}},
	{dir: "e2e", below: []string{"core", "load-watcher", "charts", "cluster", "images", "scheduler", "descheduler", "installer", "simulator"}},
	// `make release`: builds every artifact with the components' own tools
	// and checks that they belong together (the chart pulls the images
	// built, `ballast install --images` finds the archives).
	{dir: "release", below: []string{"core", "charts", "images", "installer"}},
}

// outside are the directories whose modules stay out of go.work: builds on
// other Kubernetes lines (the upstream peer, the lane's tools) and the
// programs that consume Ballast's modules as someone else's would. No module
// of go.work may require them.
var outside = []string{"peers", "e2e/build", "test/consumers"}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// violation is one import or requirement that runs upward (or sideways).
type violation struct {
	from, to string
	test     bool
	// module is true for a go.mod requirement, false for an import.
	module bool
}

func (v violation) String() string {
	if v.module {
		return fmt.Sprintf("module %s requires %s", v.from, v.to)
	}
	where := ""
	if v.test {
		where = " (in a test)"
	}
	return fmt.Sprintf("%s imports %s%s", v.from, v.to, where)
}

// report is everything check finds wrong.
type report struct {
	// violations are imports and requirements the floors do not allow.
	violations []violation
	// homeless are packages, and modules, in directories no floor names.
	homeless []string
	// problems are module rules broken: a module without a floor, a
	// Ballast module required without the local replace that lets the
	// module build alone, two versions of one dependency.
	problems []string
}

func (r report) ok() bool {
	return len(r.violations) == 0 && len(r.homeless) == 0 && len(r.problems) == 0
}

// floorOf returns the floor a package or directory (path relative to the
// repository) lives on: the longest floor directory that holds it. ok is
// false for one no floor names.
func floorOf(rel string) (floor, bool) {
	best, found := floor{}, false
	for _, f := range floors {
		if under(rel, f.dir) && len(f.dir) > len(best.dir) {
			best, found = f, true
		}
	}
	return best, found
}

// allowed reports whether a package on floor from may import to (a path
// relative to the repository): a package of the floor's directory, or of a
// directory the floor lists.
func allowed(from floor, to string) bool {
	return under(to, from.dir) || slices.ContainsFunc(from.below, func(dir string) bool { return under(to, dir) })
}

// under reports whether the package rel lives in dir or below it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// check reads the workspace at root (go.work and the go.mod of each of its
// modules) and every package of its modules, and reports what runs against
// the floors.
func check(root string) (report, error) {
	var r report
	mods, err := workspaceModules(root)
	if err != nil {
		return r, err
	}
	if err := checkModules(root, mods, &r); err != nil {
		return r, err
	}
	if err := checkPackages(root, mods, &r); err != nil {
		return r, err
	}
	sort.Slice(r.violations, func(i, j int) bool { return r.violations[i].String() < r.violations[j].String() })
	sort.Strings(r.homeless)
	sort.Strings(r.problems)
	return r, nil
}

// goMod is what `go mod edit -json` says of a go.mod.
type goMod struct {
	Module struct{ Path string }
	Go     string
	// Require lists the module's requirements, indirect ones included.
	Require []struct {
		Path    string
		Version string
	}
	Replace []struct {
		Old struct{ Path, Version string }
		New struct{ Path, Version string }
	}
}

// module is one module of the workspace: its directory relative to the
// repository and its go.mod.
type module struct {
	dir string
	mod goMod
}

// workspaceModules reads go.work at root and the go.mod of each module it
// uses.
func workspaceModules(root string) ([]module, error) {
	var work struct {
		Use []struct{ DiskPath string }
	}
	if err := goJSON(root, &work, "work", "edit", "-json"); err != nil {
		return nil, fmt.Errorf("reading go.work: %w", err)
	}
	var mods []module
	for _, u := range work.Use {
		dir := path.Clean(filepath.ToSlash(u.DiskPath))
		var m goMod
		if err := goJSON(filepath.Join(root, dir), &m, "mod", "edit", "-json"); err != nil {
			return nil, fmt.Errorf("reading %s/go.mod: %w", dir, err)
		}
		mods = append(mods, module{dir: dir, mod: m})
	}
	return mods, nil
}

// checkModules holds each module of the workspace to its floor: its path is
// its directory's, it requires only the Ballast modules below it, it
// replaces each Ballast module of its build with that module's directory (so
// it builds alone, GOWORK=off), and every dependency that several modules
// list is listed at one version. A go.mod in a directory that is neither a
// module of the workspace nor outside it is reported too.
func checkModules(root string, mods []module, r *report) error {
	byDir := map[string]module{}
	for _, m := range mods {
		byDir[m.dir] = m
	}
	versions := map[string]map[string][]string{} // dependency → version → modules
	for _, m := range mods {
		f, ok := floorOf(m.dir)
		if !ok || !f.module() || f.dir != m.dir {
			r.problems = append(r.problems, fmt.Sprintf("module %s: no floor names it as a module (add it to hack/verify-layers/layers.go and docs/architecture.md)", m.dir))
			continue
		}
		if want := prefix + "/" + m.dir; m.mod.Module.Path != want {
			r.problems = append(r.problems, fmt.Sprintf("module %s: its path is %s, want %s", m.dir, m.mod.Module.Path, want))
		}
		replaced := map[string]string{}
		for _, rep := range m.mod.Replace {
			replaced[rep.Old.Path] = rep.New.Path
		}
		for _, req := range m.mod.Require {
			to, ok := relative(req.Path)
			if !ok {
				if versions[req.Path] == nil {
					versions[req.Path] = map[string][]string{}
				}
				versions[req.Path][req.Version] = append(versions[req.Path][req.Version], m.dir)
				continue
			}
			if !allowed(f, to) {
				r.violations = append(r.violations, violation{from: m.dir, to: to, module: true})
			}
		}
		// Every Ballast module of the build, required directly or not,
		// comes from its own directory.
		for _, dep := range ballastClosure(m.dir, byDir) {
			want := relPath(m.dir, dep)
			if got := replaced[prefix+"/"+dep]; got != want {
				r.problems = append(r.problems, fmt.Sprintf("module %s: builds with %s but does not replace it with %s (it would not build alone)", m.dir, dep, want))
			}
		}
	}
	for dep, byVersion := range versions {
		if len(byVersion) < 2 {
			continue
		}
		var list []string
		for v, ms := range byVersion {
			sort.Strings(ms)
			list = append(list, fmt.Sprintf("%s in %s", v, strings.Join(ms, ", ")))
		}
		sort.Strings(list)
		r.problems = append(r.problems, fmt.Sprintf("%s is listed at %d versions: %s (go work sync)", dep, len(list), strings.Join(list, "; ")))
	}
	// Modules nobody listed: a go.mod of a directory that is in neither
	// go.work nor the outside list.
	return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata" ||
				slices.ContainsFunc(outside, func(o string) bool { return under(rel, o) })) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "go.mod" {
			return nil
		}
		dir := path.Dir(rel)
		if _, ok := byDir[dir]; !ok {
			r.homeless = append(r.homeless, "module "+dir+" (use it in go.work, or list it in hack/verify-layers/layers.go as outside)")
		}
		return nil
	})
}

// ballastClosure lists the Ballast modules the module at dir builds with:
// those it requires, and theirs.
func ballastClosure(dir string, byDir map[string]module) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(d string) {
		for _, req := range byDir[d].mod.Require {
			to, ok := relative(req.Path)
			if !ok || seen[to] || to == dir {
				continue
			}
			seen[to] = true
			walk(to)
		}
	}
	walk(dir)
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// relPath is the local replacement of module dep in module from: its
// directory relative to from's.
func relPath(from, dep string) string {
	rel, err := filepath.Rel(filepath.FromSlash(from), filepath.FromSlash(dep))
	if err != nil {
		return dep
	}
	rel = filepath.ToSlash(rel)
	if !strings.HasPrefix(rel, ".") {
		rel = "./" + rel
	}
	return rel
}

// checkPackages lists every package of the workspace's modules with go list
// and reports every import between Ballast packages, tests included, that
// the floors do not allow, and the packages that no floor names.
func checkPackages(root string, mods []module, r *report) error {
	args := []string{"list", "-e", "-json"}
	for _, m := range mods {
		args = append(args, m.mod.Module.Path+"/...")
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go list: %w: %s", err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("decoding go list: %w", err)
		}
		if p.Error != nil {
			return fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		rel, ok := relative(p.ImportPath)
		if !ok {
			continue
		}
		from, ok := floorOf(rel)
		if !ok {
			r.homeless = append(r.homeless, rel)
			continue
		}
		seen := map[violation]bool{}
		for _, list := range []struct {
			imports []string
			test    bool
		}{{p.Imports, false}, {p.TestImports, true}, {p.XTestImports, true}} {
			for _, imp := range list.imports {
				to, ok := relative(imp)
				if !ok || to == rel || allowed(from, to) {
					continue
				}
				v := violation{from: rel, to: to, test: list.test}
				if !seen[v] {
					seen[v] = true
					r.violations = append(r.violations, v)
				}
			}
		}
	}
	return nil
}

// relative strips the repository's path prefix; ok is false for a package or
// module of another repository.
func relative(importPath string) (string, bool) {
	return strings.CutPrefix(importPath, prefix+"/")
}

// goJSON runs the go command in dir and decodes its JSON output into v.
func goJSON(dir string, v any, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return json.Unmarshal(out, v)
}
