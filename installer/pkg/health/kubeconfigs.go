package health

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/ballast-sched/ballast/installer/pkg/kubeconfig"
)

// KubeconfigStatus is a kubeconfig `ballast kubeconfig` generated, as
// `ballast status -o json|yaml` shows it.
type KubeconfigStatus struct {
	kubeconfig.Credential `json:",inline"`
	// ExpiresInSeconds is how long its token has left, negative once ended.
	ExpiresInSeconds *float64 `json:"expiresInSeconds,omitempty"`
	// Renew is the command that renews it, set when it ends within a week.
	Renew string `json:"renew,omitempty"`
}

// Warnings are what the report warns of without making Ballast unhealthy:
// the kubeconfigs of components run outside the cluster whose tokens end
// within a week (kubeconfig.RenewWithin), or have ended.
func (r Report) Warnings() []string {
	warnings := []string{}
	for _, c := range r.Kubeconfigs {
		left, soon := c.Expiring(r.Now)
		if !soon {
			continue
		}
		renew := c.RenewCommand(r.Namespace, r.ReleaseName)
		if left <= 0 {
			warnings = append(warnings, fmt.Sprintf("the kubeconfig of %s in %s ended %s ago (%s): %s can no longer reach the API server with it; renew it with: %s",
				c.Component, c.Where(), roundDuration(-left), c.Expires.UTC().Format(time.RFC3339), c.Component, renew))
			continue
		}
		warnings = append(warnings, fmt.Sprintf("the kubeconfig of %s in %s ends in %s (%s); renew it with: %s",
			c.Component, c.Where(), roundDuration(left), c.Expires.UTC().Format(time.RFC3339), renew))
	}
	return warnings
}

func (r Report) kubeconfigStatus() []KubeconfigStatus {
	out := []KubeconfigStatus{}
	for _, c := range r.Kubeconfigs {
		s := KubeconfigStatus{Credential: c}
		if !c.Expires.IsZero() {
			left := c.Expires.Sub(r.Now).Seconds()
			s.ExpiresInSeconds = &left
		}
		if _, soon := c.Expiring(r.Now); soon {
			s.Renew = c.RenewCommand(r.Namespace, r.ReleaseName)
		}
		out = append(out, s)
	}
	return out
}

// printKubeconfigs writes the kubeconfigs of components run outside the
// cluster, when there are any.
func (r Report) printKubeconfigs(w io.Writer) error {
	if r.KubeconfigsErr != nil {
		_, err := fmt.Fprintf(w, "\nkubeconfigs of components run outside the cluster: unknown: %v\n", r.KubeconfigsErr)
		return err
	}
	if len(r.Kubeconfigs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nkubeconfigs of components run outside the cluster (ballast kubeconfig):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range r.Kubeconfigs {
		ends := "token end unknown"
		if !c.Expires.IsZero() {
			left := c.Expires.Sub(r.Now)
			switch {
			case left <= 0:
				ends = fmt.Sprintf("token ENDED %s ago", roundDuration(-left))
			default:
				ends = fmt.Sprintf("token ends in %s", roundDuration(left))
			}
			if _, soon := c.Expiring(r.Now); soon {
				ends += ": renew with " + c.RenewCommand(r.Namespace, r.ReleaseName)
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Component, c.Where(), ends)
	}
	return tw.Flush()
}

// roundDuration says d in days and hours, hours and minutes, or minutes.
func roundDuration(d time.Duration) string {
	switch {
	case d >= 24*time.Hour:
		days := d / (24 * time.Hour)
		return fmt.Sprintf("%dd%dh", days, (d-days*24*time.Hour)/time.Hour)
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	default:
		return d.Round(time.Second).String()
	}
}
