package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// provision adds every user to ROOT a with its git remote (four at a
// time), then copies ROOT a to b, c and d: every node knows the same
// users.
func (r *rig) provision(ctx context.Context) error {
	root := filepath.Join(r.o.work, "a")
	var wg sync.WaitGroup
	errs := make(chan error, len(r.users))
	sem := make(chan struct{}, 4)
	for i, u := range r.users {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			uid := strconv.Itoa(r.o.uidBase + i + 1)
			add := exec.CommandContext(ctx, r.o.mindmount, "users", "add", root, u, "--uid", uid, "--gid", uid)
			add.Env = nodeEnv()
			if out, err := add.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("users add %s: %v %s", u, err, out)
				return
			}
			set := exec.CommandContext(ctx, r.o.mindmount, "remote", "set", filepath.Join(root, "users", u), r.gitBase+"/"+u+".git")
			set.Env = nodeEnv()
			if out, err := set.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("remote set %s: %v %s", u, err, out)
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	for _, n := range []string{"b", "c", "d"} {
		if out, err := exec.Command("cp", "-a", root, filepath.Join(r.o.work, n)).CombinedOutput(); err != nil {
			return fmt.Errorf("cp: %v %s", err, out)
		}
	}
	return nil
}

// startNginx starts Debian's nginx with the recipe of docs/many-hosts.md:
// every node (d before it joins too), hashed on X-Mindmount-User.
func (r *rig) startNginx(context.Context) error {
	dir := filepath.Join(r.o.work, "nginx")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var servers strings.Builder
	for _, n := range []string{"a", "b", "c", "d"} {
		fmt.Fprintf(&servers, "    server %s max_fails=1 fail_timeout=2s;\n", r.spare[n])
	}
	addr := freePort()
	conf := fmt.Sprintf(`worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path %[1]s;
  proxy_temp_path %[1]s;
  upstream mindmount {
    hash $http_x_mindmount_user consistent;
%[2]s    keepalive 64;
  }
  server {
    listen %[3]s;
    location / {
      proxy_pass http://mindmount;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout 300s;
    }
  }
}
`, dir, servers.String(), addr)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("nginx", "-c", filepath.Join(dir, "nginx.conf"), "-g", "daemon off;")
	cmd.Stderr = r.logFile("nginx.err")
	if err := r.procs.start(cmd); err != nil {
		return err
	}
	r.nginx = "http://" + addr
	return waitPort(addr)
}

// family is pid and every process below it (serve and its workers).
func family(pid int) []int {
	children := map[int][]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			children[pp] = append(children[pp], p)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
