package kubeconfig

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"github.com/ballast-sched/ballast/charts"
)

// File is a kubeconfig file written for a ServiceAccount, as its
// FilesAnnotation records it.
type File struct {
	// Host is the host it was written on.
	Host     string    `json:"host,omitempty"`
	Server   string    `json:"server"`
	Expires  time.Time `json:"expires"`
	Duration string    `json:"duration,omitempty"`
}

// files reads the FilesAnnotation of a ServiceAccount.
func files(annotations map[string]string) map[string]File {
	out := map[string]File{}
	if a := annotations[FilesAnnotation]; a != "" {
		_ = json.Unmarshal([]byte(a), &out)
	}
	return out
}

// RecordFile notes on the ServiceAccount of g that its kubeconfig was
// written to path on host, so that `ballast status` can say when it ends.
func RecordFile(ctx context.Context, client kubernetes.Interface, namespace string, g Generated, path, host string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sa, err := client.CoreV1().ServiceAccounts(namespace).Get(ctx, g.ServiceAccount, metav1.GetOptions{})
		if err != nil {
			return err
		}
		fs := files(sa.Annotations)
		fs[path] = File{Host: host, Server: g.Server, Expires: g.Expires.UTC(), Duration: g.Duration.String()}
		data, err := json.Marshal(fs)
		if err != nil {
			return err
		}
		if sa.Annotations == nil {
			sa.Annotations = map[string]string{}
		}
		sa.Annotations[FilesAnnotation] = string(data)
		_, err = client.CoreV1().ServiceAccounts(namespace).Update(ctx, sa, metav1.UpdateOptions{})
		return err
	})
}

// Credential is a kubeconfig `ballast kubeconfig` generated: in a Secret,
// or in a file on some host.
type Credential struct {
	Component      string `json:"component"`
	ServiceAccount string `json:"serviceAccount"`
	// Secret is namespace/name; File the path, on Host.
	Secret string `json:"secret,omitempty"`
	File   string `json:"file,omitempty"`
	Host   string `json:"host,omitempty"`
	Server string `json:"server,omitempty"`
	// Expires is when its token ends; zero when unknown.
	Expires time.Time `json:"expires,omitzero"`
	// Duration is the lifetime the token was asked for; zero when unknown.
	Duration time.Duration `json:"-"`
}

// Where says where the kubeconfig is.
func (c Credential) Where() string {
	if c.Secret != "" {
		return "Secret " + c.Secret
	}
	if c.Host != "" {
		return fmt.Sprintf("file %s on %s", c.File, c.Host)
	}
	return "file " + c.File
}

// RenewCommand is the command that renews the kubeconfig of a release in
// namespace, and where to run it.
func (c Credential) RenewCommand(namespace, release string) string {
	cmd := "ballast kubeconfig " + c.Component + " --renew"
	// The flags of the ballast command that locate the release.
	if namespace != charts.DefaultNamespace {
		cmd += " --ballast-namespace " + namespace
	}
	if release != charts.DefaultReleaseName {
		cmd += " --release-name " + release
	}
	if c.File != "" && c.Host != "" {
		cmd += " (on " + c.Host + ")"
	}
	return cmd
}

// Expiring returns how long c has left when that is less than RenewWithin
// (negative: it has ended); ok is false otherwise or when unknown.
func (c Credential) Expiring(now time.Time) (left time.Duration, ok bool) {
	if c.Expires.IsZero() {
		return 0, false
	}
	left = c.Expires.Sub(now)
	return left, left < RenewWithin
}

// List returns the kubeconfigs `ballast kubeconfig` generated for release's
// components in namespace: those in Secrets, and the files their
// ServiceAccounts record; by component, then where.
func List(ctx context.Context, client kubernetes.Interface, namespace, release string) ([]Credential, error) {
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=ballast,app.kubernetes.io/managed-by=" + ManagedBy}
	mine := func(labels map[string]string) bool { r := labels[ReleaseLabel]; return r == "" || r == release }
	var out []Credential
	secrets, err := client.CoreV1().Secrets(namespace).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("list the Secrets of ballast kubeconfig in %s: %w", namespace, err)
	}
	for _, s := range secrets.Items {
		if !mine(s.Labels) {
			continue
		}
		c := Credential{Component: s.Labels["app.kubernetes.io/component"], Secret: namespace + "/" + s.Name}
		info := inspect(s.Data[SecretKey])
		c.ServiceAccount, c.Server, c.Expires = info.user, info.server, info.expires
		if t, err := time.Parse(time.RFC3339, s.Annotations[ExpiresAnnotation]); err == nil {
			c.Expires = t
		}
		c.Duration, _ = time.ParseDuration(s.Annotations[DurationAnnotation])
		out = append(out, c)
	}
	sas, err := client.CoreV1().ServiceAccounts(namespace).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("list the ServiceAccounts of ballast kubeconfig in %s: %w", namespace, err)
	}
	for _, sa := range sas.Items {
		if !mine(sa.Labels) {
			continue
		}
		for path, f := range files(sa.Annotations) {
			d, _ := time.ParseDuration(f.Duration)
			out = append(out, Credential{Component: sa.Labels["app.kubernetes.io/component"], ServiceAccount: sa.Name,
				File: path, Host: f.Host, Server: f.Server, Expires: f.Expires, Duration: d})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Component != out[j].Component {
			return out[i].Component < out[j].Component
		}
		return out[i].Where() < out[j].Where()
	})
	return out, nil
}

// kubeconfigInfo is what a generated kubeconfig says of itself.
type kubeconfigInfo struct {
	user, server, tlsServerName string
	ca                          []byte
	expires                     time.Time
}

// inspect reads a kubeconfig the command generated: its user (the
// ServiceAccount), its server and CA, and when its token ends (the JWT's
// exp, read without verifying it: the API server does that).
func inspect(data []byte) kubeconfigInfo {
	var info kubeconfigInfo
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return info
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil {
		return info
	}
	info.user = ctx.AuthInfo
	if cl := cfg.Clusters[ctx.Cluster]; cl != nil {
		info.server, info.ca, info.tlsServerName = cl.Server, cl.CertificateAuthorityData, cl.TLSServerName
	}
	if ai := cfg.AuthInfos[ctx.AuthInfo]; ai != nil {
		info.expires = tokenExpiry(ai.Token)
	}
	return info
}

// tokenExpiry is the exp claim of a JWT; zero when it has none.
func tokenExpiry(token string) time.Time {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == 0 {
		return time.Time{}
	}
	return time.Unix(claims.Exp, 0).UTC()
}
