// cgworkqueue: client-go's side of `kcache-bench workqueue --mode plain|delaying|rate-limited`
// (the workloads are defined in crates/bench/README.md). Built against the client-go that Debian's
// kubernetes 1.20.2 source package vendors; ./build.sh does it. Prints one JSON line with the
// same fields as kcache-bench's workqueue line.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/ioutil"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// The delaying mode's delays cycle over 0, 100 µs, …, 1 ms (adds i gets (i % 11) × 100 µs).
const delaySteps = 11
const delayStep = 100 * time.Microsecond

// The rate-limited mode's limiter: 100 µs doubling per failure, capped at 1 ms.
const limiterBase = 100 * time.Microsecond
const limiterMax = time.Millisecond

// The last item the producer adds, after every other: ready strictly later than any of them.
const sentinel = "sentinel"
const sentinelDelay = limiterMax + time.Microsecond

func peakRSS() int64 {
	b, _ := ioutil.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")), "%d", &kb)
			return kb * 1024
		}
	}
	return 0
}

func main() {
	mode := flag.String("mode", "plain", "plain|delaying|rate-limited")
	adds := flag.Int("adds", 1000000, "total adds")
	keys := flag.Int("keys", 10000, "distinct keys")
	workers := flag.Int("workers", 2, "worker goroutines")
	flag.Parse()
	if *keys < 1 || *adds < 0 || *workers < 1 {
		fmt.Fprintln(os.Stderr, "cgworkqueue: -keys and -workers must be at least 1, -adds at least 0")
		os.Exit(2)
	}
	var limiter workqueue.RateLimiter
	switch *mode {
	case "plain", "delaying":
		limiter = workqueue.NewItemExponentialFailureRateLimiter(0, 0)
	case "rate-limited":
		limiter = workqueue.NewItemExponentialFailureRateLimiter(limiterBase, limiterMax)
	default:
		fmt.Fprintf(os.Stderr, "cgworkqueue: unknown -mode %q (plain, delaying, rate-limited)\n", *mode)
		os.Exit(2)
	}
	names := make([]string, *keys)
	for i := range names {
		names[i] = fmt.Sprintf("default/object-%d", i)
	}
	q := workqueue.NewRateLimitingQueue(limiter)
	sentinelSeen := make(chan struct{})
	var processed int64
	var wg sync.WaitGroup

	start := time.Now()
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				if item == sentinel {
					close(sentinelSeen)
				} else {
					atomic.AddInt64(&processed, 1)
				}
				q.Forget(item)
				q.Done(item)
			}
		}()
	}
	switch *mode {
	case "plain":
		for i := 0; i < *adds; i++ {
			q.Add(names[i%*keys])
		}
	case "delaying":
		for i := 0; i < *adds; i++ {
			q.AddAfter(names[i%*keys], time.Duration(i%delaySteps)*delayStep)
		}
	case "rate-limited":
		for i := 0; i < *adds; i++ {
			q.AddRateLimited(names[i%*keys])
		}
	}
	if *mode != "plain" {
		// Every delayed add is in the queue before the sentinel; once a worker got it, shutting
		// down drops nothing that was added (queued and re-added items are still handed out).
		q.AddAfter(sentinel, sentinelDelay)
		<-sentinelSeen
	}
	q.ShutDown()
	wg.Wait()
	el := time.Since(start).Seconds()

	b, _ := json.Marshal(map[string]interface{}{
		"impl": "client-go-1.20.2", "scenario": "workqueue", "mode": *mode, "adds": *adds,
		"keys": *keys, "workers": *workers, "processed": processed, "seconds": el,
		"adds_per_sec": float64(*adds) / el, "peak_rss_bytes": peakRSS(),
	})
	fmt.Println(string(b))
}
