// Command load-watcher-client prints the usage load-watcher serves, through
// Ballast's Go client of its API: it requires Ballast's ground floor alone.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/ballast-sched/ballast/core/client"
)

func main() {
	address := flag.String("address", "http://ballast-load-watcher.ballast-system:2020", "load-watcher's URL")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snap, err := client.Fetch(ctx, client.Config{Address: *address})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	names := make([]string, 0, len(snap.Nodes))
	for name := range snap.Nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n := snap.Nodes[name]
		fmt.Printf("%s stale=%t\n", name, n.Stale)
	}
}
