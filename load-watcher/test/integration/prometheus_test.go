package integration

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/core/promserver"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
	promprovider "github.com/ballast-sched/ballast/load-watcher/pkg/provider/prometheus"
)

// exporterNode is one fake node-exporter with fixed utilisation.
type exporterNode struct {
	node      provider.Node
	listen    string  // loopback address the exporter listens on
	cpuBusy   float64 // fraction of the machine
	memUsed   float64 // fraction of the machine
	wantCPU   float64 // percent of allocatable load-watcher must report
	wantMem   float64
	scrapeCfg func(target string) string
}

func TestPrometheusQuerySets(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Prometheus server; skipped with -short")
	}
	bin := promserver.Binary(t)
	start := time.Now()
	nodes := []*exporterNode{
		{
			// Relabelled target: instance = node name.
			node:    provider.Node{Name: "node-a", InternalIP: "10.0.0.1"},
			listen:  "127.0.0.1:0",
			cpuBusy: 0.25, memUsed: 0.40, wantCPU: 25, wantMem: 40,
			scrapeCfg: func(target string) string {
				return job("node-a", target, "", "    relabel_configs:\n      - target_label: instance\n        replacement: node-a\n")
			},
		},
		{
			// Target labelled with node; instance is an unrelated IP:port.
			node:    provider.Node{Name: "node-b", InternalIP: "10.0.0.2"},
			listen:  "127.0.0.1:0",
			cpuBusy: 0.60, memUsed: 0.70, wantCPU: 60, wantMem: 70,
			scrapeCfg: func(target string) string {
				return job("node-b", target, "        labels: {node: node-b}\n", "")
			},
		},
		{
			// Raw target: instance host = the node's InternalIP. 4 cores with
			// 3.2 allocatable: 10 % of the machine is 12.5 % of allocatable.
			node: provider.Node{Name: "node-c", InternalIP: "127.0.0.3",
				Capacity: provider.Quantities{MilliCPU: 4000}, Allocatable: provider.Quantities{MilliCPU: 3200}},
			listen:  "127.0.0.3:0",
			cpuBusy: 0.10, memUsed: 0.85, wantCPU: 12.5, wantMem: 85,
			scrapeCfg: func(target string) string { return job("node-c", target, "", "") },
		},
	}
	var jobs strings.Builder
	for _, n := range nodes {
		target := serveExporter(t, n, start)
		jobs.WriteString(n.scrapeCfg(target))
	}
	cfg := "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [\"rules.yml\"]\nscrape_configs:\n" + jobs.String()
	addr := promserver.Start(t, bin, map[string]string{promserver.ConfigFile: cfg, "rules.yml": rules}).Addr

	var pnodes []provider.Node
	for _, n := range nodes {
		pnodes = append(pnodes, n.node)
	}
	for _, set := range []promprovider.QuerySet{promprovider.QuerySetNodeExporter, promprovider.QuerySetKubePrometheus, promprovider.QuerySetAuto} {
		t.Run(string(set), func(t *testing.T) {
			p, err := promprovider.New(promprovider.Config{Address: "http://" + addr, QuerySet: set})
			if err != nil {
				t.Fatal(err)
			}
			col, err := collector.New(collector.Config{Provider: p, Nodes: collector.StaticNodes(pnodes), Period: time.Second, Windows: []usage.Window{usage.Window1m}})
			if err != nil {
				t.Fatal(err)
			}
			// Rates need two scrapes and the rules an evaluation: poll.
			deadline := time.Now().Add(60 * time.Second)
			for {
				err := col.Collect(context.Background())
				problems := check(col.Snapshot(), nodes)
				if err == nil && len(problems) == 0 {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("load-watcher never reported the exporters' values (collect error: %v):\n%s", err, strings.Join(problems, "\n"))
				}
				time.Sleep(500 * time.Millisecond)
			}
		})
	}
}

// check lists every node whose reported latest values are not the wanted ones.
func check(snap *usage.Snapshot, nodes []*exporterNode) []string {
	var problems []string
	for _, n := range nodes {
		u, ok := snap.Node(n.node.Name)
		if !ok {
			problems = append(problems, n.node.Name+": no fresh usage")
			continue
		}
		for res, want := range map[usage.Resource]float64{usage.CPU: n.wantCPU, usage.Memory: n.wantMem} {
			st, ok := u.Get(usage.Window1m, res)
			if !ok || math.Abs(st.Latest-want) > 0.01 {
				problems = append(problems, fmt.Sprintf("%s %s: got %v (present %v), want %v", n.node.Name, res, st.Latest, ok, want))
			}
		}
	}
	if len(snap.Nodes) != len(nodes) && len(problems) == 0 {
		problems = append(problems, fmt.Sprintf("snapshot has %d nodes, want %d", len(snap.Nodes), len(nodes)))
	}
	return problems
}

func job(name, target, labels, extra string) string {
	return fmt.Sprintf("  - job_name: %s\n    static_configs:\n      - targets: [%q]\n%s%s", name, target, labels, extra)
}

// serveExporter serves node-exporter series for n on loopback. Samples carry
// explicit timestamps, so rates computed by Prometheus are exact: idle CPU
// seconds grow by (1 − busy) per second on each of two cores.
func serveExporter(t *testing.T, n *exporterNode, start time.Time) string {
	t.Helper()
	lis, err := net.Listen("tcp", n.listen)
	if err != nil {
		t.Fatalf("listening on %s: %v", n.listen, err)
	}
	const memTotal = 8 << 30
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		now := time.Now()
		ms := now.UnixMilli()
		elapsed := float64(ms-start.UnixMilli()) / 1000
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintln(w, "# TYPE node_cpu_seconds_total counter")
		for _, cpu := range []string{"0", "1"} {
			fmt.Fprintf(w, "node_cpu_seconds_total{cpu=%q,mode=\"idle\"} %g %d\n", cpu, 1000+elapsed*(1-n.cpuBusy), ms)
			fmt.Fprintf(w, "node_cpu_seconds_total{cpu=%q,mode=\"user\"} %g %d\n", cpu, 1000+elapsed*n.cpuBusy, ms)
		}
		fmt.Fprintln(w, "# TYPE node_memory_MemTotal_bytes gauge")
		fmt.Fprintf(w, "node_memory_MemTotal_bytes %d %d\n", memTotal, ms)
		fmt.Fprintln(w, "# TYPE node_memory_MemAvailable_bytes gauge")
		fmt.Fprintf(w, "node_memory_MemAvailable_bytes %g %d\n", math.Round(memTotal*(1-n.memUsed)), ms)
	})}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	return lis.Addr().String()
}

// rules records the two kube-prometheus series from node-exporter's.
const rules = `groups:
  - name: kube-prometheus-node-recording
    interval: 1s
    rules:
      - record: instance:node_cpu:ratio
        expr: 1 - avg without (cpu, mode) (irate(node_cpu_seconds_total{mode="idle"}[1m]))
      - record: instance:node_memory_utilisation:ratio
        expr: 1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes
`
