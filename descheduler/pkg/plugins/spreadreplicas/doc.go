// Package spreadreplicas holds SpreadReplicas, a balance plugin that spreads
// the replicas of a workload across nodes, moving one only to a node that
// can take it by real usage.
package spreadreplicas
