package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mindmount/mindmount/serve/cluster"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// clusterCmdOptions are mindmount cluster's flags.
type clusterCmdOptions struct {
	endpoints string
	json      bool
}

func (o *clusterCmdOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.endpoints, "cluster", "http://127.0.0.1:2379", "the cluster's etcd at `URL` (comma-separated for several)")
	fl.BoolVar(&o.json, "json", false, "print JSON")
}

// clusterCommand is "mindmount cluster".
var clusterCommand = newCommand(command{
	name:    "cluster",
	usage:   "cluster status [--cluster URL] [--json] | cluster move USER NODE [--cluster URL]",
	summary: "show the serve nodes of a cluster and the users each serves; move a user to a node",
	help: `mindmount cluster status reads the cluster's etcd (--cluster, as given to
mindmount serve --cluster) and prints every live node: its name, the
address the others forward to, how long it has been up, how long its
lease has left, its replication lag (the age of the oldest commit of
its users that the git host lacks, and how many users have one;
"pushed" when none) and the users it serves.

mindmount cluster move USER NODE hands USER over to the live node NODE:
the node serving USER finishes the requests in flight, commits and pushes
USER's memory to the git host, and moves USER's key to NODE in one etcd
transaction; NODE then takes USER (fetch, memory merge) at once. It
returns when NODE holds USER (a minute at most). See docs/many-hosts.md.`,
}, runClusterCommand)

func runClusterCommand(ctx context.Context, o *clusterCmdOptions, args []string) error {
	move := len(args) == 3 && args[0] == "move"
	if !move && (len(args) != 1 || args[0] != "status") {
		return errUsage
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(o.endpoints, ","),
		DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("--cluster: %w", err)
	}
	defer cli.Close()
	if move {
		mctx, cancel := context.WithTimeout(ctx, 70*time.Second)
		defer cancel()
		if err := cluster.AskMove(mctx, cli, args[1], args[2]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s is served by %s\n", args[1], args[2])
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := cluster.ReadStatus(rctx, cli)
	if err != nil {
		return err
	}
	if o.json {
		return json.NewEncoder(stdout).Encode(st)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tADVERTISE\tUP\tLEASE LEFT\tREPLICATION LAG\tUSERS")
	for _, n := range st.Nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%ds\t%s\t%d %s\n", n.Name, n.Advertise,
			time.Since(n.Since).Truncate(time.Second), n.LeaseTTL, lagColumn(n.Lag), len(n.Users), strings.Join(n.Users, ","))
	}
	if len(st.Orphans) > 0 {
		fmt.Fprintf(tw, "(no node)\t\t\t\t\t%d %s\n", len(st.Orphans), strings.Join(st.Orphans, ","))
	}
	return tw.Flush()
}
