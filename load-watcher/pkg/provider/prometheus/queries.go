package prometheus

// QuerySet names a group of default queries.
type QuerySet string

const (
	// QuerySetAuto uses kube-prometheus recording rules when the server has
	// them and plain node-exporter series otherwise.
	QuerySetAuto QuerySet = "auto"
	// QuerySetNodeExporter queries raw node-exporter series.
	QuerySetNodeExporter QuerySet = "node-exporter"
	// QuerySetKubePrometheus queries kube-prometheus recording rules.
	QuerySetKubePrometheus QuerySet = "kube-prometheus"
)

// Queries are the PromQL instant queries for each resource. Each must return
// one series per node whose value is the fraction (0–1) of the machine in use.
type Queries struct {
	// CPU is the busy fraction of all cores.
	CPU string
	// Memory is the used fraction of physical memory.
	Memory string
}

// DefaultQueries holds the query of each concrete query set.
//
// node-exporter uses irate over a 5m range: load-watcher keeps its own
// windows, so it wants the latest rate, and a 5m range still finds two points
// at scrape intervals up to 2.5m. `without (cpu, mode)` keeps every other
// label (`node`, `instance`) for the mapping to node names.
var DefaultQueries = map[QuerySet]Queries{
	QuerySetNodeExporter: {
		CPU:    `1 - avg without (cpu, mode) (irate(node_cpu_seconds_total{mode="idle"}[5m]))`,
		Memory: `1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes`,
	},
	QuerySetKubePrometheus: {
		CPU:    `instance:node_cpu:ratio`,
		Memory: `instance:node_memory_utilisation:ratio`,
	},
}

// autoOrder is the order in which QuerySetAuto tries the concrete sets.
var autoOrder = []QuerySet{QuerySetKubePrometheus, QuerySetNodeExporter}
