package helmjob

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	"helm.sh/helm/v3/pkg/registry"
	"k8s.io/klog/v2"
)

// loadChart returns the chart to install: spec.chartContent when the Job
// carries it, else the chart fetched from its URL or repository.
func (j Job) loadChart(ctx context.Context) (*chart.Chart, error) {
	content := filepath.Join(j.Paths.Chart, j.Env.Name+".tgz.base64")
	raw, err := os.ReadFile(content)
	switch {
	case err == nil:
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw)))
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", content, err)
		}
		chrt, err := loader.LoadArchive(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("load the chart of %s: %w", content, err)
		}
		klog.FromContext(ctx).Info("Using the chart the HelmChart carries", "file", content)
		return chrt, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("read %s: %w", content, err)
	}
	return j.fetchChart(ctx)
}

// fetchChart fetches the chart from a URL (http, https, oci) or, with a
// repository, by name, with the repository's CA and credentials.
func (j Job) fetchChart(ctx context.Context) (*chart.Chart, error) {
	ref := j.Env.chartRef()
	if ref == "" {
		return nil, errors.New("the HelmChart has neither spec.chartContent nor spec.chart")
	}
	if j.Settings == nil {
		return nil, errors.New("no Helm settings to fetch a chart with")
	}
	ca, err := j.caFile()
	if err != nil {
		return nil, err
	}
	opts := action.ChartPathOptions{
		Version: j.Action.Version, CaFile: ca, InsecureSkipTLSverify: j.Env.InsecureSkipTLSVerify,
		PlainHTTP: j.Env.PlainHTTP, PassCredentialsAll: j.Env.AuthPassCredentials,
	}
	if err := j.credentials(&opts); err != nil {
		return nil, err
	}
	name := ref
	switch {
	case isURL(ref):
	case j.Env.Repo != "":
		// helm-controller names a repository's chart <HelmChart>/<chart>.
		opts.RepoURL, name = j.Env.Repo, strings.TrimPrefix(ref, j.Env.Name+"/")
	case strings.HasPrefix(ref, "stable/"):
		opts.RepoURL, name = StableRepoURL, strings.TrimPrefix(ref, "stable/")
	}
	// An Install carries the registry client LocateChart needs for oci://.
	locate := action.NewInstall(&action.Configuration{})
	locate.ChartPathOptions = opts
	if strings.HasPrefix(ref, "oci://") {
		ropts := []registry.ClientOption{registry.ClientOptCredentialsFile(j.Settings.RegistryConfig)}
		if j.Env.PlainHTTP {
			ropts = append(ropts, registry.ClientOptPlainHTTP())
		}
		rc, err := registry.NewClient(ropts...)
		if err != nil {
			return nil, fmt.Errorf("create a registry client: %w", err)
		}
		locate.SetRegistryClient(rc)
	}
	path, err := locate.ChartPathOptions.LocateChart(name, j.Settings)
	if err != nil {
		return nil, fmt.Errorf("fetch chart %s: %w", ref, err)
	}
	klog.FromContext(ctx).Info("Fetched chart", "chart", ref, "repo", locate.RepoURL, "file", path)
	chrt, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", path, err)
	}
	return chrt, nil
}

func isURL(ref string) bool {
	for _, scheme := range []string{"http://", "https://", "oci://"} {
		if strings.HasPrefix(ref, scheme) {
			return true
		}
	}
	return false
}

// caFile joins the repository CAs helm-controller mounts (the values
// Secret's ca-file.pem and every file of spec.repoCAConfigMap) into one file
// in Tmp; "" when there is none.
func (j Job) caFile() (string, error) {
	files := []string{filepath.Join(j.Paths.Config, "ca-file.pem")}
	more, err := filepath.Glob(filepath.Join(j.Paths.CAFiles, "*"))
	if err != nil {
		return "", err
	}
	files = append(files, more...)
	var pem []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("read repository CA %s: %w", f, err)
		}
		pem = append(append(pem, '\n'), b...)
	}
	if len(pem) == 0 {
		return "", nil
	}
	out := filepath.Join(j.Paths.Tmp, "ca-file.pem")
	if err := os.WriteFile(out, pem, 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", out, err)
	}
	return out, nil
}

// credentials reads spec.authSecret: a username and password, or a client
// certificate and key.
func (j Job) credentials(opts *action.ChartPathOptions) error {
	read := func(name string) (string, bool, error) {
		b, err := os.ReadFile(filepath.Join(j.Paths.Auth, name))
		if errors.Is(err, os.ErrNotExist) {
			return "", false, nil
		}
		if err != nil {
			return "", false, fmt.Errorf("read repository credential %s: %w", name, err)
		}
		return strings.TrimSpace(string(b)), true, nil
	}
	user, hasUser, err := read("username")
	if err != nil {
		return err
	}
	pass, hasPass, err := read("password")
	if err != nil {
		return err
	}
	if hasUser && hasPass {
		opts.Username, opts.Password = user, pass
		return nil
	}
	cert, key := filepath.Join(j.Paths.Auth, "tls.crt"), filepath.Join(j.Paths.Auth, "tls.key")
	if _, err := os.Stat(cert); err == nil {
		if _, err := os.Stat(key); err == nil {
			opts.CertFile, opts.KeyFile = cert, key
		}
	}
	return nil
}

// values merges the values files helm-controller mounts, in name order (the
// HelmChart's, then the HelmChartConfig's), then --set and --set-string, as
// helm does with --values, --set and --set-string.
func (j Job) values() (map[string]any, error) {
	files, err := filepath.Glob(filepath.Join(j.Paths.Config, "*.yaml"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	opts := values.Options{ValueFiles: files, Values: j.Action.Set, StringValues: j.Action.SetString}
	var providers getter.Providers
	if j.Settings != nil {
		providers = getter.All(j.Settings)
	}
	vals, err := opts.MergeValues(providers)
	if err != nil {
		return nil, fmt.Errorf("merge the values: %w", err)
	}
	return vals, nil
}
