// Command verify-docs fails when a link in the docs or in what the ballast
// CLI prints does not resolve: every relative link, reference and anchor of
// every Markdown file git tracks, every link to this repository's own files
// on GitHub, and every docs/x.md#y (or its GitHub URL) that a string constant
// of the Go code holds. An anchor must name a heading of the target, by
// GitHub's rules, or an HTML anchor. Links to other sites are not fetched.
// `make lint` runs it.
//
//	go run ./hack/verify-docs [ROOT]
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	tracked, err := trackedFiles(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verify-docs:", err)
		os.Exit(2)
	}
	problems, err := check(os.DirFS(root), tracked)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verify-docs:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Fprintf(os.Stderr, "broken link: %s\n", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// trackedFiles lists the files git tracks under root that are in the work
// tree (a tracked file deleted but not yet committed is gone).
func trackedFiles(root string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--", ".")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w: %s", err, stderr.String())
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		if _, err := os.Lstat(root + "/" + f); err == nil {
			files = append(files, f)
		}
	}
	return files, nil
}
