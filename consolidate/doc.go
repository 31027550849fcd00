// Package consolidate is the dreamer: it reads conversation transcripts
// dropped into transcripts/, asks a language model which durable facts they
// hold about the user and about how to talk to them, decides per fact
// whether to ADD, UPDATE, DELETE (contradict) or leave existing memories
// unchanged (NONE), and commits the memory changes together with the cursor
// advance in one git commit.
//
// Model output is untrusted input: it is parsed leniently (code fences,
// leading prose) but validated strictly (schema, sizes, counts, paths),
// redacted (package secret) before anything is built from it, and every
// file is validated with memgraph.Validate, and refused if it would add a
// secret, before it is committed.
//
// Transcripts stay local: transcripts/ is an inbox git ignores, commits
// name their source by path, lines and hash (inbox.go). Candidates for a
// fact are recall matches plus the active memories of its topic (chunk.go),
// so a contradiction is found even when it shares no word.
//
// The package knows nothing of FUSE; the mount, the watch mode and the CLI
// drive it the same way:
//
//	var ls tracker.Listeners
//	t := tracker.New(g, repo, tracker.Config{Listener: ls.Listener()})
//	c := consolidate.New(t, provider, consolidate.Config{Idle: idle, Every: every})
//	ls.Add(tracker.Listener{
//		Changed: func(paths []string) { for _, p := range paths { c.Notify(p) } },
//		Control: c.Request, // .mindmount/consolidate was written
//		Status:  c.Status,  // the status file's consolidation line
//	})
//	go c.Loop(ctx) // idle / count / request triggers
//
// The tracker is the consolidator's writer: each chunk is a prepared
// change (tracker.Apply) that the tracker commits and puts in the graph.
//
// "mindmount consolidate REPO" calls Run once. The cursor (.mindmount/cursor.json)
// moves only in the commit holding the memories it accounts for; the
// cursor rule of hooks.MergeFile (the git merge driver) keeps it from moving back on "git revert".
package consolidate
