package httpapi

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
)

// heapProfile, when set, is where BenchmarkFootprint writes one heap
// profile per size (PREFIX-1000.pb.gz, PREFIX-10000.pb.gz), read with
// `go tool pprof -top -inuse_space FILE` (docs/footprint.md).
var heapProfile = flag.String("heapprofile", "", "write BenchmarkFootprint's heap profiles to `PREFIX`-N.pb.gz")

// BenchmarkFootprint measures what one served user holds in the heap after
// its repository is loaded and one chat answered (the recall index built),
// at 1,000 and 10,000 memories: heap-MiB is the live heap after a
// collection, what a worker's RssAnon is mostly made of. Run with:
//
//	go test -run '^$' -bench Footprint -benchtime 1x ./serve/httpapi -heapprofile /tmp/heap
func BenchmarkFootprint(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				footprintOnce(b, n)
			}
		})
	}
}

func footprintOnce(b *testing.B, n int) {
	b.StopTimer()
	base := liveHeap()
	e := newBenchEnv(b, n)
	b.StartTimer()
	resp := e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"does the user like green tea or coffee?","sessionId":"f1"}`)
	if body := readAll(resp); resp.StatusCode != 200 || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		b.Fatalf("%d %s", resp.StatusCode, body)
	}
	b.StopTimer()
	b.ReportMetric(float64(liveHeap()-base)/(1<<20), "heap-MiB")
	if *heapProfile != "" {
		f, err := os.Create(fmt.Sprintf("%s-%d.pb.gz", *heapProfile, n))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
	}
	runtime.KeepAlive(e)
}

// liveHeap is the heap in use after two collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
