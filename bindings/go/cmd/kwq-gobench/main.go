// SPDX-License-Identifier: GPL-2.0

// Command kwq-gobench measures the cost of the Go package over the ioctls,
// for make bench: it prints the lines of bench/kwq_bench.c
//
//	KWQB <name> <value> <unit>
//
// with the same 32-byte keys, so scripts/bench.sh sets each Go figure
// beside its C twin from the same boot.
//
//	kwq-gobench cycle1 N      Add; Get; Done of N keys in one goroutine
//	kwq-gobench cycle1dg N    Add; DoneGet (done + next get in one call)
//	kwq-gobench batch1 B N    AddBatch, GetBatch, DoneBatch of B keys
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"kwq.dev/kwq"
)

func die(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "kwq-gobench: "+format+"\n", a...)
	os.Exit(1)
}

func result(name string, v float64, unit string) {
	fmt.Printf("KWQB %s %.6g %s\n", name, v, unit)
}

func keys(n int) []string {
	k := make([]string, n)
	for i := range k {
		k[i] = fmt.Sprintf("bench/%026d", i)
	}
	return k
}

func num(s string) int {
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 {
		die("not a positive number: %s", s)
	}
	return v
}

func newQueue(what string) *kwq.Queue {
	q, err := kwq.Create(fmt.Sprintf("gobench-%s-%d", what, os.Getpid()))
	if err != nil {
		die("%v", err)
	}
	return q
}

func endQueue(q *kwq.Queue) {
	if err := q.Destroy(); err != nil {
		die("%v", err)
	}
	q.Close()
}

func cycle1(n int) {
	ks := keys(n)
	q := newQueue("c1")
	start := time.Now()
	for _, k := range ks {
		q.Add(k)
		got, quit := q.Get()
		if quit || got != k {
			die("cycle1: got %q, %v", got, quit)
		}
		q.Done(got)
	}
	el := time.Since(start)
	endQueue(q)
	result("go.cycle.1t", float64(el.Nanoseconds())/float64(n), "ns/key")
	result("go.cycle.1t.rate", float64(n)/el.Seconds(), "keys/s")
}

func cycle1dg(n int) {
	ks := keys(n)
	q := newQueue("c1dg")
	start := time.Now()
	var got string
	for i, k := range ks {
		if _, err := q.AddWithResult(k); err != nil {
			die("%v", err)
		}
		var err error
		if i == 0 {
			var quit bool
			if got, quit = q.Get(); quit {
				err = fmt.Errorf("shutdown")
			}
		} else {
			var res kwq.DoneResult
			got, res, err = q.DoneGet(got)
			if err == nil && res != kwq.Finished {
				err = fmt.Errorf("done: %v", res)
			}
		}
		if err != nil || got != k {
			die("cycle1dg: %q, %v", got, err)
		}
	}
	if r, err := q.DoneWithResult(got); err != nil || r != kwq.Finished {
		die("cycle1dg: last done: %v", err)
	}
	el := time.Since(start)
	endQueue(q)
	result("go.cycle.1t.dg", float64(el.Nanoseconds())/float64(n), "ns/key")
}

func batch1(b, n int) {
	ks := keys(n)
	q := newQueue("b1")
	ctx := context.Background()
	start := time.Now()
	for i := 0; i < n; i += b {
		m := b
		if n-i < m {
			m = n - i
		}
		if _, err := q.AddBatch(ks[i : i+m]); err != nil {
			die("add batch: %v", err)
		}
		var got []string
		for len(got) < m {
			g, err := q.GetBatch(ctx, m-len(got))
			if err != nil {
				die("get batch: %v", err)
			}
			got = append(got, g...)
		}
		if _, err := q.DoneBatch(got); err != nil {
			die("done batch: %v", err)
		}
	}
	el := time.Since(start)
	endQueue(q)
	result(fmt.Sprintf("go.batch.1t.%d", b), float64(n)/el.Seconds(), "keys/s")
}

func main() {
	a := os.Args[1:]
	if len(a) < 2 {
		die("usage: kwq-gobench cycle1 N | cycle1dg N | batch1 B N")
	}
	// One OS thread runs the loop, as in the C program.
	runtime.LockOSThread()
	switch {
	case a[0] == "cycle1":
		cycle1(num(a[1]))
	case a[0] == "cycle1dg":
		cycle1dg(num(a[1]))
	case a[0] == "batch1" && len(a) == 3:
		b := num(a[1])
		if b > kwq.BatchMax {
			die("batch size 1..%d", kwq.BatchMax)
		}
		batch1(b, num(a[2]))
	default:
		die("unknown command %q", a[0])
	}
}
