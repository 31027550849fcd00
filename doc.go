// Package mindmount is a git-native memory for AI agents: every user owns a git
// repository of markdown memories, projected into a directory with FUSE,
// where every change becomes a commit. This file only explains how the
// packages layer; the code lives below it.
//
// Imports read downward, by two rules that layout_test.go enforces:
//
//  1. The top-level folders are layers, lowest first: template, memgraph,
//     fs, consolidate, hooks, serve, cmd, scripts. A package imports from
//     its own folder or a lower one, never a higher one.
//  2. Inside a folder a package imports what lies beside it or below it,
//     never a folder it sits in: a parent composes its children, so a
//     package that needs the parent is not its child. Test fixtures
//     (llmtest, secrettest, scopetest, clustertest, githubtest,
//     conformance, golden) are the one exception: they sit beside what
//     they test.
//
// The packages, highest first:
//
//	cmd/mindmount              the CLI: flags, environment, signals, wiring;
//	                           "mindmount worker", one user's runtime run
//	                           by serve with the user's uid and gid
//	serve                      the runtime and its doors:
//	  host                     running repositories: one Runtime per repository
//	                           (graph, tracker, consolidator, sync); Workers,
//	                           serve's users each in a worker process of
//	                           their own (privilege separation)
//	  httpapi                  the HTTP API of "mindmount serve --http"
//	  mcpserver                MCP tools and resources over stdio and HTTP
//	  webui                    the web page of "mindmount ui" and serve's /ui/
//	  control                  a daemon's control socket: the protocol, the
//	                           server, the client (peer credentials)
//	  remote                   sync with a git remote, GitHub setup
//	  github                   a project's memory from its pull requests:
//	                           ingest, propose as a pull request, recall as
//	                           a comment (the hosting service's API)
//	  cluster                  several serve hosts on etcd: who owns each
//	                           user (a key on the node's session)
//	  proposal                 a team member's proposal on a branch of its
//	                           own, approved (merged) or rejected by a
//	                           maintainer
//	hooks                      git-side safety: pre-commit, merge drivers
//	hooks/harness              agent-harness hooks (Claude Code, Codex, ...)
//	consolidate                the dreamer: transcripts to memories
//	consolidate/llm            model providers (Ollama, OpenAI, Anthropic),
//	                           streaming chat, the fair pool of model calls
//	fs                         storage and its projection:
//	  mount                    the FUSE mount of one repository, and serve's
//	                           per-user mounts (MountFd, ownerGuard) (the
//	                           only importer of go-fuse)
//	  tracker                  the one writer of a repository: debounce,
//	                           the gate, commit; the graph it keeps current
//	  gitrepo                  the git mechanism: objects, trees, index, refs,
//	                           locks, packing, crash repair
//	  gitrepo/failpoint        named crash points of the commit sequence
//	  migrate                  other memory systems' layouts (the reference
//	                           server's, Claude Code's, Letta's) as plans
//	                           of changes for "mindmount import"
//	memgraph                   the memory model: format, validation, names,
//	                           ranking, indexes, context, settings, the graph
//	memgraph/recall            keyword and vector recall
//	memgraph/team              team memory: membership and roles (root's
//	                           teams.conf), the teams a laptop has joined
//	memgraph/recall/wordnet    WordNet's database files, read in place, for
//	                           expanding a question by meaning
//	memgraph/subtree           opening a path beneath a repository, never
//	                           through a symbolic link (openat2); it stays
//	                           below memgraph while the graph reads its files
//	                           through it
//	memgraph/secret            secret detection and redaction (gitleaks' rules)
//	memgraph/atomicfile        replacing a file whole (temp file, fsync,
//	                           rename) and the names of temp files
//	template                   the skeleton of a new repository
//
// Test helpers that no implementation owns sit beside what they test:
// consolidate/llmtest (a fake model server), serve/remote/githubtest
// (a fake of the GitHub API calls setup makes), fs/tracker/conformance
// (the behaviours every way of serving a repository must have, run over
// the mount and watch mode), memgraph/secret/secrettest (scans a repository
// and its git objects for planted secrets). scripts/ holds tooling: the
// demo, benchmarks, the soak test, scripts/fakellm (the fake model server
// as a program) and the systemd unit.
//
// Who writes: every commit of a repository is recorded by one sequence,
// gitrepo.Repo.Record (a commit, an apply and a merge are one Commit with
// a list of parents; the flush before the ref moves and every failpoint
// cover them all), and only fs/tracker calls it (ref_test.go checks).
// The tracker is the repository's one writer: the memory writes of the
// mount, watch mode and MCP edits, the start-up recovery, and the prepared
// changes others hand it (tracker.Apply: consolidation, sync merges, the
// web page's actions) all go through it, and it alone updates the graph.
// Where no tracker runs (mindmount init and import, a sync without a
// daemon) tracker.Alone records through the same sequence, each commit
// under the repository's daemon lock (gitrepo.Repo.LockAlone): refused
// while a tracker serves the repository (LockServe), in this process or
// another, so there is one writer at every instant. memgraph writes no
// file (the tracker reads and saves the skill use counts the graph
// keeps) and reads only where
// layout_test.go's memgraphFileReads still lists it. The domain
// (memgraph, consolidate) never imports go-fuse, never reads the
// environment and never talks HTTP except through a provider handed to it.
//
// One home for each rule; a package above uses it and keeps no copy:
//
//	commit identity      gitrepo.Writer: "name <name@mindmount.local>";
//	                     gitrepo.Mindmount for mindmount's own commits (init,
//	                     recovery) and a commit without an author
//	commit messages      each writer words its own kind, in one builder:
//	                     the tracker's bursts, recovery and Mindmount-User/
//	                     Mindmount-Sandbox trailers (fs/tracker
//	                     message.go, authorship.go), a consolidation run
//	                     and its recovery (consolidate commit.go,
//	                     consolidator.go), a dream's merge and a review's
//	                     rejection (consolidate dream.go, review.go), a sync merge (serve/remote
//	                     merge.go), the template (serve/host provision.go);
//	                     gitrepo.Subject is a message's first line
//	hash abbreviation    gitrepo.ShortHash, 7 characters
//	one-line text        memgraph.SafeLine (white space collapsed, control
//	                     and invisible format characters escaped;
//	                     memgraph.SafeText keeps the lines) for names, descriptions,
//	                     queries and memory fields; memgraph.ClipLine and
//	                     ErrorLine (the same, cut) for errors and table
//	                     cells; memgraph.Plural for counted nouns
//	control characters   memgraph.IsControl (names, escaping, paths in
//	                     commit messages); gitrepo.CheckPath holds git's
//	                     own narrower rule for what a tree may hold
//	recall as text       memgraph.RecallMarkdown (.mindmount/search/<query>),
//	                     memgraph.RecallLines (a model's prompt),
//	                     memgraph.RetiredTag (a retired hit's mark)
//	path cleaning        memgraph.CleanRel; the tracker narrows it to the
//	                     paths it watches
//	committable paths    gitrepo.CheckPath (what git may hold)
//	memory names         memgraph: IsMemoryPath, ValidSlug, SlugProblem
//	temp names           memgraph/atomicfile.TempName and IsTemp (mindmount's
//	                     own and "*.tmp"), used by gitrepo and the MCP
//	                     tree; fs/tracker.IsScratch adds the editors'
//	                     (never committed)
//	a path in a repository  memgraph/subtree: openat2 RESOLVE_BENEATH |
//	                     RESOLVE_NO_SYMLINKS, for every reader and writer
//	                     of a user's tree (graph, tracker, gitrepo,
//	                     consolidation, HTTP, MCP, hooks, the mount)
//	replacing a file     atomicfile.WriteFile / Create outside a work tree
//	                     (hooks, credentials, tokens, registry, caches);
//	                     inside it gitrepo.Repo.WriteFile, confined to the tree
//	mindmount repository    serve/host.IsMindmountRepo
//	a tree to a uid      serve/host.GiveTo (GiveToUser, GiveToTeam, GiveAlong, and
//	                     a new user's repository): no link followed, no
//	                     second hard link, no other user's file
//	a served user's ROOT serve/host.RootOf; a path given to a command is
//	                     resolved once (links, then ROOT/users/<id>) for
//	                     ServedUser, ServedBy and CheckNotServed
//	FUSE errors          fs/mount's toErrno
//	FUSE mount options   fs/mount's fuseOptions (an hour of caching); serve's
//	                     per-user mounts are made by mount.MountFd
//	a daemon's life      cmd/mindmount runDaemon: open, start, ready line,
//	                     wait for a signal, close (mount, watch, mcp)
//	model errors         consolidate/llm: scrubbed of keys and secrets,
//	                     then memgraph.ErrorLine
//	may it be committed  fs/tracker.Check, the gate: names, the path
//	                     rules, secrets in names and content
//	                     (SecretProblems, NameProblems), symbolic links,
//	                     sizes, read_only and validation (Judge); asked
//	                     by the burst, Write, Apply, Alone, the
//	                     pre-commit hook, check, import, consolidation,
//	                     MCP and the web page (TestGateDoorsAgree)
//	operator switches    memgraph.OperatorSource: .git/mindmount/config,
//	                     ROOT/config under serve; never the tracked tree
//	                     (commit_secrets; merge: auto|review)
//	access-log stamps    memgraph.UseStamp and memgraph.UseDates parse the
//	                     "used, DD.MM.YY" lines (TestOneReaderOfTheUseStamp)
//	where frontmatter    memgraph.Body (the web page's body view); Parse
//	ends                 and SplitParts share its split (a byte order mark,
//	                     "..." as the end)
//	merging a file       hooks.MergeFile, the one three-way merge per path
//	                     (hooks.RuleFor: cursor, memory, synthesized,
//	                     binary, transcript appends, text lines), in
//	                     process: git's drivers, sync merges, a proposal's
//	                     approval, the web page's revert and a dream's
//	                     merge (hooks.DreamMerger, wired into
//	                     consolidate's Config by the daemon: hooks sits above
//	                     consolidate, whose cursor it merges)
//	harness noise        consolidate noise.go (DropNoise): what never
//	                     reaches the model of a transcript
//	HTTP credentials     serve/httpapi: auth.go (fail closed),
//	                     tokens.go (IDs, revocation, bound to the registry
//	                     entry's UUID)
//	size of a file       memgraph.SizeProblem and SizeLimit: 64 KiB for
//	                     memories, skills and the settings file, worded
//	                     by kind, judged from a stat without a read (the
//	                     graph, the tracker, the gate's Version.Size)
//	size of a tree       fs/tracker usage.go (tree_limit_mib): the mount,
//	                     Ask and Apply share one guard (ErrTreeFull)
//	handing files over   serve/host.GiveTo, never through a link: workers'
//	                     trees, and hooks install --scope project as root
//	adding a user        serve/host.AddNewUser (users add, serve
//	                     --auto-users): the registry's checks, the
//	                     repository made or adopted, registration, the
//	                     hand-over
package mindmount
