// Command verify-layers fails when a Ballast module requires, or a Ballast
// package imports, one above it, tests included: the ground floor (core)
// requires and imports no other Ballast module, a component those its row in
// layers.go lists, and so up to the end-to-end lane. It also fails when a
// module of go.work would not build alone (a Ballast module of its build not
// replaced by its directory) and when two modules list one dependency at two
// versions. `make lint` runs it.
//
//	go run ./hack/verify-layers [ROOT]
package main

import (
	"fmt"
	"os"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	r, err := check(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verify-layers:", err)
		os.Exit(2)
	}
	for _, v := range r.violations {
		fmt.Fprintf(os.Stderr, "upward: %s\n", v)
	}
	for _, p := range r.homeless {
		fmt.Fprintf(os.Stderr, "no floor: %s (add its directory to hack/verify-layers/layers.go and docs/architecture.md)\n", p)
	}
	for _, p := range r.problems {
		fmt.Fprintf(os.Stderr, "modules: %s\n", p)
	}
	if !r.ok() {
		os.Exit(1)
	}
}
