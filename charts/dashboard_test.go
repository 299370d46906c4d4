package charts

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

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
	var dashboards []string
	err = fs.WalkDir(FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && path.Base(path.Dir(p)) == "dashboards" && path.Ext(p) == ".json" {
			dashboards = append(dashboards, p)
		}
		return err
	})
	if err != nil || len(dashboards) == 0 {
		t.Fatalf("no dashboards: %v", err)
	}
	for _, p := range dashboards {
		t.Run(p, func(t *testing.T) {
			data, err := fs.ReadFile(FS(), p)
			if err != nil {
				t.Fatal(err)
			}
			var dash dashboard
			if err := json.Unmarshal(data, &dash); err != nil {
				t.Fatal(err)
			}
			for _, q := range dash.queries(t) {
				names, err := metricNames(q.expr)
				if err != nil {
					t.Errorf("%s: %v", q.where, err)
					continue
				}
				if len(names) == 0 {
					t.Errorf("%s: %q selects no metric", q.where, q.expr)
				}
				for _, n := range names {
					if !isExported(exported, n) {
						t.Errorf("%s: %q queries %s, which no component exports (%s/*.txt)", q.where, q.expr, n, metricnames.Dir)
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

// dashboard is what the test reads of a Grafana dashboard.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string  `json:"title"`
	Type    string  `json:"type"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

type query struct{ where, expr string }

// queries returns every PromQL expression of d: its panels' targets and its
// query variables; a panel without one is an error.
func (d dashboard) queries(t *testing.T) []query {
	var out []query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q queries nothing", p.Title)
			}
			for _, tg := range p.Targets {
				out = append(out, query{where: fmt.Sprintf("panel %q target %s", p.Title, tg.RefID), expr: tg.Expr})
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q string
		if json.Unmarshal(v.Query, &q) != nil {
			var obj struct {
				Query string `json:"query"`
			}
			_ = json.Unmarshal(v.Query, &obj)
			q = obj.Query
		}
		// label_values(selector, label): the selector is PromQL.
		if m := labelValues.FindStringSubmatch(q); m != nil {
			q = m[1]
		}
		out = append(out, query{where: "variable " + v.Name, expr: q})
	}
	return out
}

var labelValues = regexp.MustCompile(`^\s*label_values\(\s*(.*?)\s*,\s*[a-zA-Z_]\w*\s*\)\s*$`)

var (
	// promStrings are PromQL's string literals.
	promStrings = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'` + "|`[^`]*`")
	// grafanaVariables are Grafana's $var and ${var...}.
	grafanaVariables = regexp.MustCompile(`\$\{[^}]*\}|\$\w+`)
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
