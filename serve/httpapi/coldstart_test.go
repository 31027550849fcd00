package httpapi

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkColdStart measures, in process, what a user's worker does from
// its start to its first answered chat at 1,000 and 10,000 memories:
//
//	load-ms   open the repository, scan it, start the tracker, build the
//	          recall index and count the tree (what "ready" waits for)
//	first-ms  the first chat after that
//	warm-ms   the median of the next 10 chats
//
// and first/warm. With -coldprofile PREFIX each phase writes its own CPU
// profile of the whole process (every goroutine: the handlers, the
// tracker, the background history index), PREFIX-N-PHASE.pb.gz:
//
//	go test -run '^$' -bench ColdStart -benchtime 1x ./serve/httpapi -coldprofile /tmp/cold
//	go tool pprof -top -cum /tmp/cold-10000-first.pb.gz
var coldProfile = flag.String("coldprofile", "", "write BenchmarkColdStart's CPU profiles per phase to `PREFIX`-N-PHASE.pb.gz")

func BenchmarkColdStart(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var load, first, warm time.Duration
			for i := 0; i < b.N; i++ {
				l, f, w := coldStartOnce(b, n)
				load, first, warm = load+l, first+f, warm+w
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
			b.ReportMetric(ms(load), "load-ms")
			b.ReportMetric(ms(first), "first-ms")
			b.ReportMetric(ms(warm), "warm-ms")
			b.ReportMetric(float64(first)/float64(warm), "first/warm")
		})
	}
}

func coldStartOnce(b *testing.B, n int) (load, first, warm time.Duration) {
	b.StopTimer()
	e := newBenchEnv(b, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.StartTimer()
	phase := func(name string, fn func()) time.Duration {
		if *coldProfile != "" {
			f, err := os.Create(fmt.Sprintf("%s-%d-%s.pb.gz", *coldProfile, n, name))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				b.Fatal(err)
			}
			defer pprof.StopCPUProfile()
		}
		t0 := time.Now()
		fn()
		return time.Since(t0)
	}
	load = phase("load", func() {
		_, release, err := e.h.Acquire(ctx, "alice")
		if err != nil {
			b.Fatal(err)
		}
		release()
	})
	chat := func(i int) {
		resp := e.do("POST", "/v1/chat", adminKey, fmt.Sprintf(`{"userId":"alice","message":"does the user like green tea or coffee %d?","sessionId":"c%d"}`, i, i))
		if body := readAll(resp); resp.StatusCode != 200 || !strings.HasSuffix(body, "data: [DONE]\n\n") {
			b.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
	first = phase("first", func() { chat(0) })
	var ws []time.Duration
	phase("warm", func() {
		for i := 1; i <= 10; i++ {
			t0 := time.Now()
			chat(i)
			ws = append(ws, time.Since(t0))
		}
	})
	b.StopTimer()
	slices.Sort(ws)
	return load, first, ws[len(ws)/2]
}
