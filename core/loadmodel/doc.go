// Package loadmodel holds the arithmetic of load-aware placement that the
// Ballast scheduler plugins and the descheduler share: estimating a pod's
// usage, predicting a node's usage once the pod lands, checking thresholds
// and turning predicted usage into scores.
//
// Everything here is a pure function of its arguments. Usage figures are
// percentages of a node's allocatable resources (as load-watcher reports
// them); pod amounts are absolute (millicores, bytes) and are converted with
// Percent. Inputs that are NaN, infinite or negative are sanitised rather than
// trusted, so odd data from a metrics source can never panic a caller.
package loadmodel
