package cluster

import (
	"context"
	"slices"
	"testing"

	"github.com/mindmount/mindmount/serve/cluster/clustertest"
)

func TestStatusListsNodesAndTheirUsers(t *testing.T) {
	url := clustertest.StartEtcd(t)
	c := clustertest.Client(t, url)
	a := join(t, c, "a", nil)
	b := join(t, clustertest.Client(t, url), "b", nil)
	ctx := context.Background()
	takeAll(t, a, []string{"alice", "carol"})
	takeAll(t, b, []string{"bob"})
	st, err := ReadStatus(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Nodes) != 2 || st.Nodes[0].Name != "a" || st.Nodes[1].Name != "b" {
		t.Fatalf("nodes %+v", st.Nodes)
	}
	if !slices.Equal(st.Nodes[0].Users, []string{"alice", "carol"}) || !slices.Equal(st.Nodes[1].Users, []string{"bob"}) {
		t.Fatalf("users %+v", st.Nodes)
	}
	if st.Nodes[0].LeaseTTL <= 0 || st.Nodes[0].Advertise != "a.test:8080" {
		t.Fatalf("node a %+v", st.Nodes[0])
	}
	a.Close(ctx)
	st, _ = ReadStatus(ctx, c)
	if len(st.Nodes) != 1 || st.Nodes[0].Name != "b" {
		t.Fatalf("after a left: %+v", st)
	}
}
