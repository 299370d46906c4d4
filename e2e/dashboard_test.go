//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/core/promserver"
)

const (
	// scrapeInterval is the lane Prometheus's; rates in dashboards read
	// four scrapes at least, as Grafana's $__rate_interval does.
	scrapeInterval = 2 * time.Second
	monitoringNS   = "monitoring"
)

// startPrometheus runs a real Prometheus on the machine that scrapes every
// Ballast pod as a user's Prometheus does: the scheduler's and the
// descheduler's authenticated HTTPS /metrics with the token of a
// ServiceAccount allowed GET /metrics and nothing else, load-watcher's
// metrics port as plain HTTP (its TLS is off by default). Debian's
// Prometheus is built without Kubernetes service discovery, so the test
// does its part: it lists the pods every scrape interval and writes their
// metrics ports to file_sd files, which Prometheus rereads on change.
func startPrometheus(ctx context.Context, t *testing.T, c kubernetes.Interface) *promserver.Server {
	t.Helper()
	bin := promserver.Binary(t)
	token := metricsReaderToken(ctx, t, c)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"https": filepath.Join(dir, "https.json"), "metrics": filepath.Join(dir, "http.json")}
	if err := writeTargets(ctx, c, files); err != nil {
		t.Fatal(err)
	}
	discoverCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	t.Cleanup(func() { stop(); <-done })
	go func() {
		defer close(done)
		// The API server's restart fails a few rounds: say so once.
		failing := false
		for discoverCtx.Err() == nil {
			err := writeTargets(discoverCtx, c, files)
			if err != nil && !failing && discoverCtx.Err() == nil {
				t.Logf("discovering Ballast's pods for Prometheus (the targets stay as they were until it works again): %v", err)
			}
			failing = err != nil
			sleep(discoverCtx, scrapeInterval)
		}
	}()
	cfg := fmt.Sprintf(`global:
  scrape_interval: %s
scrape_configs:
  - job_name: ballast-https
    scheme: https
    tls_config: {insecure_skip_verify: true}
    authorization: {credentials_file: %q}
    file_sd_configs: [{files: [%q], refresh_interval: %s}]
  - job_name: ballast-http
    file_sd_configs: [{files: [%q], refresh_interval: %s}]
`, scrapeInterval, tokenFile, files["https"], scrapeInterval, files["metrics"], scrapeInterval)
	return promserver.Start(t, bin, map[string]string{promserver.ConfigFile: cfg})
}

// writeTargets writes, for each container port name of files, the
// addresses of the running Ballast pods' ports of that name as a file_sd
// target group, replacing the file at once.
func writeTargets(ctx context.Context, c kubernetes.Interface, files map[string]string) error {
	pods, err := c.CoreV1().Pods(ballastNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	type group struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels"`
	}
	groups := map[string][]group{}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.DeletionTimestamp != nil {
			continue
		}
		for _, ctr := range p.Spec.Containers {
			for _, port := range ctr.Ports {
				if _, ok := files[port.Name]; ok {
					groups[port.Name] = append(groups[port.Name], group{
						Targets: []string{net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(port.ContainerPort)))},
						Labels:  map[string]string{"kubernetes_pod_name": p.Name, "component": p.Labels["app.kubernetes.io/name"]},
					})
				}
			}
		}
	}
	for name, file := range files {
		data, err := json.Marshal(append([]group{}, groups[name]...))
		if err != nil {
			return err
		}
		if err := os.WriteFile(file+".tmp", data, 0o600); err != nil {
			return err
		}
		if err := os.Rename(file+".tmp", file); err != nil {
			return err
		}
	}
	return nil
}

// metricsReaderToken creates the ServiceAccount a user's Prometheus runs as,
// allowed to GET /metrics and nothing more, and returns a token of it.
func metricsReaderToken(ctx context.Context, t *testing.T, c kubernetes.Interface) string {
	t.Helper()
	const name = "prometheus"
	objects := []func() error{
		func() error {
			_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: monitoringNS}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := c.CoreV1().ServiceAccounts(monitoringNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-metrics-reader"},
				Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "e2e-metrics-reader"},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "e2e-metrics-reader"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: monitoringNS, Name: name}}}, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range objects {
		if err := create(); err != nil {
			t.Fatalf("setting up Prometheus's ServiceAccount: %v", err)
		}
	}
	tr, err := c.CoreV1().ServiceAccounts(monitoringNS).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a token for Prometheus: %v", err)
	}
	return tr.Status.Token
}

// checkDashboards asserts that every query of every dashboard the chart
// ships answers with at least one series from what prom scraped off the
// running components: a panel a user opens has data. It first waits until
// Prometheus scrapes every component, each of its pods up.
func checkDashboards(ctx context.Context, t *testing.T, prom *promserver.Server) {
	t.Helper()
	poll(ctx, t, "Prometheus to scrape every Ballast component", 2*time.Minute, func(ctx context.Context) (bool, string) {
		targets, err := prom.Targets(ctx)
		if err != nil {
			return false, err.Error()
		}
		var down []string
		up := map[string]int{}
		for _, tg := range targets {
			if tg.Health != "up" {
				down = append(down, fmt.Sprintf("%s (%s): %s", tg.ScrapeURL, tg.Health, tg.LastError))
				continue
			}
			u, err := url.Parse(tg.ScrapeURL)
			if err == nil {
				up[u.Port()]++
			}
		}
		// The scheduler's, the descheduler's and load-watcher's ports.
		missing := slices.DeleteFunc([]string{"10259", "10258", "2021"}, func(p string) bool { return up[p] > 0 })
		return len(down) == 0 && len(missing) == 0, fmt.Sprintf("targets up by port %v; none on %v; down: %v", up, missing, down)
	})
	dashboards, err := charts.Dashboards()
	if err != nil || len(dashboards) == 0 {
		t.Fatalf("the chart's dashboards: %v", err)
	}
	var queries []charts.Query
	for _, d := range dashboards {
		qs, err := d.Queries()
		if err != nil {
			t.Error(err)
		}
		for _, q := range qs {
			queries = append(queries, charts.Query{Where: d.Path + ": " + q.Where, Expr: q.Expr})
		}
	}
	// Rates need a few scrapes of the newest pods: poll, and report every
	// query still without data at the end.
	poll(ctx, t, "every dashboard query to have data", 2*time.Minute, func(ctx context.Context) (bool, string) {
		var empty []string
		for _, q := range queries {
			series, err := prom.Query(ctx, charts.Evaluable(q.Expr, 4*scrapeInterval))
			if err != nil {
				empty = append(empty, fmt.Sprintf("%s: %v", q.Where, err))
			} else if len(series) == 0 {
				empty = append(empty, fmt.Sprintf("%s: no series for %s", q.Where, q.Expr))
			}
		}
		return len(empty) == 0, strings.Join(empty, "\n")
	})
	t.Logf("%d queries of %d dashboards all have data", len(queries), len(dashboards))
}
