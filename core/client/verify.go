package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
)

// Limits on what the client accepts from a load-watcher server.
const (
	// DefaultMaxResponseBytes bounds an answer; 5 000 nodes with three
	// windows take about 4 MiB. A larger answer is refused, not truncated.
	DefaultMaxResponseBytes = 16 << 20
	// DefaultMaxClockSkew is how far a timestamp may lie in the future: the
	// answer's time on the client's clock, a node's sample time on the
	// server's (metrics-server stamps samples with the node's clock).
	DefaultMaxClockSkew = 2 * time.Minute
	// MaxPercent is the largest statistic accepted, in percent of
	// allocatable. load-watcher clamps usage at capacity ÷ allocatable,
	// which is above 100 % only by what the node reserves for the system;
	// five times allocatable is not a real machine but a unit mistake.
	MaxPercent = 500.0
)

// ErrRefused is wrapped by every error about an answer the client does not
// trust as a whole: malformed, oversized, of another apiVersion, missing a
// required field, or stamped in the future. The cached snapshot is kept
// and ages into staleness, exactly as when the server cannot be reached.
var ErrRefused = errors.New("refused load-watcher answer")

// verifier decodes an answer of /api/v1/usage and checks it: the answer as a
// whole (refused with ErrRefused) and each node (marked Invalid, dropped when
// its name cannot be a node the caller knows).
type verifier struct {
	maxBytes   int64
	maxSkew    time.Duration
	nodeExists func(string) bool
}

// answer is a verified response.
type answer struct {
	list *apiv1.UsageList
	// invalid maps node names to why their data was refused; those nodes
	// stay in list, marked stale by the cache.
	invalid map[string]string
	// dropped maps node names left out of list to why.
	dropped map[string]string
	// etag is the answer's entity tag, "" when the server sent none.
	etag string
}

// decode reads at most maxBytes from r and verifies the answer against the
// client's clock now.
func (v verifier) decode(r io.Reader, now time.Time) (*answer, error) {
	data, err := io.ReadAll(io.LimitReader(r, v.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if int64(len(data)) > v.maxBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrRefused, v.maxBytes)
	}
	return v.verify(data, now)
}

// verify parses data and checks it.
func (v verifier) verify(data []byte, now time.Time) (*answer, error) {
	var list apiv1.UsageList
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("%w: malformed JSON: %w", ErrRefused, err)
	}
	if err := v.verifyList(&list, now); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	a := &answer{list: &list, invalid: map[string]string{}, dropped: map[string]string{}}
	root := field.NewPath("nodes")
	for name, n := range list.Nodes {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			a.dropped[name] = field.Invalid(root, name, "not a node name: "+strings.Join(msgs, "; ")).Error()
			delete(list.Nodes, name)
			continue
		}
		if v.nodeExists != nil && !v.nodeExists(name) {
			a.dropped[name] = field.NotFound(root.Key(name), "no such node in the cluster").Error()
			delete(list.Nodes, name)
			continue
		}
		if err := v.verifyNode(root.Key(name), &n, &list); err != nil {
			a.invalid[name] = err.Error()
		}
		list.Nodes[name] = n
	}
	return a, nil
}

// verifyList checks what the whole answer must have.
func (v verifier) verifyList(list *apiv1.UsageList, now time.Time) error {
	var errs field.ErrorList
	if list.APIVersion != apiv1.APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), list.APIVersion, []string{apiv1.APIVersion}))
	}
	if list.Time.IsZero() {
		errs = append(errs, field.Required(field.NewPath("time"), ""))
	} else if list.Time.After(now.Add(v.maxSkew)) {
		errs = append(errs, field.Invalid(field.NewPath("time"), list.Time.Format(time.RFC3339),
			fmt.Sprintf("more than %v ahead of this host's clock (%s)", v.maxSkew, now.UTC().Format(time.RFC3339))))
	}
	for name, s := range map[string]float64{"periodSeconds": list.PeriodSeconds, "staleAfterSeconds": list.StaleAfterSeconds} {
		if !(s > 0) || math.IsInf(s, 0) {
			errs = append(errs, field.Invalid(field.NewPath(name), s, "must be a positive number of seconds"))
		}
	}
	if len(list.Windows) == 0 {
		errs = append(errs, field.Required(field.NewPath("windows"), ""))
	}
	for i, w := range list.Windows {
		if _, err := apiv1.ParseWindow(w); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("windows").Index(i), w, err.Error()))
		} else if slices.Index(list.Windows, w) != i {
			errs = append(errs, field.Duplicate(field.NewPath("windows").Index(i), w))
		}
	}
	if list.Nodes == nil {
		errs = append(errs, field.Required(field.NewPath("nodes"), ""))
	}
	return errs.ToAggregate()
}

// verifyNode checks one node; it drops the statistics of resources the
// client does not know (a newer server may measure more), not the node.
func (v verifier) verifyNode(path *field.Path, n *apiv1.NodeUsage, list *apiv1.UsageList) error {
	var errs field.ErrorList
	if n.SampleTime.IsZero() {
		errs = append(errs, field.Required(path.Child("sampleTime"), ""))
	} else if n.SampleTime.After(list.Time.Add(v.maxSkew)) {
		errs = append(errs, field.Invalid(path.Child("sampleTime"), n.SampleTime.Format(time.RFC3339),
			fmt.Sprintf("more than %v after the answer's time", v.maxSkew)))
	}
	if !(n.SampleAgeSeconds >= 0) || math.IsInf(n.SampleAgeSeconds, 0) {
		errs = append(errs, field.Invalid(path.Child("sampleAgeSeconds"), n.SampleAgeSeconds, "must be a number of seconds, not negative"))
	}
	if len(n.Windows) == 0 {
		errs = append(errs, field.Required(path.Child("windows"), ""))
	}
	for w, byRes := range n.Windows {
		wpath := path.Child("windows").Key(w)
		if !slices.Contains(list.Windows, w) {
			errs = append(errs, field.NotSupported(wpath, w, list.Windows))
			continue
		}
		for r, s := range byRes {
			if !slices.Contains(usage.Resources, r) {
				delete(byRes, r)
				continue
			}
			errs = append(errs, verifyStats(wpath.Key(string(r)), s)...)
		}
	}
	return errs.ToAggregate()
}

// verifyStats checks that every statistic is a percentage a decision can
// rest on.
func verifyStats(path *field.Path, s usage.Stats) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name  string
		value float64
	}{{"avg", s.Avg}, {"std", s.Std}, {"max", s.Max}, {"p95", s.P95}, {"latest", s.Latest}} {
		switch {
		case math.IsNaN(f.value) || math.IsInf(f.value, 0):
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, "not a finite number"))
		case f.value < 0:
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, "negative"))
		case f.value > MaxPercent:
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, fmt.Sprintf("above %v %% of allocatable", MaxPercent)))
		}
	}
	if s.Samples < 0 {
		errs = append(errs, field.Invalid(path.Child("samples"), s.Samples, "negative"))
	}
	return errs
}
