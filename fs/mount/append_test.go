package mount

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// appendLine appends one line to p the way `echo line >> p` does.
func appendLine(p, line string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// stamp is the n-th distinct use stamp of a side (year 26 through the
// mount, 25 beside it).
func stamp(n, year int) string {
	return fmt.Sprintf("used, %02d.%02d.%02d", n%28+1, n/28+1, year)
}

// Issue 14, defect 5: appends made through the mount and beside it, one
// after the other and at the same time, all land: an append goes to the
// end of the file as the disk has it, whatever size the kernel cached.
func TestAppendsBesideAndThrough(t *testing.T) {
	for _, mode := range []struct {
		name string
		opt  Options
	}{{"no-open", Options{}}, {"open-each-file", Options{OpenEachFile: true}}} {
		t.Run(mode.name, func(t *testing.T) {
			const rel = "user_memory/log.md"
			tm := mountRepo(t, newRepo(t, map[string]string{rel: memoryFile("Log", "A log", "x") + "\n## Access log\n"}), mode.opt)
			var want []string
			// Alternating: each side appends right after the other.
			tm.read(rel) // the kernel caches the size now
			for i := 0; i < 20; i++ {
				if err := appendLine(tm.p(rel), stamp(i, 26)); err != nil {
					t.Fatal(err)
				}
				if err := appendLine(tm.b(rel), stamp(i, 25)); err != nil {
					t.Fatal(err)
				}
				want = append(want, stamp(i, 26), stamp(i, 25))
			}
			// Concurrent: both sides at once.
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for side, year := range map[string]int{tm.p(rel): 26, tm.b(rel): 25} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 20; i < 120; i++ {
						if err := appendLine(side, stamp(i, year)); err != nil {
							errs <- err
							return
						}
					}
				}()
				for i := 20; i < 120; i++ {
					want = append(want, stamp(i, year))
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			disk, err := os.ReadFile(tm.b(rel))
			if err != nil {
				t.Fatal(err)
			}
			lost := 0
			for _, w := range want {
				if n := strings.Count(string(disk), w+"\n"); n != 1 {
					lost++
					if lost < 5 {
						t.Errorf("%q is on disk %d times, want once", w, n)
					}
				}
			}
			if lost > 0 {
				t.Fatalf("%d of %d appends lost or doubled", lost, len(want))
			}
			tm.settle()
			eventually(t, "the mount to show every append", func() bool {
				b, err := os.ReadFile(tm.p(rel))
				return err == nil && string(b) == string(disk)
			})
			if got := tm.git("show", "HEAD:"+rel); got != strings.TrimSpace(string(disk)) {
				t.Errorf("committed content differs from the disk")
			}
			tm.clean()
		})
	}
}
