// Package charts carries the Ballast Helm chart inside Go binaries: the chart
// directory is embedded (including _helpers.tpl, hence all:), loadable with the
// Helm SDK, packable into a reproducible archive and renderable like
// `helm template`.
package charts
