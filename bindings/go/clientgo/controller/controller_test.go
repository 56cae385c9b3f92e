// SPDX-License-Identifier: GPL-2.0

//go:build kwqclientgo

package controller

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"kwq.dev/kwq"
)

func TestMain(m *testing.M) {
	if q := os.Getenv("KWQ_CGO_WORKER"); q != "" {
		os.Exit(worker(q, os.Getenv("KWQ_CGO_HANG")))
	}
	os.Exit(m.Run())
}

// patience bounds every wait of a test that works, even under emulation.
const patience = 120 * time.Second

func requireDevice(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/kwq"); err != nil {
		if os.Getenv("KWQ_GO_REQUIRE_DEVICE") != "" {
			t.Fatalf("KWQ_GO_REQUIRE_DEVICE is set but: %v", err)
		}
		t.Skip("no /dev/kwq (load kwq.ko)")
	}
}

// newKwq makes a fresh kwq rate-limiting queue with client-go's default
// controller limiter, destroyed when the test ends.
func newKwq(t *testing.T, tag string) *kwq.Queue {
	t.Helper()
	requireDevice(t)
	q, err := kwq.NewRateLimitingQueue(fmt.Sprintf("cgo-%s-%d", tag, os.Getpid()),
		kwq.WithRateLimiter(kwq.DefaultControllerRateLimiter()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		q.Destroy()
		q.Close()
	})
	return q
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(patience); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// settled waits until the informer's store agrees with want ("gen=N" or
// "gone" per key): the fake clientset's watch buffers 100 events and
// panics beyond, so a test makes no more than that before it waits.
func settled(t *testing.T, store cache.Store, want map[string]string) {
	t.Helper()
	eventually(t, "the informer to catch up", func() bool {
		for k, w := range want {
			obj, exists, err := store.GetByKey(k)
			switch {
			case err != nil:
				return false
			case !exists:
				if w != "gone" {
					return false
				}
			case w != "gen="+obj.(*v1.Pod).Labels["gen"]:
				return false
			}
		}
		return true
	})
}

// record is what one controller's Sync saw, per key.
type record struct {
	mu       sync.Mutex
	syncs    map[string][]time.Time // every attempt's start
	last     map[string]string      // what the last attempt saw: "gen=N" or "gone"
	failures map[string]int
	failN    func(key string) int // how many first attempts of key fail
}

func newRecord(failN func(string) int) *record {
	return &record{syncs: map[string][]time.Time{}, last: map[string]string{},
		failures: map[string]int{}, failN: failN}
}

func (r *record) sync(key string, pod *v1.Pod) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncs[key] = append(r.syncs[key], time.Now())
	if pod == nil {
		r.last[key] = "gone"
	} else {
		r.last[key] = "gen=" + pod.Labels["gen"]
	}
	if r.failures[key] < r.failN(key) {
		r.failures[key]++
		return fmt.Errorf("%s: planned failure %d", key, r.failures[key])
	}
	return nil
}

func (r *record) lastSeen(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[key]
}

func (r *record) attempts(key string) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.syncs[key]...)
}

func pod(ns, name, gen string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{"gen": gen}}}
}

// client-go's queue and kwq's, each under the example controller, fed by
// one shared informer over the fake clientset: Pods created, updated and
// deleted reach both; each key's last reconcile sees its final state on
// both; the keys that fail at first are retried with the limiter's
// backoff (5 ms, 10 ms, 20 ms ...) and succeed; the key that always
// fails is tried 1 + MaxRetries times and dropped, on both.
func TestBesideClientGo(t *testing.T) {
	kq := newKwq(t, "beside")
	cq := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "client-go"})
	failN := func(key string) int {
		switch {
		case strings.HasPrefix(key, "retry/"):
			return 3
		case key == "drop/always":
			return 1 << 30
		}
		return 0
	}
	queues := []struct {
		name string
		q    workqueue.TypedRateLimitingInterface[string]
	}{{"client-go", cq}, {"kwq", kq}}

	client := fake.NewSimpleClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	podInformer := factory.Core().V1().Pods()
	informer := podInformer.Informer()
	ctls := make([]*Controller, len(queues))
	recs := make([]*record, len(queues))
	for i, q := range queues {
		recs[i] = newRecord(failN)
		ctls[i] = New(q.q, informer.GetIndexer(), recs[i].sync)
		if _, err := informer.AddEventHandler(ctls[i].Handler()); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	defer func() {
		close(stop)
		for _, q := range queues {
			q.q.ShutDown()
		}
	}()
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, informer.HasSynced) {
		t.Fatal("the informer's cache did not sync")
	}
	for _, c := range ctls {
		c.RunWorkers(4, stop)
	}

	ctx := context.Background()
	pods := client.CoreV1().Pods
	want := map[string]string{}
	// apply does op ("create", "update" to gen=2, "delete") to Pod name
	// of ns and records what its key's last reconcile is to see.
	apply := func(op, ns, name string) {
		t.Helper()
		var err error
		switch op {
		case "create":
			_, err = pods(ns).Create(ctx, pod(ns, name, "1"), metav1.CreateOptions{})
			want[ns+"/"+name] = "gen=1"
		case "update":
			_, err = pods(ns).Update(ctx, pod(ns, name, "2"), metav1.UpdateOptions{})
			want[ns+"/"+name] = "gen=2"
		case "delete":
			err = pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
			want[ns+"/"+name] = "gone"
		}
		if err != nil {
			t.Fatalf("%s %s/%s: %v", op, ns, name, err)
		}
	}
	// Every Pod created, every second one updated, every fifth deleted,
	// the informer caught up after each round.
	const n = 60
	for _, round := range []struct {
		op   string
		step int
	}{{"create", 1}, {"update", 2}, {"delete", 5}} {
		for i := 0; i < n; i += round.step {
			apply(round.op, fmt.Sprintf("ns%d", i%4), fmt.Sprintf("pod-%02d", i))
		}
		settled(t, informer.GetStore(), want)
	}
	for i := 0; i < 4; i++ {
		apply("create", "retry", fmt.Sprintf("pod-%d", i))
	}
	apply("create", "drop", "always")

	for i, q := range queues {
		c, r := ctls[i], recs[i]
		eventually(t, q.name+"'s controller to see every key's final state", func() bool {
			for k, w := range want {
				if r.lastSeen(k) != w {
					return false
				}
			}
			return c.Dropped("drop/always") == 1
		})
	}
	for i, q := range queues {
		r := recs[i]
		total := 0
		for k := range want {
			total += len(r.attempts(k))
		}
		t.Logf("%s: %d reconciles of %d keys", q.name, total, len(want))
		for k := range want {
			if failN(k) != 3 {
				continue
			}
			at := r.attempts(k)
			if len(at) != 4 {
				t.Errorf("%s: %s was reconciled %d times, want 3 failures and a success", q.name, k, len(at))
				continue
			}
			// The exponential limiter's 5 ms, 10 ms, 20 ms.
			for j := 1; j < len(at); j++ {
				min := 5 * time.Millisecond << (j - 1)
				if gap := at[j].Sub(at[j-1]); gap < min {
					t.Errorf("%s: %s retry %d came %v after the failure, before its backoff %v",
						q.name, k, j, gap, min)
				}
			}
			if nr := q.q.NumRequeues(k); nr != 0 {
				t.Errorf("%s: %s has %d requeues after its success, want 0 (Forget)", q.name, k, nr)
			}
		}
		if at := r.attempts("drop/always"); len(at) != 1+MaxRetries {
			t.Errorf("%s: drop/always was tried %d times, want %d", q.name, len(at), 1+MaxRetries)
		}
	}
	// Both saw the same final state of every key (checked above against
	// want) and the same failures.
	for k := range want {
		if a, b := recs[0].failures[k], recs[1].failures[k]; a != b {
			t.Errorf("%s failed %d times on client-go's queue, %d on kwq's", k, a, b)
		}
	}
	// The last Done follows the last reconcile: then nothing is left.
	eventually(t, "kwq's queue to hold no key", func() bool {
		st, err := kq.Stats()
		return err == nil && st.Items == 0
	})
}

// worker is a controller process on the shared queue name: it reconciles
// keys (no informer: its keys come through the queue), printing
// "BEGIN key" when it takes a key and "DONE key" when its reconcile has
// done its work, before Done; on the key hang it blocks until killed. It
// exits 0 when the queue shuts down.
func worker(name, hang string) int {
	q, err := kwq.Open(name)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var mu sync.Mutex
	say := func(format string, a ...interface{}) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", a...)
	}
	var wq workqueue.TypedRateLimitingInterface[string] = q
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, quit := wq.Get()
				if quit {
					return
				}
				say("BEGIN %s", key)
				if key == hang {
					select {}
				}
				time.Sleep(time.Millisecond)
				say("DONE %s", key)
				wq.Forget(key)
				wq.Done(key)
			}
		}()
	}
	wg.Wait()
	return 0
}

type proc struct {
	cmd   *exec.Cmd
	lines chan string
}

func startWorker(t *testing.T, queue, hang string) *proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "KWQ_CGO_WORKER="+queue, "KWQ_CGO_HANG="+hang)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 1024)}
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			p.lines <- s.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return p
}

// Two controller processes share one kwq queue that an informer in this
// process feeds from the fake clientset; one is SIGKILLed in the middle
// of a reconcile (and holding other keys, perhaps): every key is still
// reconciled to its end, the interrupted one by the other process.
func TestSharedQueueKilledController(t *testing.T) {
	q := newKwq(t, "shared")
	client := fake.NewSimpleClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Core().V1().Pods().Informer()
	// The informer side of the controller: keys into the shared queue.
	if _, err := informer.AddEventHandler(New(q, informer.GetIndexer(), nil).Handler()); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	if !cache.WaitForCacheSync(stop, informer.HasSynced) {
		t.Fatal("the informer's cache did not sync")
	}
	ctx := context.Background()
	created := map[string]string{}
	create := func(name string) {
		if _, err := client.CoreV1().Pods("ns").Create(ctx, pod("ns", name, "1"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		created["ns/"+name] = "gen=1"
		if len(created)%50 == 0 {
			settled(t, informer.GetStore(), created)
		}
	}

	const victim = "ns/victim"
	const n = 200
	create("victim")
	a := startWorker(t, q.Name(), victim)
	done := map[string]string{}
	begunA := map[string]bool{}
	parse := func(l, who string) {
		if k, ok := cutPrefix(l, "DONE "); ok {
			done[k] += who
		} else if k, ok := cutPrefix(l, "BEGIN "); ok && who == "A" {
			begunA[k] = true
		}
	}
	// read takes p's lines until cond holds.
	read := func(p *proc, who string, cond func() bool) {
		t.Helper()
		timeout := time.After(patience)
		for !cond() {
			select {
			case l, ok := <-p.lines:
				if !ok {
					t.Fatalf("worker %s exited early", who)
				}
				parse(l, who)
			case <-timeout:
				var missing []string
				for i := 0; i < n && len(missing) < 10; i++ {
					if k := fmt.Sprintf("ns/pod-%03d", i); done[k] == "" {
						missing = append(missing, k)
					}
				}
				t.Fatalf("timed out reading worker %s: %d keys done; not done: %v (victim: %q)",
					who, len(done), missing, done[victim])
			}
		}
	}
	read(a, "A", func() bool { return begunA[victim] })
	for i := 0; i < n; i++ {
		create(fmt.Sprintf("pod-%03d", i))
	}
	// A reconciles with its other worker meanwhile: kill it once it has
	// finished some keys, in the middle of the victim's reconcile.
	read(a, "A", func() bool { return len(done) >= 20 })
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	for l := range a.lines {
		parse(l, "A")
	}
	b := startWorker(t, q.Name(), "")
	read(b, "B", func() bool { return len(done) == n+1 })
	if err := q.ShutDownWithError(); err != nil {
		t.Fatal(err)
	}
	for l := range b.lines {
		parse(l, "B")
	}
	if err := b.cmd.Wait(); err != nil {
		t.Errorf("worker B: %v", err)
	}
	// At least once: a key A had taken when it died may have done its
	// work in A and again in B (A died before its Done); no other key
	// runs twice.
	var twice []string
	for k, who := range done {
		if len(who) != 1 && !(who == "AB" && begunA[k]) {
			twice = append(twice, k+" by "+who)
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		t.Errorf("keys reconciled to their end more than once: %v", twice)
	}
	if done[victim] != "B" {
		t.Errorf("the interrupted key %s was finished by %q, want B", victim, done[victim])
	}
	st, err := q.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.LeaseRequeues == 0 {
		t.Errorf("no key went back when A died (lease requeues 0)")
	}
	t.Logf("A finished %d keys before it was killed; lease requeues %d",
		strings.Count(strings.Join(valuesOf(done), ""), "A"), st.LeaseRequeues)
}

func cutPrefix(s, p string) (string, bool) {
	if strings.HasPrefix(s, p) {
		return s[len(p):], true
	}
	return s, false
}

func valuesOf(m map[string]string) []string {
	var v []string
	for _, s := range m {
		v = append(v, s)
	}
	return v
}
