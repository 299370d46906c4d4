// Command hostile answers in load-watcher's place the way a broken or
// malicious server would, for the fault suite. Every request to any path gets
// the next of three answers in turn: oversized (a well-formed beginning
// followed by more bytes than a client should ever read, --size, default
// 24 MiB), absurd (a well-formed, fresh usage list of the given nodes whose
// numbers make no sense: thousands of percent, negative averages) and garbage
// (not JSON at all). A client that believed any of them would act on
// nonsense; Ballast's must treat each as no usage at all.
//
//	hostile --nodes node-a,node-b [--address :2020] [--size 24Mi]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	lwv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
)

func main() {
	address := flag.String("address", ":2020", "address to listen on")
	nodes := flag.String("nodes", "", "comma-separated node names the absurd answer reports")
	size := flag.String("size", "24Mi", "size of the oversized answer")
	flag.Parse()
	n, err := resource.ParseQuantity(*size)
	if err != nil || *nodes == "" {
		fmt.Fprintln(os.Stderr, "hostile: --nodes is required and --size must be a quantity")
		os.Exit(2)
	}
	h := &handler{nodes: strings.Split(*nodes, ","), size: n.Value()}
	srv := &http.Server{Addr: *address, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	log.Printf("hostile: answering on %s", *address)
	log.Fatal(srv.ListenAndServe())
}

type handler struct {
	nodes []string
	size  int64
	next  atomic.Uint64
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch h.next.Add(1) % 3 {
	case 0:
		h.oversized(w)
	case 1:
		h.absurd(w)
	default:
		_, _ = w.Write([]byte("<html>this is not load-watcher</html>"))
	}
}

func (h *handler) oversized(w http.ResponseWriter) {
	_, _ = w.Write([]byte(`{"apiVersion":"` + lwv1.APIVersion + `","nodes":{"` + h.nodes[0] + `":{"windows":{"1m":{"memory":{"latest":1`))
	pad := []byte(strings.Repeat("0", 64<<10))
	for written := int64(0); written < h.size; written += int64(len(pad)) {
		if _, err := w.Write(pad); err != nil {
			return
		}
	}
}

func (h *handler) absurd(w http.ResponseWriter) {
	now := time.Now()
	list := lwv1.UsageList{
		APIVersion: lwv1.APIVersion, Time: now, Source: "metrics-server", PeriodSeconds: 15, StaleAfterSeconds: 45,
		Windows: []string{"1m", "5m", "15m"}, Nodes: map[string]lwv1.NodeUsage{},
	}
	nonsense := usage.Stats{Latest: 4200, Avg: -50, Max: 1e9, P95: 4200, Samples: 4}
	for _, n := range h.nodes {
		windows := map[string]map[usage.Resource]usage.Stats{}
		for _, win := range list.Windows {
			windows[win] = map[usage.Resource]usage.Stats{usage.CPU: nonsense, usage.Memory: nonsense}
		}
		list.Nodes[n] = lwv1.NodeUsage{SampleTime: now, Windows: windows}
	}
	_ = json.NewEncoder(w).Encode(list)
}
