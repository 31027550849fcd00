package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/mindmount/mindmount/memgraph/subtree"

	"github.com/mindmount/mindmount/consolidate/llm"
)

// TranscriptDir is where chat transcripts go in a user's repository: the
// inbox consolidation reads, never committed (see the transcripts rule).
const TranscriptDir = "transcripts/http"

// sessions are the conversations in progress, one per user and session ID.
type sessions struct {
	mu sync.Mutex
	m  map[string]*session
}

// session is one conversation. Its lock serialises the requests of one
// session (they would race on the history and the transcript); requests of
// other sessions and users never wait for it.
type session struct {
	lock chan struct{} // holds one token while a request uses the session
	rel  string        // transcript path in the repository
	msgs []llm.Message // the conversation so far, for the model
	last time.Time
}

// sessionIdle is how long an untouched session is kept in memory; its
// transcript stays on disk regardless.
const sessionIdle = 2 * time.Hour

// get returns the session id of user, starting it when new.
func (ss *sessions) get(user, id string, now time.Time) *session {
	key := user + "\x00" + id
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s, ok := ss.m[key]; ok {
		s.last = now
		return s
	}
	for k, s := range ss.m {
		if now.Sub(s.last) > sessionIdle && len(s.lock) == 0 {
			delete(ss.m, k)
		}
	}
	s := &session{lock: make(chan struct{}, 1), rel: transcriptName(id, now), last: now}
	ss.m[key] = s
	return s
}

// end forgets the sessions of user (bye): the next message starts anew.
func (ss *sessions) end(user string) {
	prefix := user + "\x00"
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k := range ss.m {
		if len(k) > len(prefix) && k[:len(prefix)] == prefix {
			delete(ss.m, k)
		}
	}
}

func (s *session) acquire(ctx context.Context) error {
	select {
	case s.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *session) release() { <-s.lock }

// transcriptName names a session's transcript by its start day and a hash
// of the client's session ID: the name follows the slug rule whatever the
// client sent, and the ID itself never reaches a file name.
func transcriptName(id string, now time.Time) string {
	h := sha256.Sum256([]byte(id))
	return path.Join(TranscriptDir, fmt.Sprintf("%s-%s.jsonl", now.UTC().Format("2006-01-02"), hex.EncodeToString(h[:6])))
}

// prepareTranscript makes the folder of the transcript rel of the
// repository at dir (never through a symbolic link), so that a chat whose
// transcript cannot be written is refused before the model is asked.
func prepareTranscript(dir, rel string) error {
	tree, err := subtree.Open(dir)
	if err != nil {
		return err
	}
	defer tree.Close()
	return tree.MkdirAll(path.Dir(rel), 0o700)
}
