// Package helmjob is the program of helm-controller's install and delete
// Jobs as the k3s lane runs them: what k3s's rancher/klipper-helm image does
// for a HelmChart, with the Helm SDK instead of the helm CLI and a shell
// entrypoint. helm-controller describes the work in the Job's environment,
// arguments and volumes; this package reads them (Env, ParseArgs, Paths) and
// installs, upgrades or uninstalls the release as klipper-helm's entrypoint
// would (Job.Run). Its contract with helm-controller is held by a test that
// runs the real helm-controller and then this program on the Job it creates.
package helmjob

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Env is what helm-controller tells the Job's container through its
// environment.
type Env struct {
	// Name is the HelmChart's name, which is also the release's.
	Name string
	// Version is the chart version to fetch from a repository.
	Version string
	// Repo is the chart repository's URL.
	Repo string
	// Driver is Helm's storage driver: secret or configmap.
	Driver string
	// ChartNamespace is the HelmChart's namespace.
	ChartNamespace string
	// Chart is the chart to install from a repository or URL
	// (<name>/<chart> with a Repo); spec.chartContent wins when present.
	Chart string
	// HelmVersion is v3 or empty; v2 is refused.
	HelmVersion string
	// TargetNamespace is the release's namespace.
	TargetNamespace string
	// AuthPassCredentials passes repository credentials to every domain.
	AuthPassCredentials bool
	// InsecureSkipTLSVerify and PlainHTTP reach the repository as told.
	InsecureSkipTLSVerify, PlainHTTP bool
	// Timeout bounds each Helm operation; zero is Helm's default.
	Timeout time.Duration
	// FailurePolicy says what to do with a failed release: reinstall, abort or retry.
	FailurePolicy string
	// ServerSide is auto, true or false: how Helm applies the manifests.
	ServerSide string
	// ForceConflicts takes fields from other managers under server-side apply.
	ForceConflicts bool
	// ExpectedRevision is the release revision helm-controller saw when it
	// made the Job; the Job does nothing when the release has moved on.
	// Empty means any.
	ExpectedRevision string
	// ConfigHash labels the release, so helm-controller knows which
	// HelmChart configuration it carries.
	ConfigHash string
	// Bootstrap is set for charts that install before the cluster network.
	Bootstrap bool
	// KubernetesServiceHost and KubernetesServicePort address the API server;
	// a chart URL may name it as %{KUBERNETES_API}%.
	KubernetesServiceHost, KubernetesServicePort string
}

// EnvVar says how the program treats one environment variable helm-controller
// sets.
type EnvVar struct {
	// Required variables must be set for the program to run.
	Required bool
	// Ignored, when not empty, says why the program does not read it.
	Ignored string
}

// EnvVars lists every variable helm-controller may set in the Job's
// container and what the program does with it. A variable missing here is
// one the program does not know: the contract test fails on it.
var EnvVars = map[string]EnvVar{
	"NAME":                      {Required: true},
	"VERSION":                   {},
	"REPO":                      {},
	"HELM_DRIVER":               {},
	"CHART_NAMESPACE":           {},
	"CHART":                     {},
	"HELM_VERSION":              {},
	"TARGET_NAMESPACE":          {Required: true},
	"AUTH_PASS_CREDENTIALS":     {},
	"INSECURE_SKIP_TLS_VERIFY":  {},
	"PLAIN_HTTP":                {},
	"TIMEOUT":                   {},
	"FAILURE_POLICY":            {},
	"SERVER_SIDE":               {},
	"FORCE_CONFLICTS":           {},
	"EXPECTED_RELEASE_REVISION": {},
	"CONFIG_HASH":               {},
	"BOOTSTRAP":                 {},
	"KUBERNETES_SERVICE_HOST":   {},
	"KUBERNETES_SERVICE_PORT":   {},
	"all_proxy":                 {Ignored: "Go's HTTP client reads the proxy variables itself"},
	"ALL_PROXY":                 {Ignored: "Go's HTTP client reads the proxy variables itself"},
	"http_proxy":                {Ignored: "Go's HTTP client reads the proxy variables itself"},
	"HTTP_PROXY":                {Ignored: "Go's HTTP client reads the proxy variables itself"},
	"https_proxy":               {Ignored: "Go's HTTP client reads the proxy variables itself"},
	"HTTPS_PROXY":               {Ignored: "Go's HTTP client reads the proxy variables itself"},
	"no_proxy":                  {Ignored: "Go's HTTP client reads the proxy variables itself"},
	"NO_PROXY":                  {Ignored: "Go's HTTP client reads the proxy variables itself"},
}

// Failure policies (FAILURE_POLICY).
const (
	PolicyReinstall = "reinstall"
	PolicyAbort     = "abort"
	PolicyRetry     = "retry"
)

// ReadEnv reads the environment through lookup (os.LookupEnv in the image)
// and checks it, reporting every problem at once.
func ReadEnv(lookup func(string) (string, bool)) (Env, error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	var errs []string
	flag := func(k string) bool {
		v := get(k)
		if v == "" {
			return false
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s=%q is not a boolean", k, v))
		}
		return b
	}
	e := Env{
		Name: get("NAME"), Version: get("VERSION"), Repo: get("REPO"), Driver: get("HELM_DRIVER"),
		ChartNamespace: get("CHART_NAMESPACE"), Chart: get("CHART"), HelmVersion: get("HELM_VERSION"),
		TargetNamespace:     get("TARGET_NAMESPACE"),
		AuthPassCredentials: flag("AUTH_PASS_CREDENTIALS"), InsecureSkipTLSVerify: flag("INSECURE_SKIP_TLS_VERIFY"),
		PlainHTTP: flag("PLAIN_HTTP"), FailurePolicy: get("FAILURE_POLICY"), ServerSide: get("SERVER_SIDE"),
		ForceConflicts: flag("FORCE_CONFLICTS"), ExpectedRevision: get("EXPECTED_RELEASE_REVISION"),
		ConfigHash: get("CONFIG_HASH"), Bootstrap: flag("BOOTSTRAP"),
		KubernetesServiceHost: get("KUBERNETES_SERVICE_HOST"), KubernetesServicePort: get("KUBERNETES_SERVICE_PORT"),
	}
	for k, v := range EnvVars {
		if v.Required && get(k) == "" {
			errs = append(errs, k+" is not set")
		}
	}
	if t := get("TIMEOUT"); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil {
			errs = append(errs, fmt.Sprintf("TIMEOUT=%q is not a duration", t))
		}
		e.Timeout = d
	}
	if e.Driver == "" {
		e.Driver = "secret"
	}
	if e.Driver != "secret" && e.Driver != "configmap" {
		errs = append(errs, fmt.Sprintf("HELM_DRIVER=%q: want secret or configmap", e.Driver))
	}
	if e.FailurePolicy == "" {
		e.FailurePolicy = PolicyReinstall
	}
	if e.ServerSide == "" {
		e.ServerSide = "auto"
	}
	switch e.ServerSide {
	case "auto", "true", "false":
	default:
		errs = append(errs, fmt.Sprintf("SERVER_SIDE=%q: want auto, true or false", e.ServerSide))
	}
	if e.ExpectedRevision != "" {
		if _, err := strconv.Atoi(e.ExpectedRevision); err != nil {
			errs = append(errs, fmt.Sprintf("EXPECTED_RELEASE_REVISION=%q is not a number", e.ExpectedRevision))
		}
	}
	if len(errs) > 0 {
		return e, fmt.Errorf("helm-controller's environment: %s", strings.Join(errs, "; "))
	}
	return e, nil
}

// chartRef is the chart to fetch, with %{KUBERNETES_API}% replaced by the API
// server's address as the pod sees it.
func (e Env) chartRef() string {
	host := e.KubernetesServiceHost
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return strings.ReplaceAll(e.Chart, "%{KUBERNETES_API}%", host+":"+e.KubernetesServicePort)
}

// Action is the Job's command line: install (with Helm's flags) or delete.
type Action struct {
	Delete          bool
	Namespace       string
	CreateNamespace bool
	TakeOwnership   bool
	Version         string
	// Set and SetString are --set and --set-string values, in order.
	Set, SetString []string
}

// ParseArgs reads the arguments helm-controller gives the container:
// "delete", or "install" followed by --namespace, --create-namespace,
// --take-ownership, --version, --set and --set-string.
func ParseArgs(args []string) (Action, error) {
	var a Action
	if len(args) == 0 {
		return a, fmt.Errorf("no command: want install or delete")
	}
	switch args[0] {
	case "delete":
		a.Delete = true
		if len(args) > 1 {
			return a, fmt.Errorf("delete takes no arguments, got %q", args[1:])
		}
		return a, nil
	case "install":
	default:
		return a, fmt.Errorf("unknown command %q: want install or delete", args[0])
	}
	rest := args[1:]
	value := func(i int) (string, error) {
		if i+1 >= len(rest) {
			return "", fmt.Errorf("%s needs a value", rest[i])
		}
		return rest[i+1], nil
	}
	for i := 0; i < len(rest); i++ {
		flag, v, inline := strings.Cut(rest[i], "=")
		take := func() (string, error) {
			if inline {
				return v, nil
			}
			s, err := value(i)
			i++
			return s, err
		}
		var err error
		switch flag {
		case "--namespace", "-n":
			a.Namespace, err = take()
		case "--create-namespace":
			a.CreateNamespace = true
		case "--take-ownership":
			a.TakeOwnership = true
		case "--version":
			a.Version, err = take()
		case "--set":
			var s string
			s, err = take()
			a.Set = append(a.Set, s)
		case "--set-string":
			var s string
			s, err = take()
			a.SetString = append(a.SetString, s)
		default:
			return a, fmt.Errorf("unknown install argument %q", rest[i])
		}
		if err != nil {
			return a, err
		}
	}
	return a, nil
}
