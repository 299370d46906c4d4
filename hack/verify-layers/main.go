// Command verify-layers fails when a Ballast package imports one above it,
// tests included: the ground floor (core) imports no other Ballast package,
// a component imports the ground floor and the floors its row in layers.go
// lists, and so up to the end-to-end lane. `make lint` runs it.
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
	violations, homeless, err := check(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verify-layers:", err)
		os.Exit(2)
	}
	for _, v := range violations {
		fmt.Fprintf(os.Stderr, "upward import: %s\n", v)
	}
	for _, p := range homeless {
		fmt.Fprintf(os.Stderr, "no floor: %s (add its directory to hack/verify-layers/layers.go and docs/architecture.md)\n", p)
	}
	if len(violations) > 0 || len(homeless) > 0 {
		os.Exit(1)
	}
}
