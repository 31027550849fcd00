// Command clusterlong is the long form of the cluster test
// (scripts/cluster-long.sh): a real etcd, a git host (git daemon, one
// bare repository per user behind a pre-receive hook that refuses and
// logs any non-fast-forward update), Debian's nginx with the recipe of
// docs/many-hosts.md in front, three serve nodes with separate ROOTs
// and a fourth joining mid-run. Clients write through nginx over HTTP
// (chat + bye) and MCP (create), each write naming a counter; meanwhile
// -pauses trials SIGSTOP one node (serve and its workers) past its
// lease, wait until another node serves one of its users, and resume
// it. At the end every acknowledged write must be in the git host and
// no non-fast-forward push may have been tried. It prints requests
// served, writes lost, forced pushes, forward hop, take-over time and
// replication lag figures. Needs root (workers run as the users' uids).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// options are the run's knobs.
type options struct {
	mindmount, work string
	users, pauses   int
	writers         int
	ttl             time.Duration
	syncRep         bool
	uidBase         int
}

func main() {
	var o options
	flag.StringVar(&o.mindmount, "mindmount", "", "the mindmount binary")
	flag.StringVar(&o.work, "work", "", "an empty folder for the run (0755)")
	flag.IntVar(&o.users, "users", 300, "users")
	flag.IntVar(&o.pauses, "pauses", 100, "pause trials (SIGSTOP past the lease, SIGCONT)")
	flag.IntVar(&o.writers, "writers", 6, "concurrent clients")
	flag.DurationVar(&o.ttl, "ttl", 2*time.Second, "the nodes' --cluster-ttl")
	flag.BoolVar(&o.syncRep, "sync-replication", true, "run the nodes with --sync-replication")
	flag.IntVar(&o.uidBase, "uid-base", 24000, "user i runs as uid uid-base+i")
	flag.Parse()
	if o.mindmount == "" || o.work == "" {
		log.Fatal("-mindmount and -work are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := &rig{o: o, procs: &procs{}}
	defer r.procs.killAll()
	if err := r.run(ctx); err != nil {
		r.procs.killAll()
		log.Fatal(err)
	}
}

// run sets the cluster up, runs the load and the trials, and reports.
func (r *rig) run(ctx context.Context) error {
	start := time.Now()
	if err := r.setUp(ctx); err != nil {
		return err
	}
	log.Printf("set up in %s: %d users, nodes a b c, nginx at %s", time.Since(start).Round(time.Second), r.o.users, r.nginx)
	res := r.exercise(ctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	res.check(r)
	res.print(r.o, time.Since(start))
	if res.lost > 0 || res.forced > 0 {
		return fmt.Errorf("%d writes lost, %d forced pushes (logs in %s)", res.lost, res.forced, filepath.Join(r.o.work))
	}
	return nil
}
