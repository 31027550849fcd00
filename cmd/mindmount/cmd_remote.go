package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/serve/remote"
)

// remoteCommand is "mindmount remote".
var remoteCommand = newCommand(command{
	name:    "remote",
	usage:   "remote set|show|github REPO [URL] [--token-env VAR] [--name NAME] [--api URL]",
	summary: "choose where the memory repository syncs to",
	help: `mindmount remote set REPO URL: makes URL (https://, ssh://, git@host:path, file://, or a local path)
the repository's sync remote. A URL with a password or token in it is
refused: the token goes into $MINDMOUNT_GIT_TOKEN or the credentials file.

mindmount remote show REPO: prints the remote and the sync state (ahead/behind, last push and
fetch, last failure).

mindmount remote github REPO --token-env VAR [--name NAME]: checks the token in the environment variable VAR (GET /user),
creates a private GitHub repository NAME (default mindmount-memory) unless it
exists, sets it as the remote, saves the token in the credentials file, and
pushes. --api points at GitHub Enterprise (https://HOST/api/v3).

Credentials file: $MINDMOUNT_CREDENTIALS, else
$XDG_CONFIG_HOME/mindmount/credentials, else ~/.config/mindmount/credentials;
mode 0600, one "URL-PREFIX TOKEN" per line.`,
}, runRemote)

// remoteOptions are the flags of "mindmount remote".
type remoteOptions struct {
	tokenEnv, name, api string
}

func (o *remoteOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.tokenEnv, "token-env", "", "environment `VAR` holding the GitHub token (github)")
	fl.StringVar(&o.name, "name", remote.DefaultRepoName, "GitHub repository `NAME` (github)")
	fl.StringVar(&o.api, "api", remote.DefaultGitHubAPI, "GitHub API base `URL` (github)")
}

// runRemote sets, shows or creates a repository's remote.
func runRemote(_ context.Context, o *remoteOptions, args []string) error {
	if len(args) < 2 {
		return errUsage
	}
	if err := requireMindmountRepo(args[1]); err != nil {
		return err
	}
	r, err := gitrepo.Open(args[1])
	if err != nil {
		return err
	}
	switch {
	case args[0] == "set" && len(args) == 3:
		if err := remote.SetURL(r.Dir(), args[2]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Remote of %s: %s\nRun \"mindmount sync %s\" to push now; a running daemon syncs by itself.\n", args[1], args[2], args[1])
		return nil
	case args[0] == "show" && len(args) == 2:
		text := remote.StatusText(r)
		if text == "" {
			text = "No remote; set one with \"mindmount remote set REPO URL\" or \"mindmount remote github REPO --token-env VAR\".\n"
		}
		_, err := fmt.Fprint(stdout, text)
		return err
	case args[0] == "github" && len(args) == 2:
		return runRemoteGitHub(r, o.tokenEnv, o.name, o.api)
	}
	return errUsage
}

func runRemoteGitHub(r *gitrepo.Repo, tokenEnv, name, api string) error {
	if tokenEnv == "" {
		return fmt.Errorf("--token-env VAR is required: the name of the environment variable holding the token")
	}
	token := os.Getenv(tokenEnv)
	if token == "" {
		return fmt.Errorf("$%s is empty: put a GitHub token (with the repo scope) in it", tokenEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	creds := remote.FromEnv()
	creds.Token = ""
	res, err := remote.SetupGitHub(ctx, r, remote.GitHub{API: api, Token: token}, name, remote.Options{Credentials: creds})
	if res.Username != "" && res.Repo.CloneURL != "" {
		verb := "Using the existing"
		if res.Repo.Created {
			verb = "Created the private"
		}
		fmt.Fprintf(stdout, "%s repository %s for %s\n", verb, res.Repo.CloneURL, res.Username)
		if !res.Repo.Private {
			fmt.Fprintf(stdout, "warning: %s is public; make it private on GitHub, memories are personal\n", res.Repo.CloneURL)
		}
		if creds.Path != "" {
			fmt.Fprintf(stdout, "Token saved in %s (mode 0600)\n", creds.Path)
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Synced: %s\n", res.Sync)
	return nil
}
