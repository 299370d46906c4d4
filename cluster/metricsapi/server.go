// Package metricsapi serves simulated usage the way metrics-server does:
// metrics.k8s.io/v1beta1 NodeMetrics and PodMetrics over HTTP. load-watcher's
// metrics-server provider and the upstream descheduler read it through the
// real k8s.io/metrics client, so a simulation exercises the same code path as
// a cluster.
package metricsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

const (
	groupPath = "/apis/metrics.k8s.io/v1beta1"
	nodesPath = groupPath + "/nodes"
)

// Source supplies the current usage of every node that has a sample, and the
// time and window the samples stand for.
type Source interface {
	NodeUsage() (usage map[string]corev1.ResourceList, at time.Time, window time.Duration)
}

// PodSource is a Source that also supplies the usage of every pod, served
// as PodMetrics. Without it the pod endpoints find no pod.
type PodSource interface {
	Source
	PodUsage() (usage map[types.NamespacedName]PodUsage, at time.Time, window time.Duration)
}

// PodUsage is one pod's usage, reported as one container's.
type PodUsage struct {
	Container string
	Usage     corev1.ResourceList
}

// Server is a loopback HTTP server for metrics.k8s.io NodeMetrics and
// PodMetrics.
type Server struct {
	source   Source
	listener net.Listener
	server   *http.Server
	done     chan struct{}
}

// Start serves source on a free 127.0.0.1 port until Stop.
func Start(source Source) (*Server, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the metrics API: %w", err)
	}
	s := &Server{source: source, listener: l, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+nodesPath, s.listNodes)
	mux.HandleFunc("GET "+nodesPath+"/{name}", s.getNode)
	mux.HandleFunc("GET "+groupPath+"/pods", s.listPods)
	mux.HandleFunc("GET "+groupPath+"/namespaces/{namespace}/pods", s.listPods)
	mux.HandleFunc("GET "+groupPath+"/namespaces/{namespace}/pods/{name}", s.getPod)
	s.server = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(s.done)
		if err := s.server.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.Background().Error(err, "Metrics API server stopped")
		}
	}()
	return s, nil
}

// RestConfig is a client configuration for k8s.io/metrics clientsets.
//
// Its clients are not rate limited: the server is in this process, and
// client-go's default limit (5 requests a second) would make every sampling
// round of a simulation wait for it, on the wall clock alone.
func (s *Server) RestConfig() *rest.Config {
	return &rest.Config{Host: "http://" + s.listener.Addr().String(), QPS: -1}
}

// Address is the host:port the server listens on.
func (s *Server) Address() string { return s.listener.Addr().String() }

// Stop closes the server and waits for it.
func (s *Server) Stop(ctx context.Context) error {
	err := s.server.Shutdown(ctx)
	<-s.done
	return err
}

func (s *Server) listNodes(w http.ResponseWriter, r *http.Request) {
	usage, at, window := s.source.NodeUsage()
	list := metricsv1beta1.NodeMetricsList{
		TypeMeta: metav1.TypeMeta{Kind: "NodeMetricsList", APIVersion: metricsv1beta1.SchemeGroupVersion.String()},
	}
	names := make([]string, 0, len(usage))
	for name := range usage {
		names = append(names, name)
	}
	sort.Strings(names)
	selector := r.URL.Query().Get("fieldSelector")
	for _, name := range names {
		if selector != "" && selector != "metadata.name="+name {
			continue
		}
		list.Items = append(list.Items, nodeMetrics(name, usage[name], at, window))
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) getNode(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	usage, at, window := s.source.NodeUsage()
	u, ok := usage[name]
	if !ok || strings.Contains(name, "/") {
		writeNotFound(w, "nodemetrics", name)
		return
	}
	writeJSON(w, http.StatusOK, nodeMetrics(name, u, at, window))
}

func nodeMetrics(name string, usage corev1.ResourceList, at time.Time, window time.Duration) metricsv1beta1.NodeMetrics {
	return metricsv1beta1.NodeMetrics{
		TypeMeta:   metav1.TypeMeta{Kind: "NodeMetrics", APIVersion: metricsv1beta1.SchemeGroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at)},
		Timestamp:  metav1.NewTime(at),
		Window:     metav1.Duration{Duration: window},
		Usage:      usage,
	}
}

// podUsage is the source's pod usage, or none.
func (s *Server) podUsage() (map[types.NamespacedName]PodUsage, time.Time, time.Duration) {
	ps, ok := s.source.(PodSource)
	if !ok {
		return nil, time.Time{}, 0
	}
	return ps.PodUsage()
}

// listPods serves every pod's metrics, or a namespace's.
func (s *Server) listPods(w http.ResponseWriter, r *http.Request) {
	usage, at, window := s.podUsage()
	ns := r.PathValue("namespace")
	list := metricsv1beta1.PodMetricsList{
		TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: metricsv1beta1.SchemeGroupVersion.String()},
	}
	keys := make([]types.NamespacedName, 0, len(usage))
	for k := range usage {
		if ns == "" || k.Namespace == ns {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		list.Items = append(list.Items, podMetrics(k, usage[k], at, window))
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) getPod(w http.ResponseWriter, r *http.Request) {
	key := types.NamespacedName{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
	usage, at, window := s.podUsage()
	u, ok := usage[key]
	if !ok {
		writeNotFound(w, "podmetrics", key.Name)
		return
	}
	writeJSON(w, http.StatusOK, podMetrics(key, u, at, window))
}

func podMetrics(key types.NamespacedName, u PodUsage, at time.Time, window time.Duration) metricsv1beta1.PodMetrics {
	return metricsv1beta1.PodMetrics{
		TypeMeta:   metav1.TypeMeta{Kind: "PodMetrics", APIVersion: metricsv1beta1.SchemeGroupVersion.String()},
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, CreationTimestamp: metav1.NewTime(at)},
		Timestamp:  metav1.NewTime(at),
		Window:     metav1.Duration{Duration: window},
		Containers: []metricsv1beta1.ContainerMetrics{{Name: u.Container, Usage: u.Usage}},
	}
}

// writeNotFound answers as the API server does for a missing object.
func writeNotFound(w http.ResponseWriter, resource, name string) {
	writeJSON(w, http.StatusNotFound, metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound,
		Message: fmt.Sprintf("%s.metrics.k8s.io %q not found", resource, name),
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		klog.Background().V(2).Info("Writing a metrics API response failed", "err", err)
	}
}
