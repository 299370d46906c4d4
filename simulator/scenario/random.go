package scenario

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RandomOptions shape the clusters Random draws.
type RandomOptions struct {
	// MinNodes and MaxNodes bound the cluster's size, nodes that join later
	// included; default 2 and 60.
	MinNodes, MaxNodes int
	// Duration is the simulated time; default 1h.
	Duration time.Duration
}

// nodeKind is a machine homelabs have, with what its OS and k3s use.
type nodeKind struct {
	prefix, arch         string
	cpuMilli, memMiB     int64
	bgCPUMilli, bgMemMiB int64
}

// kinds are the machines a random homelab is made of, by how often they
// appear: Raspberry Pis of two sizes most, then mini-PCs, NUCs and an old
// server.
var kinds = []struct {
	kind   nodeKind
	weight int
}{
	{nodeKind{"pi4-", "arm64", 4000, 4096, 200, 600}, 4},
	{nodeKind{"pi8-", "arm64", 4000, 8192, 200, 700}, 4},
	{nodeKind{"mini-", "amd64", 4000, 16384, 300, 1500}, 3},
	{nodeKind{"nuc-", "amd64", 8000, 32768, 400, 2048}, 2},
	{nodeKind{"server-", "amd64", 16000, 65536, 600, 3072}, 1},
}

// Random draws a homelab of the shapes homelabs have, from seed alone (the
// same seed gives the same scenario): nodes of mixed sizes and
// architectures, some joining late or cordoned for a while; workloads whose
// requests are wrong both ways (reserving much more, or much less, than they
// use), some pinned to an architecture by a node selector, with usage that
// is steady, noisy, in waves, spiking or leaking; processes outside
// Kubernetes taking a node for a while; workloads scaled up and down; the
// descheduler restarted; DaemonSets (an exporter and a log shipper on
// every node, an agent for one architecture); nodes that reboot or lose
// power; a database whose volume lives on one node (a StatefulSet); and a
// backup CronJob. The workloads' requests fit
// the cluster, so
// what a run shows is placement, not shortage. It has no target: random
// scenarios are judged by their distribution.
func Random(seed int64, o RandomOptions) (*Scenario, error) {
	if o.MinNodes <= 0 {
		o.MinNodes = 2
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = 60
	}
	if o.MaxNodes < o.MinNodes {
		return nil, fmt.Errorf("max nodes %d below min nodes %d", o.MaxNodes, o.MinNodes)
	}
	if o.Duration <= 0 {
		o.Duration = time.Hour
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x62616c6c617374)) //nolint:gosec // a simulation's draw, not a secret
	between := func(lo, hi int64) int64 { return lo + rng.Int64N(hi-lo+1) }
	at := func(lo, hi time.Duration) metav1.Duration {
		return metav1.Duration{Duration: time.Duration(between(int64(lo/time.Minute), int64(hi/time.Minute))) * time.Minute}
	}
	sc := &Scenario{
		Name:        fmt.Sprintf("random-%d", seed),
		Description: fmt.Sprintf("A homelab drawn at random from seed %d.", seed),
		Duration:    metav1.Duration{Duration: o.Duration},
		Step:        metav1.Duration{Duration: 15 * time.Second},
		Seed:        seed,
	}

	// Nodes: a mix of kinds, the first always present and schedulable.
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	n := int(between(int64(o.MinNodes), int64(o.MaxNodes)))
	count := map[string]int{}
	var cpuMilli, memMiB int64
	archs := map[string]bool{}
	for i := range n {
		w := rng.IntN(total)
		var k nodeKind
		for _, c := range kinds {
			if w < c.weight {
				k = c.kind
				break
			}
			w -= c.weight
		}
		count[k.prefix]++
		node := Node{
			Name: fmt.Sprintf("%s%02d", k.prefix, count[k.prefix]), Arch: k.arch,
			CPU: milli(k.cpuMilli), Memory: mebi(k.memMiB),
			Background: Resources{CPU: milli(k.bgCPUMilli * between(80, 150) / 100), Memory: mebi(k.bgMemMiB * between(80, 150) / 100)},
		}
		if i > 0 && n > 2 && rng.IntN(8) == 0 {
			// A node that joins later.
			node.Absent = true
			sc.Events = append(sc.Events, Event{At: at(5*time.Minute, o.Duration/2), Type: Join, Node: node.Name})
		} else {
			cpuMilli += k.cpuMilli - k.bgCPUMilli
			memMiB += k.memMiB - k.bgMemMiB
			archs[k.arch] = true
		}
		sc.Nodes = append(sc.Nodes, node)
	}

	// Workloads, until their requests reach a share of what the nodes
	// present at the start offer.
	budgetCPU, budgetMem := cpuMilli*int64(between(35, 65))/100, memMiB*int64(between(35, 65))/100
	var reqCPU, reqMem int64
	for i := 0; ; i++ {
		replicas := int32(between(1, 6))
		use := Resources{CPU: milli(between(20, 1500)), Memory: mebi(between(64, 2048))}
		// Requests wrong both ways: from a fifth to three times use.
		reqC := use.CPU.MilliValue() * between(20, 300) / 100
		reqM := use.Memory.Value() / (1 << 20) * between(20, 300) / 100
		if reqCPU+reqC*int64(replicas) > budgetCPU || reqMem+reqM*int64(replicas) > budgetMem {
			if i > 2 {
				break
			}
			replicas = 1
		}
		reqCPU += reqC * int64(replicas)
		reqMem += reqM * int64(replicas)
		w := Workload{
			Name: fmt.Sprintf("app-%02d", i), Replicas: replicas,
			Requests: Resources{CPU: milli(max(reqC, 10)), Memory: mebi(max(reqM, 32))},
			Usage:    Usage{CPU: drawProfile(rng, use.CPU, o.Duration, true), Memory: drawProfile(rng, use.Memory, o.Duration, false)},
		}
		if len(archs) > 1 && rng.IntN(6) == 0 {
			arch := "arm64"
			if rng.IntN(2) == 0 {
				arch = "amd64"
			}
			w.NodeSelector = map[string]string{"kubernetes.io/arch": arch}
		}
		if rng.IntN(4) == 0 {
			// Installed later, or scaled later.
			sc.Events = append(sc.Events, Event{At: at(2*time.Minute, o.Duration/3), Type: Scale, Workload: w.Name, Replicas: w.Replicas})
			w.Replicas = 0
		} else if rng.IntN(6) == 0 {
			sc.Events = append(sc.Events, Event{At: at(o.Duration/4, o.Duration*3/4), Type: Scale, Workload: w.Name,
				Replicas: max(1, w.Replicas+int32(between(-2, 3)))})
		}
		sc.Workloads = append(sc.Workloads, w)
	}

	// What happens to the cluster: hogs outside Kubernetes, cordons, a
	// descheduler restart.
	present := slices.DeleteFunc(slices.Clone(sc.Nodes), func(n Node) bool { return n.Absent })
	for range between(0, int64(max(1, len(present)/4))) {
		node := present[rng.IntN(len(present))]
		start := at(3*time.Minute, o.Duration*2/3)
		sc.Events = append(sc.Events, Event{At: start, Type: Hog, Node: node.Name,
			Resources: Resources{CPU: milli(node.CPU.MilliValue() * between(10, 50) / 100), Memory: mebi(node.Memory.Value() / (1 << 20) * between(10, 45) / 100)},
			For:       at(5*time.Minute, o.Duration/3)})
	}
	if len(present) > 2 && rng.IntN(4) == 0 {
		node := present[1+rng.IntN(len(present)-1)]
		start := at(10*time.Minute, o.Duration/2)
		// Uncordoned within the run: a short one ends before the draw would.
		end := min(start.Duration+at(5*time.Minute, 20*time.Minute).Duration, o.Duration-time.Minute)
		sc.Events = append(sc.Events, Event{At: start, Type: Cordon, Node: node.Name},
			Event{At: metav1.Duration{Duration: end}, Type: Uncordon, Node: node.Name})
	}
	if rng.IntN(3) == 0 {
		sc.Events = append(sc.Events, Event{At: at(5*time.Minute, o.Duration-5*time.Minute), Type: RestartDescheduler})
	}
	// DaemonSets, drawn last so that the rest of a seed's homelab is the
	// one it was before they were: a metrics exporter and a log shipper on
	// every node, an agent of one architecture.
	for i, ds := range []struct {
		odds   int
		prefix string
	}{{2, "exporter"}, {3, "logs"}, {4, "agent"}} {
		if rng.IntN(ds.odds) != 0 {
			continue
		}
		use := Resources{CPU: milli(between(10, 250)), Memory: mebi(between(24, 320))}
		w := Workload{
			Name: fmt.Sprintf("%s-%02d", ds.prefix, i), Kind: DaemonSet, Namespace: "monitoring",
			Requests: Resources{CPU: milli(max(use.CPU.MilliValue()*between(20, 300)/100, 5)), Memory: mebi(max(use.Memory.Value()>>20*between(20, 300)/100, 16))},
			Usage:    Usage{CPU: drawProfile(rng, use.CPU, o.Duration, true), Memory: drawProfile(rng, use.Memory, o.Duration, false)},
		}
		if ds.prefix == "agent" {
			w.Namespace = DefaultNamespace
			w.NodeSelector = map[string]string{"kubernetes.io/arch": []string{"amd64", "arm64"}[rng.IntN(2)]}
		}
		sc.Workloads = append(sc.Workloads, w)
	}
	// Nodes that go down, drawn last too: a reboot long enough, at times,
	// for the pods to be recreated elsewhere, or a power loss.
	if len(present) > 2 && rng.IntN(4) == 0 {
		node := present[1+rng.IntN(len(present)-1)]
		sc.Events = append(sc.Events, Event{At: at(5*time.Minute, o.Duration*2/3), Type: Reboot, Node: node.Name, For: at(2*time.Minute, 12*time.Minute)})
	} else if len(present) > 3 && rng.IntN(10) == 0 {
		node := present[1+rng.IntN(len(present)-1)]
		sc.Events = append(sc.Events, Event{At: at(5*time.Minute, o.Duration/2), Type: PowerLoss, Node: node.Name})
	}
	// StatefulSets and CronJobs, drawn after everything else, so that the
	// rest of a seed's homelab is the one it was before they were: a
	// database whose volume lives on a node present at the start, and a
	// backup every ten to thirty minutes. Their requests come on top of
	// the budget above, as the DaemonSets' do.
	if rng.IntN(2) == 0 {
		use := Resources{CPU: milli(between(100, 1200)), Memory: mebi(between(256, 2048))}
		w := Workload{
			Name: "db-00", Kind: StatefulSet, Replicas: 1,
			VolumeNodes: []string{present[rng.IntN(len(present))].Name},
			Requests:    Resources{CPU: milli(max(use.CPU.MilliValue()*between(20, 150)/100, 50)), Memory: mebi(max(use.Memory.Value()>>20*between(50, 150)/100, 128))},
			Usage:       Usage{CPU: drawProfile(rng, use.CPU, o.Duration, true), Memory: Profile{Type: Constant, Value: use.Memory}},
		}
		if rng.IntN(3) == 0 {
			// A second replica, whose volume is made where it is first
			// placed.
			w.Replicas = 2
		}
		sc.Workloads = append(sc.Workloads, w)
	}
	if rng.IntN(2) == 0 {
		use := Resources{CPU: milli(between(200, 1500)), Memory: mebi(between(128, 1024))}
		every := []int{10, 15, 20, 30}[rng.IntN(4)]
		sc.Workloads = append(sc.Workloads, Workload{
			Name: "backup-00", Kind: CronJob, Schedule: fmt.Sprintf("*/%d * * * *", every),
			RunFor:            metav1.Duration{Duration: time.Duration(between(1, int64(every/2))) * time.Minute},
			ConcurrencyPolicy: ForbidConcurrent,
			Requests:          Resources{CPU: milli(max(use.CPU.MilliValue()/4, 50)), Memory: mebi(max(use.Memory.Value()>>20/2, 64))},
			Usage:             Usage{CPU: Profile{Type: Constant, Value: use.CPU}, Memory: Profile{Type: Constant, Value: use.Memory}},
		})
	}
	slices.SortStableFunc(sc.Events, func(a, b Event) int { return int(a.At.Duration - b.At.Duration) })
	SetDefaults(sc)
	if err := Validate(sc); err != nil {
		return nil, fmt.Errorf("random scenario of seed %d: %w", seed, err)
	}
	return sc, nil
}

// drawProfile is a usage profile around value: steady, noisy, in waves,
// spiking, or (memory) leaking.
func drawProfile(rng *rand.Rand, value resource.Quantity, d time.Duration, cpu bool) Profile {
	v := value.Value()
	q := func(x int64) resource.Quantity {
		if cpu {
			return milli(x)
		}
		return *resource.NewQuantity(x, resource.BinarySI)
	}
	if cpu {
		v = value.MilliValue()
	}
	switch rng.IntN(6) {
	case 0:
		return Profile{Type: Constant, Value: q(v)}
	case 1, 2:
		return Profile{Type: Noisy, Value: q(v), Stddev: q(v / 5)}
	case 3:
		return Profile{Type: Wave, Value: q(v), Amplitude: q(v / 2), Period: metav1.Duration{Duration: time.Duration(10+rng.IntN(30)) * time.Minute}}
	case 4:
		return Profile{Type: Spike, Value: q(v), Peak: q(v * 3), At: metav1.Duration{Duration: time.Duration(rng.Int64N(int64(d*3/4)/int64(time.Minute))) * time.Minute},
			For: metav1.Duration{Duration: time.Duration(2+rng.IntN(8)) * time.Minute}}
	default:
		if cpu {
			return Profile{Type: Noisy, Value: q(v), Stddev: q(v / 10)}
		}
		// A leak: memory climbing by half again over the run.
		return Profile{Type: Ramp, From: q(v), To: q(v * 3 / 2), Over: metav1.Duration{Duration: d}}
	}
}

func milli(m int64) resource.Quantity { return *resource.NewMilliQuantity(m, resource.DecimalSI) }
func mebi(m int64) resource.Quantity  { return *resource.NewQuantity(m<<20, resource.BinarySI) }
