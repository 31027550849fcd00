// Package clustertest starts what cluster tests need on loopback: a real
// etcd server (/usr/bin/etcd) in a temporary directory, and a TCP relay
// that can cut a client off from it.
package clustertest

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// EtcdBinary is where Debian's etcd-server puts etcd.
const EtcdBinary = "/usr/bin/etcd"

// StartEtcd starts a one-member etcd on two free loopback ports, data in
// a temporary directory, stopped when the test ends; it returns the
// client URL. A machine without etcd skips the test, saying so.
func StartEtcd(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(EtcdBinary); err != nil {
		t.Skipf("%s is missing (apt-get install etcd-server): the cluster tests need a real etcd", EtcdBinary)
	}
	dir := t.TempDir()
	client, peer := "http://"+freeAddr(t), "http://"+freeAddr(t)
	cmd := exec.Command(EtcdBinary, "--name", "t", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "t="+peer, "--log-level", "error", "--logger", "zap")
	log, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
	})
	waitReady(t, client, filepath.Join(dir, "etcd.log"))
	return client
}

// waitReady waits (at most a minute) until etcd answers a read.
func waitReady(t testing.TB, url, logFile string) {
	t.Helper()
	c := Client(t, url)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Get(ctx, "/ready")
		cancel()
		if err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(logFile)
	t.Fatalf("etcd at %s not ready within a minute; its log:\n%s", url, b)
}

// Client is an etcd client for url, closed when the test ends.
func Client(t testing.TB, url string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func freeAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Relay passes TCP connections to a target until Cut: then every
// connection through it is closed and new ones are refused, as when a
// node is cut off from etcd.
type Relay struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	cut    bool
}

// NewRelay relays a loopback port to target (host:port), until the test ends.
func NewRelay(t testing.TB, target string) *Relay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Relay{ln: ln, target: target}
	go r.accept()
	t.Cleanup(r.Cut)
	return r
}

// URL is the relay's address as an etcd endpoint.
func (r *Relay) URL() string { return fmt.Sprintf("http://%s", r.ln.Addr()) }

func (r *Relay) accept() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", r.target)
		r.mu.Lock()
		if err != nil || r.cut {
			r.mu.Unlock()
			c.Close()
			if up != nil {
				up.Close()
			}
			continue
		}
		r.conns = append(r.conns, c, up)
		r.mu.Unlock()
		go pipe(c, up)
		go pipe(up, c)
	}
}

func pipe(dst, src net.Conn) {
	io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// Cut closes every relayed connection and refuses new ones.
func (r *Relay) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cut = true
	r.ln.Close()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}
