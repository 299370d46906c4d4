// +k8s:defaulter-gen=TypeMeta

// Package loadawarebalance is the LoadAwareBalance descheduler plugin: it
// moves pods off nodes that are hot by real usage onto cool nodes where they
// fit, and remembers what it moved so it never creates eviction loops.
package loadawarebalance
