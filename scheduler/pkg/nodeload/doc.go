// Package nodeload is what the Ballast plugins know about the real usage of
// nodes: the latest load-watcher snapshot, corrected for pods bound since it
// was sampled (anti-herding), worked out once per snapshot and per pod that
// lands into a Table the plugins read node by node; the bookkeeping when
// usage is missing or stale (metrics, one event per pod and cause); the
// pods waiting for a node to cool down (Waiter); and the queueing hints of
// the plugins' cluster events.
//
// One Tracker serves every plugin of every profile in a scheduler process; the
// command builds it once and hands it to the plugin factories.
package nodeload
