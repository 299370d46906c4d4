package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/server"
	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/model"
	"github.com/ballast-sched/ballast/simulator/sim/record"
	"github.com/ballast-sched/ballast/simulator/sim/stack"
)

// KubeconfigContext names the cluster, user and context of a served
// cluster's kubeconfig; Serve overwrites only a file with this context.
const KubeconfigContext = "ballast-sim"

// ServeOptions configure a served cluster.
type ServeOptions struct {
	// Scheduler is the scheduler the simulator runs: ModeBallast (the
	// default), ModeDefault, or ModeNone to leave binding to another one.
	Scheduler Mode
	// Descheduler runs the descheduler policy in-process every
	// DeschedulerEvery of scenario time.
	Descheduler bool
	// Speed is how much faster than the real clock scenario time (the usage
	// model and the events) runs; default 1.
	Speed float64
	// KubeconfigOut is the kubeconfig file to write; required. An existing
	// file is overwritten only if a served cluster wrote it.
	KubeconfigOut string
	// LoadWatcherAddress is where load-watcher's API listens; default a free
	// loopback port.
	LoadWatcherAddress string
	// DeschedulerEvery is the scenario time between descheduling cycles;
	// default 5m, the chart's descheduler.deschedulingInterval.
	DeschedulerEvery time.Duration
	// SchedulerConfig and DeschedulerPolicy replace the shipped scheduler
	// profile and descheduler policy when set.
	SchedulerConfig   string
	DeschedulerPolicy string
	// Windows are the statistics windows load-watcher keeps; default
	// usage.DefaultWindows.
	Windows []usage.Window
	// Log receives a line for every event applied and every problem of the
	// running simulation when set.
	Log io.Writer
	// Record keeps a Step of every sampling round up to the scenario's
	// duration, with evictions, ping-pong and pods placed on a hog, for
	// Result: the record a run on the simulated clock keeps.
	Record bool
}

func (o *ServeOptions) setDefaults() {
	if o.Scheduler == "" {
		o.Scheduler = ModeBallast
	}
	if o.Speed == 0 {
		o.Speed = 1
	}
	if o.LoadWatcherAddress == "" {
		o.LoadWatcherAddress = "127.0.0.1:0"
	}
	if o.DeschedulerEvery == 0 {
		o.DeschedulerEvery = 5 * time.Minute
	}
	if o.SchedulerConfig == "" {
		o.SchedulerConfig = stack.SchedulerConfig
	}
	if o.DeschedulerPolicy == "" {
		o.DeschedulerPolicy = stack.DeschedulerPolicy
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

var serveSchedulers = sets.New(string(ModeBallast), string(ModeDefault), string(ModeNone))

// Validate reports every invalid option at once.
func (o *ServeOptions) Validate(path *field.Path) error {
	var errs field.ErrorList
	if !serveSchedulers.Has(string(o.Scheduler)) {
		errs = append(errs, field.NotSupported(path.Child("scheduler"), string(o.Scheduler), sets.List(serveSchedulers)))
	}
	if o.Speed <= 0 {
		errs = append(errs, field.Invalid(path.Child("speed"), o.Speed, "must be positive"))
	}
	if o.KubeconfigOut == "" {
		errs = append(errs, field.Required(path.Child("kubeconfigOut"), "the file to write the kubeconfig to"))
	}
	if o.DeschedulerEvery <= 0 {
		errs = append(errs, field.Invalid(path.Child("deschedulerEvery"), o.DeschedulerEvery.String(), "must be positive"))
	}
	return errs.ToAggregate()
}

// Server is a scenario's cluster kept running in real time for other tools.
type Server struct {
	// KubeconfigPath is the kubeconfig written for the cluster.
	KubeconfigPath string
	// APIServer is the kube-apiserver URL.
	APIServer string
	// LoadWatcher is load-watcher's base URL (/watcher, /api/v1/usage).
	LoadWatcher string
	// MetricsAPI is the base URL of the simulated metrics.k8s.io.
	MetricsAPI string

	stack  *stack.Stack
	opts   ServeOptions
	events *model.Timeline
	// thresholds are the scheduler's, which the record and the placement
	// judge hot nodes by.
	thresholds record.Thresholds
	http       *http.Server
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	once       sync.Once

	// rec records the run when ServeOptions.Record is set; recorded closes
	// once it has the step at the scenario's end; result is its summary
	// after Shutdown.
	rec      *record.Recorder
	recorded chan struct{}
	result   *record.Result

	wroteKubeconfig bool
}

// Serve starts sc's cluster with its workloads and keeps it running in real
// time until Shutdown: usage is sampled every scenario step (divided by the
// speed), events happen when scenario time reaches them, the descheduler
// runs when due. ctx bounds only the start.
func Serve(ctx context.Context, sc *scenario.Scenario, opts ServeOptions) (_ *Server, err error) {
	opts.setDefaults()
	if err := opts.Validate(field.NewPath("serve")); err != nil {
		return nil, err
	}
	if err := checkKubeconfigOut(opts.KubeconfigOut); err != nil {
		return nil, err
	}
	thresholds, err := schedulerThresholds(opts.SchedulerConfig)
	if err != nil {
		return nil, err
	}
	st, err := stack.Start(ctx, sc, stack.Config{
		Scheduler: opts.Scheduler, Descheduler: opts.Descheduler, SchedulerConfig: opts.SchedulerConfig,
		DeschedulerPolicy: opts.DeschedulerPolicy, Clock: clock.RealClock{},
		Period: time.Duration(float64(sc.Step.Duration) / opts.Speed), Speed: opts.Speed, Windows: opts.Windows,
	})
	if err != nil {
		return nil, err
	}
	s := &Server{stack: st, opts: opts, events: model.NewTimeline(sc), thresholds: thresholds, KubeconfigPath: opts.KubeconfigOut,
		APIServer: st.Cluster().RestConfig.Host, MetricsAPI: "http://" + st.MetricsAddress()}
	defer func() {
		if err != nil {
			_ = s.close()
		}
	}()
	if err := st.CreateWorkloads(ctx); err != nil {
		return nil, err
	}
	s.applyDue(ctx, 0)
	if opts.Record {
		s.rec, s.recorded = record.NewRecorder(st.Model(), sc, opts.Scheduler, thresholds), make(chan struct{})
		if err := s.record(ctx, 0, false); err != nil {
			return nil, err
		}
	}
	if err := s.serveLoadWatcher(); err != nil {
		return nil, err
	}
	s.wroteKubeconfig = true
	if err := st.Cluster().WriteKubeconfig(opts.KubeconfigOut, KubeconfigContext); err != nil {
		return nil, err
	}
	if err := s.publishInfo(ctx); err != nil {
		return nil, err
	}
	var life context.Context
	life, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.wg.Go(func() { s.loop(life) })
	return s, nil
}

// serveLoadWatcher serves load-watcher's real API over the collector.
func (s *Server) serveLoadWatcher() error {
	l, err := net.Listen("tcp", s.opts.LoadWatcherAddress)
	if err != nil {
		return fmt.Errorf("listening for load-watcher's API on %s: %w", s.opts.LoadWatcherAddress, err)
	}
	col := s.stack.Collector()
	handler := server.NewHandler(server.Options{Source: col, Gatherer: col.Gatherer()})
	s.http = &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	s.LoadWatcher = "http://" + l.Addr().String()
	warm, stopWarm := context.WithCancel(context.Background())
	s.wg.Go(func() { handler.WarmLoop(warm) })
	s.wg.Go(func() {
		defer stopWarm()
		if err := s.http.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(s.opts.Log, "load-watcher's API stopped: %v\n", err)
		}
	})
	return nil
}

// publishInfo writes the ConfigMap that tells other tools where
// load-watcher is and what runs.
func (s *Server) publishInfo(ctx context.Context) error {
	client := s.stack.Cluster().Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: record.InfoNamespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", record.InfoNamespace, err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: record.InfoName, Namespace: record.InfoNamespace},
		Data: map[string]string{
			record.InfoLoadWatcher: s.LoadWatcher,
			"scenario":             s.stack.Scenario().Name,
			"scheduler":            string(s.opts.Scheduler),
			"descheduler":          strconv.FormatBool(s.opts.Descheduler),
			"speed":                strconv.FormatFloat(s.opts.Speed, 'g', -1, 64),
		},
	}
	record.PublishThresholds(cm.Data, s.thresholds)
	if _, err := client.CoreV1().ConfigMaps(record.InfoNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("publishing %s/%s: %w", record.InfoNamespace, record.InfoName, err)
	}
	return nil
}

// scenarioTime is how far the scenario has got: real time since the start
// times the speed.
func (s *Server) scenarioTime() time.Duration { return s.stack.ScenarioTime() }

// loop samples usage every period, applies the events that fell due and
// runs the descheduler when due, until ctx ends. A failing round is
// reported and the next one tried: the cluster stays up for its users.
func (s *Server) loop(ctx context.Context) {
	tick := time.NewTicker(s.stack.Period())
	defer tick.Stop()
	var lastCycle time.Duration
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		t := s.scenarioTime()
		s.report(ctx, t, s.stack.PublishAndCollect(ctx, t, int64(t/s.stack.Scenario().Step.Duration)))
		s.applyDue(ctx, t)
		s.report(ctx, t, s.observe(ctx, t, false))
		if d := s.stack.Descheduler(); d != nil && t-lastCycle >= s.opts.DeschedulerEvery {
			lastCycle = t
			s.report(ctx, t, d.Cycle(ctx))
			moves, err := d.Moves(ctx)
			s.report(ctx, t, err)
			if s.recording() {
				tell(s.rec, moves)
			}
			s.report(ctx, t, s.observe(ctx, t, true))
		}
		s.report(ctx, t, s.record(ctx, t, true))
	}
}

// report logs err, unless nil or caused by the end of ctx.
func (s *Server) report(ctx context.Context, t time.Duration, err error) {
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(s.opts.Log, "%s: %v\n", t.Round(time.Second), err)
	}
}

// recording reports whether the run is recorded and has not reached the
// scenario's end yet.
func (s *Server) recording() bool {
	if s.rec == nil {
		return false
	}
	select {
	case <-s.recorded:
		return false
	default:
		return true
	}
}

// observe shows the recorder the pods at scenario time t; evicting says a
// descheduling cycle has just run, so that bound pods gone since the last
// look count as evicted. Events apply before the look that precedes a
// cycle, so a scale-down's deletions do not count, unless its ReplicaSet
// deletes pods only while the cycle runs.
func (s *Server) observe(ctx context.Context, t time.Duration, evicting bool) error {
	if !s.recording() {
		return nil
	}
	pods, err := s.stack.CurrentPods(ctx)
	if err != nil {
		return err
	}
	s.rec.Observe(pods, t, evicting)
	return nil
}

// record adds the cluster at scenario time t to the record, and closes
// recorded at the scenario's end. Without observe, it looks at the pods
// first.
func (s *Server) record(ctx context.Context, t time.Duration, observed bool) error {
	if !s.recording() {
		return nil
	}
	if !observed {
		if err := s.observe(ctx, t, false); err != nil {
			return err
		}
	}
	nodes, err := s.stack.Nodes(ctx)
	if err != nil {
		return err
	}
	pods, err := s.stack.CurrentPods(ctx)
	if err != nil {
		return err
	}
	states, pending := record.NodeStates(nodes, pods, s.stack.Model(), t, int64(t/s.stack.Scenario().Step.Duration))
	s.rec.AddStep(record.StepOf(states, pending, t))
	if t >= s.stack.Scenario().Duration.Duration {
		close(s.recorded)
	}
	return nil
}

// Recorded is closed once the record has the step at the scenario's end;
// nil, never closed, without ServeOptions.Record.
func (s *Server) Recorded() <-chan struct{} { return s.recorded }

// Result is the run's record, summarised as a run on the simulated clock
// is: every step from the start to the scenario's end, or to Shutdown if
// that came first. Nil before Shutdown or without ServeOptions.Record.
func (s *Server) Result() *record.Result { return s.result }

// applyDue starts the Jobs due at t, applies every event due then, and
// what the nodes' outages do, reporting each failure.
func (s *Server) applyDue(ctx context.Context, t time.Duration) {
	if err := s.stack.Runs(ctx, t); err != nil {
		fmt.Fprintf(s.opts.Log, "%s: jobs: %v\n", t.Round(time.Second), err)
	}
	for _, ev := range s.events.Due(t) {
		fmt.Fprintf(s.opts.Log, "%s: %s\n", ev.At.Duration, eventText(ev))
		if err := s.stack.Apply(ctx, ev); err != nil {
			fmt.Fprintf(s.opts.Log, "%s: event %s at %s: %v\n", t.Round(time.Second), ev.Type, ev.At.Duration, err)
		}
	}
	if err := s.stack.Outages(ctx, t); err != nil {
		fmt.Fprintf(s.opts.Log, "%s: %v\n", t.Round(time.Second), err)
	}
}

// eventText describes an event for the log.
func eventText(ev scenario.Event) string {
	switch ev.Type {
	case scenario.Scale:
		return fmt.Sprintf("scale %s to %d", ev.Workload, ev.Replicas)
	case scenario.Hog:
		var eats []string
		for name, q := range map[string]resource.Quantity{"cpu": ev.Resources.CPU, "memory": ev.Resources.Memory} {
			if !q.IsZero() {
				eats = append(eats, name+" "+q.String())
			}
		}
		sort.Strings(eats)
		return fmt.Sprintf("hog on %s eats %s", ev.Node, strings.Join(eats, " and "))
	case scenario.Reboot:
		return fmt.Sprintf("reboot %s: down for %s", ev.Node, ev.For.Duration)
	case scenario.PowerLoss:
		return fmt.Sprintf("power loss on %s: down for good", ev.Node)
	default:
		return fmt.Sprintf("%s %s", ev.Type, ev.Node)
	}
}

// Shutdown measures the placement that resulted, then stops everything,
// waits for it, and removes the kubeconfig and every temporary file.
func (s *Server) Shutdown(ctx context.Context) (*record.Placement, error) {
	var p *record.Placement
	var err error
	s.once.Do(func() {
		s.cancel()
		p, err = record.Observe(ctx, s.stack.Cluster().Client, s.stack.Collector().Snapshot(), s.thresholds)
		if closeErr := s.close(); err == nil {
			err = closeErr
		}
		if s.rec != nil {
			s.result = s.rec.Finish()
		}
	})
	return p, err
}

// close stops the loop, the load-watcher API and the stack, waits for them
// and removes the kubeconfig once written.
func (s *Server) close() error {
	if s.cancel != nil {
		s.cancel()
	}
	if s.http != nil {
		_ = s.http.Close()
	}
	s.wg.Wait()
	s.stack.Close()
	if s.wroteKubeconfig {
		if err := os.Remove(s.KubeconfigPath); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("removing the kubeconfig: %w", err)
		}
	}
	return s.stack.Err()
}

// checkKubeconfigOut refuses to overwrite a file that a served cluster did
// not write: a kubeconfig of a real cluster would be lost.
func checkKubeconfigOut(path string) error {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil
	}
	kc, err := clientcmd.LoadFromFile(path)
	if err == nil && kc.CurrentContext == KubeconfigContext {
		return nil
	}
	return fmt.Errorf("%s exists and is not a kubeconfig written by a served simulation: remove it or choose another file", path)
}

// Report measures a cluster served by Serve (record.Report), judging hot
// nodes by the scheduler thresholds it publishes, or by the shipped
// scheduler profile's when it publishes none.
func Report(ctx context.Context, client kubernetes.Interface, loadWatcher string) (*record.Placement, error) {
	shipped, err := schedulerThresholds(stack.SchedulerConfig)
	if err != nil {
		return nil, err
	}
	return record.Report(ctx, client, loadWatcher, shipped)
}
