// Package model is the simulated world a run plays out in: what each node
// and pod really uses over scenario time (backgrounds, hogs, the workloads'
// profiles with their noise), the simulated clock, the scenario's timeline
// of events, and the pods and their placement as the model counts them. It
// knows nothing of schedulers: the stack above it runs them, and the
// recorder reads the same model to say what each node used.
package model
