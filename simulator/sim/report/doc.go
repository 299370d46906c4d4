// Package report tells what a run recorded: the terminal table of a
// comparison or a live placement, the self-contained HTML report with
// charts, and the targets a comparison is held to (Target).
package report
