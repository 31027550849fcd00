package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// apiKey is the admin key every node shares (and the clients use).
const apiKey = "cluster-long-key"

// rig is the running cluster.
type rig struct {
	o       options
	procs   *procs
	etcdURL string
	etcd    *clientv3.Client
	gitBase string
	model   *llmtest.Server
	nginx   string // http://127.0.0.1:port
	users   []string
	mu      sync.Mutex
	nodes   map[string]*node
	spare   map[string]string // node name -> address picked, not started yet
}

// node is one serve.
type node struct {
	name, addr string
	cmd        *exec.Cmd
}

// procs is every child started, killed whole at the end (each runs in a
// process group of its own; serve's workers die with serve).
type procs struct {
	mu   sync.Mutex
	cmds []*exec.Cmd
	fns  []func()
}

func (p *procs) start(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	p.mu.Lock()
	p.cmds = append(p.cmds, cmd)
	p.mu.Unlock()
	return nil
}

func (p *procs) killAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.cmds {
		for _, pid := range family(c.Process.Pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		c.Wait()
	}
	p.cmds = nil
	for _, f := range p.fns {
		f()
	}
	p.fns = nil
}

// Cleanup lets llmtest stop its server with the rest.
func (p *procs) Cleanup(f func()) {
	p.mu.Lock()
	p.fns = append(p.fns, f)
	p.mu.Unlock()
}

func freePort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitPort waits (a minute at most) for addr to accept connections.
func waitPort(addr string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on %s", addr)
}

func (r *rig) logFile(name string) *os.File {
	f, err := os.Create(filepath.Join(r.o.work, name))
	if err != nil {
		panic(err)
	}
	return f
}

// setUp starts etcd, the git host, the model and nginx, provisions the
// users on four ROOTs and starts nodes a, b and c.
func (r *rig) setUp(ctx context.Context) error {
	for i := 1; i <= r.o.users; i++ {
		r.users = append(r.users, fmt.Sprintf("u%d", i))
	}
	r.nodes, r.spare = map[string]*node{}, map[string]string{}
	for _, n := range []string{"a", "b", "c", "d"} {
		r.spare[n] = freePort()
	}
	steps := []func(context.Context) error{r.startEtcd, r.startGitHost, r.startModel, r.provision, r.startNginx}
	for _, s := range steps {
		if err := s(ctx); err != nil {
			return err
		}
	}
	for _, n := range []string{"a", "b", "c"} {
		if err := r.startNode(n); err != nil {
			return err
		}
	}
	return nil
}

func (r *rig) startEtcd(ctx context.Context) error {
	client, peer := "http://"+freePort(), "http://"+freePort()
	cmd := exec.Command("/usr/bin/etcd", "--name", "long", "--data-dir", filepath.Join(r.o.work, "etcd"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "long="+peer, "--log-level", "error")
	cmd.Stdout, cmd.Stderr = r.logFile("etcd.log"), r.logFile("etcd.err")
	if err := r.procs.start(cmd); err != nil {
		return err
	}
	r.etcdURL = client
	if err := waitPort(strings.TrimPrefix(client, "http://")); err != nil {
		return err
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{client}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	r.etcd = cli
	return err
}

// preReceive refuses (and logs) every non-fast-forward update.
const preReceive = `#!/bin/sh
while read old new ref; do
  echo "$old $new $ref" >> "$GIT_DIR/updates.log"
  if [ "$old" != 0000000000000000000000000000000000000000 ] && ! git merge-base --is-ancestor "$old" "$new"; then
    echo "REFUSED non-fast-forward $ref $old $new" >> "$GIT_DIR/updates.log"
    exit 1
  fi
done
`

func (r *rig) startGitHost(ctx context.Context) error {
	dir := filepath.Join(r.o.work, "remotes")
	for _, u := range r.users {
		bare := filepath.Join(dir, u+".git")
		if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
			return fmt.Errorf("git init: %v %s", err, out)
		}
		if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(preReceive), 0o755); err != nil {
			return err
		}
	}
	if out, err := exec.Command("chmod", "-R", "777", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("chmod: %v %s", err, out)
	}
	addr := freePort()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--listen=127.0.0.1", "--port="+port, "--base-path="+dir, dir)
	// the git host's configuration (cluster-long.sh's, as
	// bench-cluster.sh's) comes with the environment
	cmd.Stderr = r.logFile("git-daemon.log")
	if err := r.procs.start(cmd); err != nil {
		return err
	}
	r.gitBase = "git://" + addr
	return waitPort(addr)
}

// startModel is the fake model: every chat's transcript holds "w-N",
// which its extraction turns into the memory w-N, added.
func (r *rig) startModel(context.Context) error {
	r.model = llmtest.New(r.procs)
	w := regexp.MustCompile(`w-[0-9]+`)
	r.model.Handle(func(c llmtest.Call) llmtest.Reply {
		switch c.Kind {
		case llmtest.KindExtract:
			n := w.FindString(c.Prompt)
			return llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []any{map[string]any{
				"kind": "user", "slug": n, "description": "The write " + n, "fact": "You wrote " + n + ".", "episode": ""}}})}
		case llmtest.KindDecide:
			return llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`}
		}
		return llmtest.Reply{Content: "Noted."}
	})
	return nil
}

// startNode starts serve as node name on the address picked for it and
// waits for its readiness line.
func (r *rig) startNode(name string) error {
	addr := r.spare[name]
	args := []string{"serve", "--root", filepath.Join(r.o.work, name), "--http", addr,
		"--cluster", r.etcdURL, "--node", name, "--advertise", addr, "--cluster-ttl", r.o.ttl.String()}
	if r.o.syncRep {
		args = append(args, "--sync-replication")
	}
	cmd := exec.Command(r.o.mindmount, args...)
	cmd.Env = append(nodeEnv(), "MINDMOUNT_API_KEY="+apiKey, "MINDMOUNT_LLM=ollama", "OLLAMA_HOST="+r.model.OllamaURL(), "MINDMOUNT_MODEL=fake")
	cmd.Stderr = r.logFile(name + ".log")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := r.procs.start(cmd); err != nil {
		return err
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	go io.Copy(io.Discard, out)
	if !strings.HasPrefix(line, "mindmount: serving") {
		return fmt.Errorf("node %s: %q (see %s.log)", name, line, name)
	}
	r.mu.Lock()
	r.nodes[name] = &node{name: name, addr: addr, cmd: cmd}
	r.mu.Unlock()
	return nil
}

// nodeEnv is the environment without the git host's configuration
// (GIT_CONFIG_*): the nodes run as they would in production.
func nodeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_CONFIG_") {
			env = append(env, kv)
		}
	}
	return env
}
