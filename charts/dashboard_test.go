package charts

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/core/metricnames"
)

// TestDashboardsQueryExportedMetrics checks every PromQL expression of every
// dashboard the chart ships against the metrics the components export
// (docs/metrics/*.txt, which each component's tests keep equal to what its
// code registers), and that every panel queries something.
func TestDashboardsQueryExportedMetrics(t *testing.T) {
	root, err := metricnames.Root()
	if err != nil {
		t.Fatal(err)
	}
	lists, err := metricnames.ReadAll(root)
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for component, names := range lists {
		if len(names) == 0 {
			t.Errorf("%s exports no metric: is %s/%s.txt written?", component, metricnames.Dir, component)
		}
		for _, n := range names {
			exported[n] = true
		}
	}
	if len(lists) == 0 {
		t.Fatalf("no metric list in %s", metricnames.Dir)
	}
	dashboards, err := Dashboards()
	if err != nil || len(dashboards) == 0 {
		t.Fatalf("no dashboards: %v", err)
	}
	for _, dash := range dashboards {
		t.Run(dash.Path, func(t *testing.T) {
			queries, err := dash.Queries()
			if err != nil {
				t.Error(err)
			}
			for _, q := range queries {
				names, err := metricNames(q.Expr)
				if err != nil {
					t.Errorf("%s: %v", q.Where, err)
					continue
				}
				if len(names) == 0 {
					t.Errorf("%s: %q selects no metric", q.Where, q.Expr)
				}
				for _, n := range names {
					if !isExported(exported, n) {
						t.Errorf("%s: %q queries %s, which no component exports (%s/*.txt)", q.Where, q.Expr, n, metricnames.Dir)
					}
				}
			}
		})
	}
}

// isExported reports whether name is an exported metric or one of the
// series of an exported histogram or summary.
func isExported(exported map[string]bool, name string) bool {
	if exported[name] {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && exported[base] {
			return true
		}
	}
	return false
}

var (
	// promStrings are PromQL's string literals.
	promStrings = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'` + "|`[^`]*`")
	// matchersAndRanges are label matchers {…} and ranges or subqueries […],
	// once strings are gone.
	matchersAndRanges = regexp.MustCompile(`\{[^{}]*\}|\[[^\[\]]*\]`)
	// promTokens are numbers and durations (one token: 0.95, 1e3, 5m),
	// identifiers and parentheses.
	promTokens = regexp.MustCompile(`\d[\w.]*|[a-zA-Z_:][\w:]*|[()]|[^\s\w()]+`)
)

// promKeywords are PromQL words that are no metric when not followed by "(":
// aggregations (sum by (x) (…)), binary operators and modifiers.
var promKeywords = []string{
	"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio",
	"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan",
}

// labelListKeywords are followed by a parenthesised list of label names.
var labelListKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}

// metricNames returns, sorted, the metric names expr selects. It reads
// PromQL well enough for dashboards: it drops strings, Grafana variables,
// label matchers and ranges, then takes every identifier that is neither a
// function (followed by "("), a keyword, nor in a label list (by (…)).
func metricNames(expr string) ([]string, error) {
	s := promStrings.ReplaceAllString(expr, `""`)
	s = grafanaVariables.ReplaceAllString(s, "")
	for prev := ""; prev != s; {
		prev, s = s, matchersAndRanges.ReplaceAllString(s, " ")
	}
	if strings.ContainsAny(s, "{}[]") {
		return nil, fmt.Errorf("%q: unbalanced braces or brackets", expr)
	}
	tokens := promTokens.FindAllString(s, -1)
	var names []string
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		if tok[0] >= '0' && tok[0] <= '9' || !(tok[0] == '_' || tok[0] == ':' || tok[0] >= 'a' && tok[0] <= 'z' || tok[0] >= 'A' && tok[0] <= 'Z') {
			continue
		}
		next := ""
		if i+1 < len(tokens) {
			next = tokens[i+1]
		}
		switch {
		case slices.Contains(labelListKeywords, tok):
			if next == "(" {
				for i++; i < len(tokens) && tokens[i] != ")"; i++ {
				}
			}
		case next == "(" || slices.Contains(promKeywords, tok):
		default:
			names = append(names, tok)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

func TestMetricNames(t *testing.T) {
	for _, tt := range []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`sum by (result) (rate(scheduler_schedule_attempts_total{profile=~"a|b"}[5m]))`, []string{"scheduler_schedule_attempts_total"}},
		{`histogram_quantile(0.95, sum by (le, plugin) (rate(x_seconds_bucket{plugin=~"LoadAware"}[$__rate_interval])))`, []string{"x_seconds_bucket"}},
		{`max without (provider) (a{node="$node"}) > on (node) group_left () b offset 5m`, []string{"a", "b"}},
		{`time() - c`, []string{"c"}},
		{`sum(increase(d[1h])) by (node) or vector(0)`, []string{"d"}},
		{`label_replace(e, "dst", "$1", "src", "(.*)")`, []string{"e"}},
		{`avg_over_time(f[10m:1m]) * 1e2`, []string{"f"}},
		{`g{a="}"}`, []string{"g"}},
	} {
		got, err := metricNames(tt.expr)
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", tt.expr, diff)
		}
	}
}

func TestEvaluable(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{`rate(a[$__rate_interval])`, `rate(a[8s])`},
		{`rate(a[${__interval}]) + b{node=~"$node"}`, `rate(a[8s]) + b{node=~".*"}`},
		{`increase(c[1h])`, `increase(c[1h])`},
	} {
		if got := Evaluable(tt.expr, 8*time.Second); got != tt.want {
			t.Errorf("Evaluable(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}
