// Package scenario defines what `ballast sim` simulates: nodes with their
// allocatable resources and background usage, workloads whose pods use more
// or less than they request over time, and a timeline of events (a node joins
// or is cordoned, a process outside Kubernetes eats memory, a workload
// scales). Scenarios are YAML files; Parse validates them and names every
// bad field at once.
package scenario
