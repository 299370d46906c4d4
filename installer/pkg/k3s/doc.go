// Package k3s installs Ballast on a k3s server the k3s way: a HelmChart
// manifest carrying the embedded chart in k3s's auto-deploy directory, and for
// replaceDefault mode a config drop-in that renames the embedded scheduler's
// profile. Every path is taken relative to a root so tests can use a fake host.
package k3s
