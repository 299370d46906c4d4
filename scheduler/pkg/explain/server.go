package explain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/scheduler/pkg/explanation"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// requestTimeout bounds one explanation: listing what the plugins read and
// one scheduling cycle.
const requestTimeout = time.Minute

// Source is what the explain endpoint explains with: the scheduler's own
// configuration file, read at each request as the scheduler read it at start,
// its client, and the usage its plugins place by.
type Source struct {
	ConfigFile string
	Client     kubernetes.Interface
	RestConfig *rest.Config
	Usage      nodeload.Source
}

// Handler serves explanation.PodPath: the explanation of one pod, in JSON.
// It explains one pod at a time, so requests cannot pile up memory in the
// scheduler's process.
func Handler(src Source) http.Handler {
	var one sync.Mutex
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+explanation.PodPath+"{namespace}/{name}", func(w http.ResponseWriter, r *http.Request) {
		one.Lock()
		defer one.Unlock()
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		resp, status := explainPod(ctx, src, r.PathValue("namespace"), r.PathValue("name"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if err := json.NewEncoder(w).Encode(resp); err != nil {
			klog.FromContext(ctx).V(2).Info("Writing an explanation", "err", err.Error())
		}
	})
	return mux
}

// explainPod explains the pod namespace/name with src.
func explainPod(ctx context.Context, src Source, namespace, name string) (explanation.Response, int) {
	var resp explanation.Response
	pod, err := src.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		resp.Error = fmt.Sprintf("no pod %s/%s", namespace, name)
		return resp, http.StatusNotFound
	}
	if err != nil {
		resp.Error = fmt.Sprintf("reading pod %s/%s: %v", namespace, name, err)
		return resp, http.StatusBadGateway
	}
	config, err := os.ReadFile(src.ConfigFile)
	if err != nil {
		resp.Error = fmt.Sprintf("reading the scheduler's configuration: %v", err)
		return resp, http.StatusInternalServerError
	}
	in := Input{Config: config, Client: src.Client, RestConfig: src.RestConfig, Pod: pod}
	if src.Usage != nil {
		in.Usage = src.Usage.Snapshot()
	}
	if in.Usage != nil {
		t := in.Usage.Time
		resp.UsageTime = &t
	}
	if resp.Explanation, err = Explain(ctx, in); err != nil {
		resp.Error = err.Error()
		return resp, http.StatusInternalServerError
	}
	return resp, http.StatusOK
}

// ServeOnFirstPlugin wraps every factory of r so that the first plugin built
// starts serving explanations on addr, a loopback address, for as long as
// the scheduler (the factory's context) runs, with the scheduler's client
// and usage. Plugins are built when the scheduler starts: an address it
// cannot listen on stops it there, naming --explain-address.
func ServeOnFirstPlugin(r frameworkruntime.Registry, addr, configFile string, usage nodeload.Source) {
	var once sync.Once
	var err error
	for plugin, factory := range r {
		r[plugin] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			once.Do(func() { err = serve(ctx, h, addr, configFile, usage) })
			if err != nil {
				return nil, err
			}
			return factory(ctx, args, h)
		}
	}
}

// serve listens on addr and serves the endpoint until ctx ends.
func serve(ctx context.Context, h fwk.Handle, addr, configFile string, usage nodeload.Source) error {
	if h == nil || h.ClientSet() == nil {
		return errors.New("--explain-address needs the scheduler's client")
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--explain-address %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           Handler(Source{ConfigFile: configFile, Client: h.ClientSet(), RestConfig: h.KubeConfig(), Usage: usage}),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "The explain endpoint stopped", "address", addr)
		}
	}()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	klog.FromContext(ctx).Info("Explaining placements on request", "address", lis.Addr().String(),
		"path", strings.TrimSuffix(explanation.PodPath, "/"))
	return nil
}
