package release

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflow is what these tests read of a GitHub workflow.
type workflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Strategy struct {
			Matrix map[string]any `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Name string `yaml:"name"`
			Uses string `yaml:"uses"`
			Run  string `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, name string) workflow {
	t.Helper()
	raw, err := os.ReadFile("../../../.github/workflows/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(raw, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestReleaseWorkflowPublishesWhatMakeReleaseBuilds holds the release
// workflow to publishing `make release`'s directory: the chart's registry is
// the one the workflow pushes the images to (the repository owner's: set in
// the tree before the build, and for this repository the chart's default
// already), and no step builds an artifact of its own.
func TestReleaseWorkflowPublishesWhatMakeReleaseBuilds(t *testing.T) {
	w := readWorkflow(t, "release.yml")
	if got := w.Env["REGISTRY"]; got != "ghcr.io/${{ github.repository_owner }}" {
		t.Errorf("the release workflow pushes to %q, want the repository owner's ghcr.io", got)
	}
	// The repository's owner, from the module path.
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module github\.com/([^/]+)/`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("release/go.mod names no github.com module")
	}
	chart, err := ReadChart("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if want := "ghcr.io/" + string(m[1]); chart.Registry != want {
		t.Errorf("the chart pulls from %s, and this repository's release pushes to %s", chart.Registry, want)
	}
	var setChart, makeRelease = -1, -1
	steps := w.Jobs["build"].Steps
	for i, s := range steps {
		if strings.Contains(s.Run, "hack/set-chart-version.sh") && strings.Contains(s.Run, `"${REGISTRY,,}"`) {
			setChart = i
		}
		if strings.TrimSpace(s.Run) == "make release" {
			makeRelease = i
		}
	}
	if setChart < 0 || makeRelease < 0 || setChart > makeRelease {
		t.Errorf("the build job must set the chart's version and registry (hack/set-chart-version.sh ... \"${REGISTRY,,}\"), then run make release")
	}
	for job, j := range w.Jobs {
		for _, s := range j.Steps {
			for _, builds := range []string{"go build", "go run", "ballast-images", "helm package", "syft", "docker build"} {
				if strings.Contains(s.Run, builds) || strings.Contains(s.Uses, "sbom-action") {
					t.Errorf("job %s, step %q builds something itself (%s): the release publishes what make release built", job, s.Name, builds)
				}
			}
		}
	}
}

// TestCIRunsTheLanes holds GitHub CI to running the lanes docs/e2e.md says
// it runs.
func TestCIRunsTheLanes(t *testing.T) {
	w := readWorkflow(t, "ci.yml")
	lane, ok := w.Jobs["lane"]
	if !ok {
		t.Fatal("ci.yml has no lane job")
	}
	var targets []string
	for _, v := range lane.Strategy.Matrix["target"].([]any) {
		targets = append(targets, v.(string))
	}
	for _, want := range []string{"e2e", "e2e-k3s", "test-faults"} {
		if !slices.Contains(targets, want) {
			t.Errorf("CI's lane job runs %v, not make %s", targets, want)
		}
	}
	runs := false
	for _, s := range lane.Steps {
		runs = runs || (strings.Contains(s.Run, "sudo") && strings.Contains(s.Run, "make ${{ matrix.target }}"))
	}
	if !runs {
		t.Error("CI's lane job does not run make <target> as root")
	}
}
