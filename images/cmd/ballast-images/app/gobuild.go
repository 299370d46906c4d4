package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// versionPackage keeps the version every Ballast binary reports; the -X
// flags set its variables.
const versionPackage = "github.com/ballast-sched/ballast/core/version"

// linkJobs is how many binaries are built at once: linking a Kubernetes
// component takes about 2.5 GB.
const linkJobs = 2

// binaryJob is one binary to cross-compile.
type binaryJob struct {
	component component
	platform  v1.Platform
	out       string // path of the binary
}

// ldflags strips the symbol tables and sets the version.
func ldflags(version, revision string) string {
	f := fmt.Sprintf("-s -w -X %s.version=%s", versionPackage, version)
	if revision != "" {
		f += fmt.Sprintf(" -X %s.revision=%s", versionPackage, revision)
	}
	return f
}

// goBuildAll cross-compiles every job, linkJobs at a time, and returns the
// first error.
func goBuildAll(ctx context.Context, p *progress, root, version, revision string, keepPaths bool, jobs []binaryJob) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, linkJobs)
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				return
			}
			start := time.Now()
			if errs[i] = goBuild(ctx, root, version, revision, keepPaths, j); errs[i] != nil {
				cancel()
				return
			}
			p.logf("built %s for %s in %s", j.component.binary(), j.platform, time.Since(start).Round(time.Second))
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// goBuild cross-compiles one binary: static (no cgo), without local paths
// (unless keepPaths) or symbol tables, in its component's module alone, so
// that module's go.mod decides the dependencies (GOWORK=off: neither the
// repository's go.work nor one a user keeps above the checkout), as for
// someone who requires the module.
func goBuild(ctx context.Context, root, version, revision string, keepPaths bool, j binaryJob) error {
	gp := platforms[j.platform.String()]
	args := []string{"build", "-ldflags", ldflags(version, revision), "-o", j.out, j.component.pkg}
	if !keepPaths {
		args = append([]string{"build", "-trimpath"}, args[1:]...)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = filepath.Join(root, j.component.module)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOOS="+j.platform.OS, "GOARCH="+gp.goarch, "GOARM="+gp.goarm)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("building %s for %s: %w\n%s", j.component.binary(), j.platform, err, out)
	}
	return nil
}

// sourceDate is the time every timestamp of the images is set to:
// SOURCE_DATE_EPOCH when set, else the time of the commit checked out.
func sourceDate(root string) (time.Time, error) {
	if s, ok := os.LookupEnv("SOURCE_DATE_EPOCH"); ok {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil || sec < 0 {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", s)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	out, err := git(root, "log", "-1", "--format=%ct")
	if err != nil {
		return time.Time{}, fmt.Errorf("no SOURCE_DATE_EPOCH and no commit to take the time from: %w", err)
	}
	sec, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("commit time %q: %w", out, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// revision returns the commit checked out at root, "" outside a git
// checkout, and whether the work tree has uncommitted changes.
func revision(root string) (rev string, dirty bool) {
	rev, err := git(root, "rev-parse", "HEAD")
	if err != nil {
		return "", false
	}
	status, err := git(root, "status", "--porcelain", "--untracked-files=no")
	return rev, err == nil && status != ""
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(exitErr.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
