package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/core/moves"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

const (
	movesConfigMap = "ballast-descheduler-moves"
	movesPolicy    = "ballast-descheduler-moves"
)

// TestMovesAreRepairedAndCreatedAgain: with the chart's rights, the
// descheduler writes its memory over a moves ConfigMap it cannot read and
// creates a deleted one again, with a Warning event each time; it may
// create no other ConfigMap.
func TestMovesAreRepairedAndCreatedAgain(t *testing.T) {
	c, ctx := startCluster(t)
	ns := charts.DefaultNamespace
	installDescheduler(t, ctx, c, nil)
	sa := descheduler(t, c)
	cms := c.Client.CoreV1().ConfigMaps(ns)

	// Its right to create ConfigMaps is for its own, in Ballast's namespace.
	waitFor(t, ctx, "the descheduler's creation of another ConfigMap to be refused by "+movesPolicy, time.Minute, func(context.Context) (bool, error) {
		_, err := sa.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{})
		if err == nil {
			// Created before the policy applied.
			if err := cms.Delete(ctx, "probe", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return refusedByPolicy(err, movesPolicy), err
	})
	createNamespace(t, ctx, c.Client, "apps")
	if _, err := sa.CoreV1().ConfigMaps("apps").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: movesConfigMap}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("descheduler creating a ConfigMap in another namespace: %v, want Forbidden", err)
	}

	broadcaster := events.NewEventBroadcasterAdapter(sa)
	broadcaster.StartRecordingToSink(ctx.Done())
	defer broadcaster.Shutdown()
	d := balance.Deps{Store: balance.NewStore(), Persist: balance.NewMovesConfigMap(sa, ns, movesConfigMap),
		Events: broadcaster.NewRecorder("ballast-descheduler")}
	logger := klog.Background()
	web := balance.Workload{Namespace: "apps", Kind: "Deployment", Name: "web"}
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	cycle := func(remember func(*balance.Store)) {
		d.Store.Lock()
		defer d.Store.Unlock()
		d.Recall(ctx, logger)
		if remember != nil {
			remember(d.Store)
		}
		d.Keep(ctx, logger)
	}
	// kept reads the moves as the scheduler does.
	kept := func() []moves.Saved {
		t.Helper()
		cm, err := cms.Get(ctx, movesConfigMap, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading the moves: %v", err)
		}
		saved, err := moves.Decode([]byte(cm.Data[moves.Key]))
		if err != nil {
			t.Fatalf("the moves cannot be read: %v", err)
		}
		return saved
	}
	warned := func(reason string) {
		t.Helper()
		waitFor(t, ctx, "a Warning event "+reason+" on the moves ConfigMap", 30*time.Second, func(context.Context) (bool, error) {
			list, err := c.Client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, e := range list.Items {
				if e.Reason == reason && e.Type == corev1.EventTypeWarning && e.Regarding.Kind == "ConfigMap" && e.Regarding.Name == movesConfigMap &&
					strings.Contains(e.Note, ns+"/"+movesConfigMap) {
					return true, nil
				}
			}
			return false, nil
		})
	}

	cycle(func(s *balance.Store) { s.Remember(web, "web-1", "a", "b", t0, nil, nil) })
	if got := kept(); len(got) != 1 {
		t.Fatalf("kept %v, want one move", got)
	}

	// Unreadable: written over with what the descheduler remembers.
	cm, err := cms.Get(ctx, movesConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[moves.Key] = `{"moves": [`
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cycle(nil)
	if got := kept(); len(got) != 1 || got[0].Pod != "web-1" {
		t.Errorf("kept %v after the repair, want web-1's move", got)
	}
	warned(balance.ReasonMovesUnreadable)

	// Deleted: created again, with the chart's labels.
	if err := cms.Delete(ctx, movesConfigMap, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cycle(func(s *balance.Store) { s.Remember(web, "web-2", "a", "c", t0.Add(time.Minute), nil, nil) })
	if got := kept(); len(got) != 2 {
		t.Errorf("kept %v after the ConfigMap was created again, want both moves", got)
	}
	cm, err = cms.Get(ctx, movesConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels["app.kubernetes.io/managed-by"] != "Helm" || cm.Labels["app.kubernetes.io/instance"] != "ballast" {
		t.Errorf("created again with labels %v, want the chart's", cm.Labels)
	}
	warned(balance.ReasonMovesMissing)
}
