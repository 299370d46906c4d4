package charts

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"time"
)

// Dashboard is what Ballast's tooling reads of a Grafana dashboard the chart
// ships: its panels' queries and its query variables.
type Dashboard struct {
	// Path is the dashboard's file in the chart.
	Path       string  `json:"-"`
	Panels     []Panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

// Panel is one panel of a dashboard; a row holds panels of its own.
type Panel struct {
	Title   string  `json:"title"`
	Type    string  `json:"type"`
	Panels  []Panel `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// Query is one PromQL expression of a dashboard and where it is.
type Query struct {
	Where, Expr string
}

// Dashboards reads every Grafana dashboard the chart ships (dashboards/*.json).
func Dashboards() ([]Dashboard, error) {
	var out []Dashboard
	err := fs.WalkDir(FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Base(path.Dir(p)) != "dashboards" || path.Ext(p) != ".json" {
			return err
		}
		data, err := fs.ReadFile(FS(), p)
		if err != nil {
			return err
		}
		dash := Dashboard{Path: p}
		if err := json.Unmarshal(data, &dash); err != nil {
			return fmt.Errorf("dashboard %s: %w", p, err)
		}
		out = append(out, dash)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the chart's dashboards: %w", err)
	}
	return out, nil
}

// Queries returns every PromQL expression of d: its panels' targets and its
// query variables' selectors. A panel that queries nothing is an error.
func (d Dashboard) Queries() ([]Query, error) {
	var out []Query
	var empty []string
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if len(p.Targets) == 0 {
				empty = append(empty, p.Title)
			}
			for _, tg := range p.Targets {
				out = append(out, Query{Where: fmt.Sprintf("panel %q target %s", p.Title, tg.RefID), Expr: tg.Expr})
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
		out = append(out, Query{Where: "variable " + v.Name, Expr: q})
	}
	if len(empty) > 0 {
		return out, fmt.Errorf("dashboard %s: panels that query nothing: %s", d.Path, strings.Join(empty, ", "))
	}
	return out, nil
}

var labelValues = regexp.MustCompile(`^\s*label_values\(\s*(.*?)\s*,\s*[a-zA-Z_]\w*\s*\)\s*$`)

// grafanaVariables are Grafana's $var and ${var...}.
var grafanaVariables = regexp.MustCompile(`\$\{[^}]*\}|\$\w+`)

// Evaluable returns expr as Prometheus itself can evaluate it: Grafana's
// interval variables become interval (as Grafana makes $__rate_interval at
// least four scrape intervals) and every other variable the regular
// expression that matches anything (for =~ matchers).
func Evaluable(expr string, interval time.Duration) string {
	d := fmt.Sprintf("%ds", int(interval.Seconds()))
	return grafanaVariables.ReplaceAllStringFunc(expr, func(v string) string {
		name := strings.Trim(v, "${}")
		name, _, _ = strings.Cut(name, ":")
		switch name {
		case "__rate_interval", "__interval", "__range":
			return d
		default:
			return ".*"
		}
	})
}
