// Command printversion prints version.Line, so a test can link it with -X
// flags and check that they reach the package. It links one small
// Kubernetes package, as every Ballast binary links many.
package main

import (
	"fmt"

	_ "k8s.io/apimachinery/pkg/version"

	"github.com/ballast-sched/ballast/core/version"
)

func main() { fmt.Println(version.Line("printversion")) }
