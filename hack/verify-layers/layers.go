package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
)

// module is the path every Ballast package starts with.
const module = "github.com/ballast-sched/ballast"

// A floor is a directory of the repository and the directories below it that
// its packages, tests included, may import. A package belongs to the floor of
// the longest directory that holds it; it may import the packages of that
// directory (a floor's rooms, its subdirectories with floors of their own
// included) and those of the directories the floor lists. So a subdirectory
// with a floor of its own is a part of its parent that the rest of the parent
// may use but that may not use the rest of the parent.
// docs/architecture.md draws the same table.
type floor struct {
	dir   string
	below []string
}

// floors is the house, ground floor first.
var floors = []floor{
	// The ground floor: what every component shares and none owns (usage
	// types and client, the load model, the in-process cluster, test
	// certificates, the CLI toolkit).
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
	// The installer runs every component's start-up checks on the
	// configuration it renders; its integration tests run the real scheduler.
	{dir: "installer", below: []string{"core", "charts", "load-watcher", "scheduler", "descheduler"}},
	{dir: "simulator", below: []string{"core", "charts", "load-watcher", "scheduler", "descheduler"}},
	{dir: "simulator/scenario", below: []string{"core"}},
	// The simulation engine, split by direction: the model of the world
	// (scenario time, usage) at the bottom, the Ballast stack it drives on
	// top of it, what is observed and recorded of a run, how a run is told
	// (tables, HTML), and the engine that runs all of them.
	{dir: "simulator/sim/model", below: []string{"core", "simulator/scenario"}},
	// The best placement possible, which runs are measured against.
	{dir: "simulator/sim/oracle", below: []string{"core", "simulator/scenario", "simulator/sim/model"}},
	{dir: "simulator/sim/stack", below: []string{"core", "charts", "load-watcher", "scheduler", "descheduler",
		"simulator/scenario", "simulator/sim/model"}},
	{dir: "simulator/sim/record", below: []string{"core", "simulator/scenario", "simulator/sim/model", "simulator/sim/oracle"}},
	{dir: "simulator/sim/report", below: []string{"core", "simulator/scenario", "simulator/sim/model", "simulator/sim/oracle", "simulator/sim/record"}},
	{dir: "simulator/sim", below: []string{"core", "charts", "load-watcher", "scheduler", "descheduler", "simulator/scenario"}},
	{dir: "e2e", below: []string{"core", "load-watcher", "charts", "images", "scheduler", "descheduler", "installer", "simulator"}},
	// `make release`: builds every artifact with the components' own tools
	// and checks that they belong together (the chart pulls the images
	// built, `ballast install --images` finds the archives).
	{dir: "release", below: []string{"core", "charts", "images", "installer"}},
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// violation is one import that runs upward (or sideways).
type violation struct {
	from, to string
	test     bool
}

func (v violation) String() string {
	where := ""
	if v.test {
		where = " (in a test)"
	}
	return fmt.Sprintf("%s imports %s%s", v.from, v.to, where)
}

// floorOf returns the floor a package (path relative to the module) lives
// on: the longest floor directory that holds it. ok is false for a package
// no floor names.
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
// relative to the module): a package of the floor's directory, or of a
// directory the floor lists.
func allowed(from floor, to string) bool {
	return under(to, from.dir) || slices.ContainsFunc(from.below, func(dir string) bool { return under(to, dir) })
}

// under reports whether the package rel lives in dir or below it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// check lists the packages of the module at root with go list and returns
// every import between Ballast packages that the floors do not allow, and
// the packages that no floor names.
func check(root string) ([]violation, []string, error) {
	cmd := exec.Command("go", "list", "-e", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go list: %w: %s", err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	var violations []violation
	var homeless []string
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, nil, fmt.Errorf("decoding go list: %w", err)
		}
		if p.Error != nil {
			return nil, nil, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		rel, ok := relative(p.ImportPath)
		if !ok {
			continue
		}
		from, ok := floorOf(rel)
		if !ok {
			homeless = append(homeless, rel)
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
					violations = append(violations, v)
				}
			}
		}
	}
	sort.Slice(violations, func(i, j int) bool { return violations[i].String() < violations[j].String() })
	return violations, homeless, nil
}

// relative strips the module path; ok is false for a package of another
// module.
func relative(importPath string) (string, bool) {
	if importPath == module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(importPath, module+"/")
	return rel, ok
}
