// SPDX-License-Identifier: GPL-2.0

package kwq

// Several processes on one queue: the test binary runs itself as a worker
// (TestMain sees KWQ_GO_HELPER).

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if role := os.Getenv("KWQ_GO_HELPER"); role != "" {
		os.Exit(helper(role, os.Getenv("KWQ_GO_QUEUE")))
	}
	os.Exit(m.Run())
}

// helper is a worker process: "consume" gets and dones keys until the
// queue shuts down, printing each; "hold" and "hold-unleased" take one key,
// print it, and wait to be killed.
func helper(role, name string) int {
	var opts []Option
	if role == "hold-unleased" {
		opts = append(opts, WithUnleasedGets())
	}
	q, err := Open(name, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	switch role {
	case "consume":
		for {
			k, quit := q.Get()
			if quit {
				return 0
			}
			fmt.Printf("GOT %s\n", k)
			if _, err := q.DoneWithResult(k); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	case "hold", "hold-unleased":
		k, quit := q.Get()
		if quit {
			return 1
		}
		fmt.Printf("GOT %s\n", k)
		time.Sleep(time.Hour)
	}
	return 2
}

func startHelper(t *testing.T, role, name string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "KWQ_GO_HELPER="+role, "KWQ_GO_QUEUE="+name)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, bufio.NewReader(out)
}

// Two worker processes and this one share a queue: every key is processed
// exactly once, by one of them.
func TestTwoProcesses(t *testing.T) {
	q := newQueue(t)
	const keys = 300
	cmds := make([]*exec.Cmd, 2)
	outs := make([]*bufio.Reader, 2)
	for i := range cmds {
		cmds[i], outs[i] = startHelper(t, "consume", q.Name())
	}
	var want []string
	for i := 0; i < keys; i++ {
		k := fmt.Sprintf("ns/proc-%03d", i)
		want = append(want, k)
		q.Add(k)
	}
	eventually(t, "the workers to process every key", func() bool {
		st := mustStats(t, q)
		return st.Dones == keys && st.Items == 0
	})
	q.ShutDown()
	var got []string
	counts := make([]int, 2)
	for i, cmd := range cmds {
		b, err := io.ReadAll(outs[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				got = append(got, strings.TrimPrefix(l, "GOT "))
				counts[i]++
			}
		}
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the workers processed %d keys (%v each), want each of %d once", len(got), counts, keys)
	}
	t.Logf("keys per worker process: %v", counts)
}

// A worker process SIGKILLed while it holds a key: the key goes back to the
// head of the queue and another worker gets it.
func TestKilledWorkerKeyComesBack(t *testing.T) {
	q := newQueue(t)
	q.Add("ns/held")
	q.Add("ns/next")
	cmd, out := startHelper(t, "hold", q.Name())
	line, err := out.ReadString('\n')
	if err != nil || line != "GOT ns/held\n" {
		t.Fatalf("worker said %q, %v", line, err)
	}
	if st := mustStats(t, q); st.Processing != 1 || st.Queued != 1 {
		t.Fatalf("processing %d queued %d while the worker holds a key", st.Processing, st.Queued)
	}
	// Not ours to end.
	_, err = q.DoneWithResult("ns/held")
	expectErrno(t, "Done of the worker's key", err, syscall.ENOENT)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	eventually(t, "the key to come back", func() bool { return mustStats(t, q).LeaseRequeues == 1 })
	// Back at the head: before ns/next.
	expectGet(t, q, "ns/held")
	expectGet(t, q, "ns/next")
	q.Done("ns/held")
	q.Done("ns/next")
	if st := mustStats(t, q); st.Items != 0 {
		t.Fatalf("items = %d", st.Items)
	}
}

// The same with an unleased get: the key stays processing, and anyone may
// end it.
func TestKilledWorkerUnleased(t *testing.T) {
	q := newQueue(t)
	q.Add("ns/unleased")
	cmd, out := startHelper(t, "hold-unleased", q.Name())
	if line, err := out.ReadString('\n'); err != nil || line != "GOT ns/unleased\n" {
		t.Fatalf("worker said %q, %v", line, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if st := mustStats(t, q); st.Processing != 1 || st.LeaseRequeues != 0 {
		t.Fatalf("processing %d lease_requeues %d after the kill", st.Processing, st.LeaseRequeues)
	}
	if r, err := q.DoneWithResult("ns/unleased"); err != nil || r != Finished {
		t.Fatalf("Done by another process = %v, %v", r, err)
	}
}

// Closing a handle gives its keys back too, and failure counts outlive it.
func TestCloseGivesKeysBack(t *testing.T) {
	q := newQueue(t)
	o, err := Open(q.Name())
	if err != nil {
		t.Fatal(err)
	}
	q.Add("a")
	expectGet(t, o, "a")
	o.AddRateLimited("b")
	o.Close()
	// "b" waits 5 ms for its backoff, or is queued already on a slow machine.
	if st := mustStats(t, q); st.LeaseRequeues != 1 || st.Queued < 1 || st.Queued+st.Waiting != 2 {
		t.Fatalf("lease_requeues %d queued %d waiting %d", st.LeaseRequeues, st.Queued, st.Waiting)
	}
	if n := q.NumRequeues("b"); n != 1 {
		t.Fatalf("NumRequeues(b) = %d after the other handle closed", n)
	}
}
