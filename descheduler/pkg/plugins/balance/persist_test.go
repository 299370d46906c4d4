package balance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/core/moves"
	"github.com/ballast-sched/ballast/core/usage"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance/balancetest"
)

func movesConfigMap(t *testing.T) (*balance.MovesConfigMap, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "moves", Namespace: "ballast-system", ResourceVersion: "1"}})
	return balance.NewMovesConfigMap(client, "ballast-system", "moves"), client
}

// What one Store kept, another recalls whole: the moves, where their
// replacements landed and which landed back, so that its guards answer as
// the first Store's did.
func TestKeptMovesAreRecalledWhole(t *testing.T) {
	ctx := context.Background()
	logger := klog.Background()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	cm, _ := movesConfigMap(t)
	web := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	db := balance.Workload{Namespace: "default", Kind: "StatefulSet", Name: "db"}

	old := balance.Deps{Store: balance.NewStore(), Persist: cm}
	s := old.Store
	s.Lock()
	old.Recall(ctx, logger)
	s.Remember(web, "web-1", "a", "b", t0, balance.NodeLoad{usage.Memory: 5}, balance.NodeLoad{usage.Memory: 6})
	s.Remember(db, "db-0", "a", "c", t0.Add(time.Minute), balance.NodeLoad{usage.Memory: 10}, balance.NodeLoad{usage.Memory: 12})
	cache := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "cache"}
	s.RememberCooling(cache, "cache-1", "d", "e", t0.Add(30*time.Second), balance.NodeLoad{usage.CPU: 10}, nil)
	api := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "api"}
	s.RememberPull(api, "api-1", "c", "f", t0.Add(90*time.Second), balance.NodeLoad{usage.CPU: 2}, nil)
	back := balancetest.Pod("web-back", "a", "web", 40)
	back.CreationTimestamp = metav1.NewTime(t0.Add(2 * time.Minute))
	back.UID = "web-back"
	s.Follow([]string{"a", "b", "c"}, func(node string) []*v1.Pod {
		if node == "a" {
			return []*v1.Pod{back}
		}
		return nil
	})
	old.Keep(ctx, logger)
	s.Unlock()

	// The successor starts empty.
	next := balance.Deps{Store: balance.NewStore(), Persist: cm}
	next.Store.Lock()
	defer next.Store.Unlock()
	next.Recall(ctx, logger)
	now := t0.Add(5 * time.Minute)
	for _, q := range []struct {
		name string
		got  bool
		want bool
	}{
		{"web moved onto b", next.Store.MovedOnto(web, "b", time.Time{}, now, 10*time.Minute), true},
		{"web moved off a", next.Store.MovedOff(web, "a", now, 10*time.Minute), true},
		{"web bounced back to a", next.Store.Bounced(web, "a", now, 10*time.Minute), true},
		{"db moved onto c", next.Store.MovedOnto(db, "c", time.Time{}, now, 10*time.Minute), true},
		{"db-0 evicted", next.Store.Evicted("db-0"), true},
		{"f pulling", next.Store.Pulling("f", now, 10*time.Minute), true},
		{"b pulling", next.Store.Pulling("b", now, 10*time.Minute), false},
	} {
		if q.got != q.want {
			t.Errorf("%s: %v, want %v", q.name, q.got, q.want)
		}
	}
	// The cooling move is kept as one: it guards until its source is cool.
	if !next.Store.MovedOff(cache, "d", now, time.Hour) {
		t.Error("the recalled cooling move does not guard its source")
	}
	next.Store.SetCool(map[string]balance.NodeLoad{"d": {usage.CPU: 5}}, balance.ResourceThresholds{usage.CPU: 50}, nil)
	if next.Store.MovedOff(cache, "d", now, time.Hour) {
		t.Error("the recalled cooling move lost that it was one: it still guards a source that is cool again")
	}
	next.Store.SetCool(nil, nil, nil)
	// The replacement that landed back was taken by the web move: it
	// guards where it runs (a), and the db move expected on c.
	if got := next.Store.InFlight("c", now, 10*time.Minute, nil); got[usage.Memory] <= 0 {
		t.Errorf("in flight on c = %v, want db-0's share on its way", got)
	}
}

// Keep writes only what changed; a conflict is merged at the next Recall,
// so that two replicas that both moved pods lose neither's moves.
func TestKeepWritesChangesAndMergesConflicts(t *testing.T) {
	ctx := context.Background()
	logger := klog.Background()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	cm, client := movesConfigMap(t)
	updates := 0
	// The fake clientset keeps resource versions as given; the API server
	// moves them on with every write.
	client.PrependReactor("update", "configmaps", func(action core.Action) (bool, runtime.Object, error) {
		updates++
		cm := action.(core.UpdateAction).GetObject().(*v1.ConfigMap)
		rv, _ := strconv.Atoi(cm.ResourceVersion)
		cm.ResourceVersion = strconv.Itoa(rv + 1)
		return false, nil, nil
	})
	a := balance.Deps{Store: balance.NewStore(), Persist: cm}
	b := balance.Deps{Store: balance.NewStore(), Persist: cm}
	w := func(name string) balance.Workload {
		return balance.Workload{Namespace: "apps", Kind: "ReplicaSet", Name: name}
	}

	cycle := func(d balance.Deps, remember func(*balance.Store)) {
		d.Store.Lock()
		defer d.Store.Unlock()
		d.Recall(ctx, logger)
		if remember != nil {
			remember(d.Store)
		}
		d.Keep(ctx, logger)
	}
	cycle(a, nil)
	cycle(b, nil)
	if updates != 0 {
		t.Fatalf("%d writes with nothing to keep", updates)
	}
	cycle(a, func(s *balance.Store) { s.Remember(w("web"), "web-1", "a", "b", t0, nil, nil) })
	// b last read before a wrote: its write conflicts and is not lost.
	b.Store.Lock()
	b.Store.Remember(w("api"), "api-1", "c", "b", t0.Add(time.Minute), nil, nil)
	b.Keep(ctx, logger)
	b.Store.Unlock()
	cycle(b, nil)
	kept := readMoves(t, client)
	if len(kept) != 2 {
		t.Fatalf("kept %v, want both replicas' moves", kept)
	}
	before := updates
	cycle(b, nil)
	cycle(a, nil)
	if updates != before {
		t.Errorf("%d writes once every replica holds the same moves", updates-before)
	}
	a.Store.Lock()
	if !a.Store.MovedOff(w("api"), "c", t0.Add(2*time.Minute), time.Hour) {
		t.Error("a does not know b's move after reading the merged moves")
	}
	a.Store.Unlock()
}

// At most the newest 1000 moves are kept.
func TestKeptMovesAreBounded(t *testing.T) {
	ctx := context.Background()
	logger := klog.Background()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	cm, client := movesConfigMap(t)
	d := balance.Deps{Store: balance.NewStore(), Persist: cm}
	d.Store.Lock()
	defer d.Store.Unlock()
	d.Recall(ctx, logger)
	for i := range 1005 {
		d.Store.Remember(balance.Workload{Namespace: "apps", Kind: "ReplicaSet", Name: fmt.Sprint("w", i)}, types.UID(fmt.Sprint("p", i)),
			"a", "b", t0.Add(time.Duration(i)*time.Second), nil, nil)
	}
	d.Keep(ctx, logger)
	kept := readMoves(t, client)
	if len(kept) != 1000 || kept[0].Pod != "p5" {
		t.Errorf("kept %d moves from %v, want the newest 1000 from p5", len(kept), kept[0].Pod)
	}
}

type keptMove struct {
	Pod types.UID `json:"pod"`
}

func readMoves(t *testing.T, client *fake.Clientset) []keptMove {
	t.Helper()
	cm, err := client.CoreV1().ConfigMaps("ballast-system").Get(context.Background(), "moves", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Moves []keptMove `json:"moves"`
	}
	if err := json.Unmarshal([]byte(cm.Data[moves.Key]), &out); err != nil {
		t.Fatalf("ConfigMap data %q: %v", cm.Data[moves.Key], err)
	}
	return out.Moves
}

// A kept move explains itself to whoever reads it (`ballast explain`): why
// it was made, both nodes' usage then and what it was expected to make of
// them, where the replacement ran and the source's usage once it had.
func TestKeptMovesExplainThemselves(t *testing.T) {
	ctx := context.Background()
	logger := klog.Background()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	cm, client := movesConfigMap(t)
	web := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	d := balance.Deps{Store: balance.NewStore(), Persist: cm}
	s := d.Store
	s.Lock()
	d.Recall(ctx, logger)
	s.RememberCooling(web, "web-1", "a", "b", t0, balance.NodeLoad{usage.Memory: 5}, balance.NodeLoad{usage.Memory: 4})
	s.Note("web-1", "memory over its high threshold", balance.NodeLoad{usage.Memory: 93}, balance.NodeLoad{usage.Memory: 40})
	landed := balancetest.Pod("web-2", "c", "web", 40)
	landed.CreationTimestamp = metav1.NewTime(t0.Add(time.Minute))
	landed.UID = "web-2"
	s.Follow([]string{"a", "b", "c"}, func(node string) []*v1.Pod {
		if node == "c" {
			return []*v1.Pod{landed}
		}
		return nil
	})
	s.SetCool(map[string]balance.NodeLoad{"a": {usage.Memory: 87}}, nil, nil)
	d.Keep(ctx, logger)
	s.Unlock()

	cmap, err := client.CoreV1().ConfigMaps("ballast-system").Get(ctx, "moves", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := balance.DecodeMoves([]byte(cmap.Data[moves.Key]))
	if err != nil || len(decoded) != 1 {
		t.Fatalf("moves %+v, %v; want one", decoded, err)
	}
	m := decoded[0]
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"why", m.Why, "memory over its high threshold"},
		{"expected destination", m.Destination, "b"},
		{"landed on", m.LandedOn, "c"},
		{"source usage then", m.SourceUsage[usage.Memory], 93.0},
		{"source expected after", m.ExpectedSource[usage.Memory], 88.0},
		{"destination expected after", m.ExpectedDestination[usage.Memory], 44.0},
		{"source measured after", m.SourceAfter[usage.Memory], 87.0},
		{"cooling", m.Cooling, true},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}

// A moves ConfigMap this process cannot read is written over with what it
// remembers, with a Warning event naming it, once: later saves go on.
// Before, every later save conflicted and nothing said why.
func TestUnreadableMovesAreWrittenOver(t *testing.T) {
	ctx := context.Background()
	logger := klog.Background()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	cm, client := movesConfigMap(t)
	bumpVersions(client)
	recorder := events.NewFakeRecorder(10)
	d := balance.Deps{Store: balance.NewStore(), Persist: cm, Events: recorder}
	web := balance.Workload{Namespace: "apps", Kind: "ReplicaSet", Name: "web"}
	cycle := func(remember func(*balance.Store)) {
		d.Store.Lock()
		defer d.Store.Unlock()
		d.Recall(ctx, logger)
		if remember != nil {
			remember(d.Store)
		}
		d.Keep(ctx, logger)
	}
	cycle(func(s *balance.Store) { s.Remember(web, "web-1", "a", "b", t0, nil, nil) })

	// Someone writes what the descheduler cannot read.
	corrupt(t, client, "{moves: [")
	cycle(nil)
	if kept := readMoves(t, client); len(kept) != 1 || kept[0].Pod != "web-1" {
		t.Errorf("kept %v after the repair, want web-1's move", kept)
	}
	wantEvents(t, recorder, "Warning MovesUnreadable ConfigMap ballast-system/moves: unreadable")
	// Saves go on.
	cycle(func(s *balance.Store) { s.Remember(web, "web-2", "a", "c", t0.Add(time.Minute), nil, nil) })
	if kept := readMoves(t, client); len(kept) != 2 {
		t.Errorf("kept %v, want both moves", kept)
	}
	// Unreadable again, the repair conflicting once: one warning.
	corrupt(t, client, "not json")
	d.Store.Lock()
	d.Recall(ctx, logger)
	d.Store.Unlock()
	corrupt(t, client, "still not json")
	cycle(nil)
	cycle(nil)
	if kept := readMoves(t, client); len(kept) != 2 {
		t.Errorf("kept %v, want both moves", kept)
	}
	wantEvents(t, recorder, "Warning MovesUnreadable ConfigMap ballast-system/moves: unreadable")
}

// A deleted moves ConfigMap is created again, with what this process
// remembers and the labels and annotations it had (by which an uninstall
// finds it), and a Warning event. Before, it was gone for good.
func TestDeletedMovesAreCreatedAgain(t *testing.T) {
	ctx := context.Background()
	logger := klog.Background()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	chart := map[string]string{"app.kubernetes.io/managed-by": "Helm"}
	owner := map[string]string{"meta.helm.sh/release-name": "ballast"}
	client := fake.NewClientset(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "moves", Namespace: "ballast-system", ResourceVersion: "1",
		Labels: chart, Annotations: owner}})
	bumpVersions(client)
	recorder := events.NewFakeRecorder(10)
	d := balance.Deps{Store: balance.NewStore(), Persist: balance.NewMovesConfigMap(client, "ballast-system", "moves"), Events: recorder}
	web := balance.Workload{Namespace: "apps", Kind: "ReplicaSet", Name: "web"}
	cycle := func(remember func(*balance.Store)) {
		d.Store.Lock()
		defer d.Store.Unlock()
		d.Recall(ctx, logger)
		if remember != nil {
			remember(d.Store)
		}
		d.Keep(ctx, logger)
	}
	cycle(func(s *balance.Store) { s.Remember(web, "web-1", "a", "b", t0, nil, nil) })
	if err := client.CoreV1().ConfigMaps("ballast-system").Delete(ctx, "moves", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cycle(nil)
	got, err := client.CoreV1().ConfigMaps("ballast-system").Get(ctx, "moves", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("not created again: %v", err)
	}
	if got.Labels["app.kubernetes.io/managed-by"] != "Helm" || got.Annotations["meta.helm.sh/release-name"] != "ballast" {
		t.Errorf("created again with labels %v, annotations %v; want the chart's", got.Labels, got.Annotations)
	}
	if kept := readMoves(t, client); len(kept) != 1 || kept[0].Pod != "web-1" {
		t.Errorf("kept %v, want web-1's move", kept)
	}
	wantEvents(t, recorder, "Warning MovesMissing ConfigMap ballast-system/moves: none kept")
	cycle(func(s *balance.Store) { s.Remember(web, "web-2", "a", "c", t0.Add(time.Minute), nil, nil) })
	if kept := readMoves(t, client); len(kept) != 2 {
		t.Errorf("kept %v, want both moves", kept)
	}
	wantEvents(t, recorder)
}

// bumpVersions moves a ConfigMap's resource version on with every write, as
// the API server does; the fake clientset keeps them as given.
func bumpVersions(client *fake.Clientset) {
	next := 100
	bump := func(action core.Action) (bool, runtime.Object, error) {
		next++
		obj := action.(interface{ GetObject() runtime.Object }).GetObject().(*v1.ConfigMap)
		obj.ResourceVersion = strconv.Itoa(next)
		return false, nil, nil
	}
	client.PrependReactor("update", "configmaps", bump)
	client.PrependReactor("create", "configmaps", bump)
}

// corrupt writes data into the moves as someone else than the descheduler.
func corrupt(t *testing.T, client *fake.Clientset, data string) {
	t.Helper()
	cms := client.CoreV1().ConfigMaps("ballast-system")
	cm, err := cms.Get(context.Background(), "moves", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{moves.Key: data}
	if _, err := cms.Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// wantEvents checks that the recorder holds an event beginning with each of
// prefixes, and no other.
func wantEvents(t *testing.T, recorder *events.FakeRecorder, prefixes ...string) {
	t.Helper()
	var got []string
	for len(recorder.Events) > 0 {
		got = append(got, <-recorder.Events)
	}
	if len(got) != len(prefixes) {
		t.Errorf("events %q, want %d", got, len(prefixes))
		return
	}
	for i, p := range prefixes {
		if !strings.HasPrefix(got[i], p) {
			t.Errorf("event %q, want one beginning %q", got[i], p)
		}
	}
}
