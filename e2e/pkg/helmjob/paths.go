package helmjob

import "path/filepath"

// Paths are where the Job's pod has its volumes.
type Paths struct {
	// Config holds the values files (*.yaml, merged in name order) and a
	// repository CA (ca-file.pem): helm-controller's values Secret.
	Config string
	// Chart holds <Name>.tgz.base64, the HelmChart's spec.chartContent.
	Chart string
	// CAFiles holds more repository CAs (spec.repoCAConfigMap).
	CAFiles string
	// Auth holds the repository credentials (spec.authSecret): username and
	// password, or tls.crt and tls.key.
	Auth string
	// Home is the user's home: Helm keeps its cache and configuration in it.
	Home string
	// Tmp is scratch space.
	Tmp string
	// TerminationLog receives a summary the kubelet puts in the pod's status.
	TerminationLog string
}

// DefaultPaths are the paths of helm-controller's Job and of the image.
var DefaultPaths = Paths{
	Config:         "/config",
	Chart:          "/chart",
	CAFiles:        "/ca-files",
	Auth:           "/auth",
	Home:           "/home/klipper-helm",
	Tmp:            "/tmp",
	TerminationLog: "/dev/termination-log",
}

// Writable lists the directories the program writes in, below which the
// pod must mount something writable: the image's root filesystem is
// read-only in helm-controller's Job.
func (p Paths) Writable() []string {
	return []string{
		filepath.Join(p.Home, ".cache"),
		filepath.Join(p.Home, ".config"),
		p.Tmp,
	}
}

// Env is the image's environment: Helm finds its cache and configuration
// under HOME, and a chart served by the API server (%{KUBERNETES_API}%) is
// trusted through the ServiceAccount's CA, with the image's own bundle.
func (p Paths) Env() []string {
	return []string{
		"HOME=" + p.Home,
		"STABLE_REPO_URL=" + StableRepoURL,
		"SSL_CERT_FILE=/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
		"SSL_CERT_DIR=/etc/ssl/certs",
	}
}

// StableRepoURL is where a chart named stable/<chart> comes from, as in
// klipper-helm.
const StableRepoURL = "https://charts.helm.sh/stable/"
