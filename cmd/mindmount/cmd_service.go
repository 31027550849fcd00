package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mindmount/mindmount/hooks/harness"
)

// serviceCommand is "mindmount service".
var serviceCommand = &command{
	name:    "service",
	usage:   "service install REPO MNT",
	summary: "keep a single user's mount running: a systemd --user service",
	help: `A mount started by hand ends with the session or a reboot, and hooks
pointed at it then give the agent no memory. "mindmount service install"
writes a systemd --user unit that mounts the repository at login and
enables it (or prints the unit and the commands where no user manager
answers).`,
	subs: []*command{serviceInstallCommand},
}

// serviceInstallCommand is "mindmount service install".
var serviceInstallCommand = newCommand(command{
	name:    "install",
	usage:   "service install REPO MNT [--print]",
	summary: "write a systemd --user unit that mounts REPO at MNT, and enable it",
	help: `Writes the unit mindmount-<MNT as a slug>.service into
~/.config/systemd/user/ ($XDG_CONFIG_HOME/systemd/user/), which runs
"mindmount mount REPO MNT" and starts it again when it fails, then runs
systemctl --user daemon-reload and enable --now, so the mount comes back
after a reboot (once you log in; "loginctl enable-linger $USER" starts it
at boot).

The model settings of this shell that hold no secret (MINDMOUNT_LLM,
MINDMOUNT_MODEL, OLLAMA_HOST, OPENAI_BASE_URL, ANTHROPIC_BASE_URL) are
written into the unit; keys never are: put them in
~/.config/mindmount/env (KEY=value lines, mode 0600), which the unit reads.

Without systemd (no systemctl, or no user manager) and with --print it
writes nothing and prints the unit and the commands to enable it.`,
}, runServiceInstall)

// serviceOptions are the flags of "mindmount service install".
type serviceOptions struct{ print bool }

func (o *serviceOptions) AddFlags(fl *flag.FlagSet) {
	fl.BoolVar(&o.print, "print", false, "print the unit and the commands instead of installing it")
}

// unitEnv are the model settings a unit may hold: none is a secret.
var unitEnv = []string{"MINDMOUNT_LLM", "MINDMOUNT_MODEL", "MINDMOUNT_EMBED_MODEL", "OLLAMA_HOST", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"}

// serviceUnit is the unit that mounts repo at mnt with the binary bin.
func serviceUnit(bin, repo, mnt string, getenv func(string) string) string {
	var env strings.Builder
	for _, k := range unitEnv {
		if v := getenv(k); v != "" && !strings.ContainsAny(v, "\n\"\\") {
			fmt.Fprintf(&env, "Environment=\"%s=%s\"\n", k, v)
		}
	}
	return fmt.Sprintf(`[Unit]
Description=mindmount: %[2]s mounted at %[3]s

[Service]
ExecStartPre=/bin/mkdir -p %[3]s
ExecStart=%[1]s mount %[2]s %[3]s
%[4]sEnvironmentFile=-%%h/.config/mindmount/env
KillSignal=SIGTERM
TimeoutStopSec=30
Restart=on-failure
RestartSec=5

[Install]
WantedBy=default.target
`, bin, repo, mnt, env.String())
}

// runServiceInstall writes and enables the unit, or prints it.
func runServiceInstall(ctx context.Context, o *serviceOptions, args []string) error {
	if len(args) != 2 {
		return errUsage
	}
	repo, err := filepath.Abs(args[0])
	if err != nil {
		return err
	}
	mnt, err := filepath.Abs(args[1])
	if err != nil {
		return err
	}
	if err := requireMindmountRepo(repo); err != nil {
		return err
	}
	if strings.ContainsAny(repo+mnt, " \t\n\"'\\%$") {
		return fmt.Errorf("a unit cannot name %s or %s as they are: use paths without spaces, quotes, %% or $", repo, mnt)
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		bin = real
	}
	name := harness.UnitName(mnt)
	unit := serviceUnit(bin, repo, mnt, os.Getenv)
	systemctl, lookErr := exec.LookPath("systemctl")
	if o.print || lookErr != nil || exec.CommandContext(ctx, systemctl, "--user", "show-environment").Run() != nil {
		fmt.Fprintf(stdout, "# ~/.config/systemd/user/%s\n%s\n", name, unit)
		fmt.Fprintf(stdout, "# then:\n#   systemctl --user daemon-reload && systemctl --user enable --now %s\n", name)
		if !o.print {
			fmt.Fprintln(stderr, "mindmount: no systemd user manager answers here: the unit above was not installed")
		}
		return nil
	}
	dir := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "systemd", "user")
	if os.Getenv("XDG_CONFIG_HOME") == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return err
		}
		dir = filepath.Join(home, ".config", "systemd", "user")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "mindmount: wrote %s\n", path)
	for _, a := range [][]string{{"--user", "daemon-reload"}, {"--user", "enable", "--now", name}} {
		if out, err := exec.CommandContext(ctx, systemctl, a...).CombinedOutput(); err != nil {
			return fmt.Errorf("systemctl %s: %v: %s", strings.Join(a, " "), err, strings.TrimSpace(string(out)))
		}
	}
	fmt.Fprintf(stdout, "mindmount: %s enabled and started; systemctl --user status %s shows it\n", name, name)
	return nil
}
