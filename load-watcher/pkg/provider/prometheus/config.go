package prometheus

import (
	"net/url"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	// DefaultTimeout bounds each PromQL query.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxResponseBytes bounds one answer of Prometheus. A series of
	// the default queries takes 100-250 bytes with the labels
	// kube-prometheus adds, so 4 MiB holds some 18 000 nodes; decoding such
	// an answer raises the heap by up to about 30 MiB for a moment.
	DefaultMaxResponseBytes = 4 << 20
)

// Config configures the Prometheus provider.
type Config struct {
	// Address is the base URL of the Prometheus server, e.g. http://prometheus:9090.
	Address string
	// QuerySet picks the default queries; defaults to auto.
	QuerySet QuerySet
	// CPUQuery replaces the query set's CPU query when not empty.
	CPUQuery string
	// MemoryQuery replaces the query set's memory query when not empty.
	MemoryQuery string
	// BearerTokenFile is read before every query and sent as a bearer token.
	// Only to an https Address, unless AllowInsecureBearerToken.
	BearerTokenFile string
	// AllowInsecureBearerToken lets the bearer token go to an http Address,
	// in clear text: anyone on the path can read it and use it.
	AllowInsecureBearerToken bool
	// CAFile holds PEM certificates trusted for an https Address.
	CAFile string
	// InsecureSkipVerify disables TLS certificate checks.
	InsecureSkipVerify bool
	// Timeout bounds each query, and twice it a whole sampling round;
	// defaults to DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes bounds one answer, counted after decompression; a
	// larger answer fails its query. Defaults to DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

var validQuerySets = sets.New(QuerySetAuto, QuerySetNodeExporter, QuerySetKubePrometheus)

// SetDefaults fills unset fields.
func (c *Config) SetDefaults() {
	if c.QuerySet == "" {
		c.QuerySet = QuerySetAuto
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
}

// Validate reports every invalid field at once.
func (c *Config) Validate(path *field.Path) error {
	var errs field.ErrorList
	if c.Address == "" {
		errs = append(errs, field.Required(path.Child("address"), "the Prometheus URL"))
	} else if u, err := url.Parse(c.Address); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, field.Invalid(path.Child("address"), c.Address, "must be an http:// or https:// URL with a host"))
	} else if u.Scheme == "http" && c.BearerTokenFile != "" && !c.AllowInsecureBearerToken {
		errs = append(errs, field.Invalid(path.Child("bearerTokenFile"), c.BearerTokenFile,
			"the http:// address would carry the token in clear text: use an https:// address, or set allowInsecureBearerToken to send it anyway"))
	}
	if !validQuerySets.Has(c.QuerySet) {
		errs = append(errs, field.NotSupported(path.Child("querySet"), c.QuerySet, sets.List(validQuerySets)))
	}
	if c.Timeout < 0 {
		errs = append(errs, field.Invalid(path.Child("timeout"), c.Timeout.String(), "must not be negative"))
	}
	if c.MaxResponseBytes <= 0 {
		errs = append(errs, field.Invalid(path.Child("maxResponseBytes"), c.MaxResponseBytes, "must be positive"))
	}
	return errs.ToAggregate()
}
