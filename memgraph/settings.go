package memgraph

import (
	"fmt"
	"github.com/mindmount/mindmount/memgraph/subtree"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SettingsFile holds the repository's own settings. It is kept in git (it
// travels with the memories), is read by every front (mount, watch, CLI),
// and is checked like a memory: an invalid file is reported and its
// defaults apply.
//
// The format is the frontmatter's: one "key: value" per line, "#" starts a
// comment.
//
//	# .mindmount/settings
//	index_tokens: 3000
const SettingsFile = StateDir + "/settings"

// DefaultIndexTokens is the budget of user_memory.md and
// character_memory.md when nothing sets one: a few thousand tokens, so an
// agent that cats an index keeps most of its context window.
const DefaultIndexTokens = 2000

// Limits of index_tokens: an index smaller than a few lines is useless, a
// larger one than a million tokens fits no context.
const (
	MinIndexTokens = 100
	MaxIndexTokens = 1_000_000
)

// Settings are the per-repository settings. The zero value means "the
// defaults".
type Settings struct {
	// IndexTokens is the budget of each synthesized index in estimated
	// tokens (BytesPerToken bytes each); 0 means DefaultIndexTokens.
	IndexTokens int
	// TranscriptRetention is how long a consolidated transcript stays in
	// the transcripts/ inbox ("transcript_retention: 720h"; 0: the
	// consolidator's default; "forever" is -1).
	TranscriptRetention time.Duration
	// HookReadMiB bounds how much of a harness transcript one hook call
	// reads, in MiB ("hook_read_mib: 8"; 0: the hooks' default).
	HookReadMiB int
	// SkillListChars bounds the list of skills in the context, in
	// characters ("skill_list_chars: 8000"; 0: DefaultSkillListChars).
	SkillListChars int
}

// settingsKeys are the keys SettingsFile may hold.
var settingsKeys = []string{"index_tokens", "transcript_retention", "hook_read_mib", "skill_list_chars"}

// ParseSettings reads a settings file. Problems name the line; a bad value
// leaves that setting at its default.
func ParseSettings(data []byte) (Settings, []Problem) {
	var s Settings
	var probs []Problem
	add := func(line int, format string, args ...any) {
		probs = append(probs, Problem{Path: SettingsFile, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	if p, ok := sizeProblem(sizeSettings, SettingsFile, int64(len(data))); ok {
		return s, append(probs, p)
	}
	seen := map[string]bool{}
	eachKeyValue(data, func(n int, key, val string, ok bool) {
		if !ok || key == "" {
			add(n, "want \"key: value\" (known keys: %s)", strings.Join(settingsKeys, ", "))
			return
		}
		if seen[key] {
			add(n, "%s is set twice", keyName(key))
			return
		}
		seen[key] = true
		switch key {
		case "index_tokens":
			v, err := strconv.Atoi(val)
			if err != nil || v < MinIndexTokens || v > MaxIndexTokens {
				add(n, "index_tokens must be a whole number of tokens from %d to %d", MinIndexTokens, MaxIndexTokens)
				return
			}
			s.IndexTokens = v
		case "hook_read_mib":
			v, err := strconv.Atoi(val)
			if err != nil || v < 1 || v > 1024 {
				add(n, "hook_read_mib must be a whole number of MiB from 1 to 1024")
				return
			}
			s.HookReadMiB = v
		case "skill_list_chars":
			v, err := strconv.Atoi(val)
			if err != nil || v < MinSkillListChars || v > MaxSkillListChars {
				add(n, "skill_list_chars must be a whole number of characters from %d to %d", MinSkillListChars, MaxSkillListChars)
				return
			}
			s.SkillListChars = v
		case "transcript_retention":
			if msg := s.setPrivacy(key, val); msg != "" {
				add(n, "%s", msg)
			}
		case "commit_secrets":
			// Kept in older repositories' tracked settings: reported and
			// ignored, so no agent or remote can switch a guard off
			// (operator.go).
			add(n, "commit_secrets is ignored here: anyone who can write this tracked file (an agent, a remote) could switch the secret guard off; the operator sets it in .git/%s (mindmount serve: ROOT/config)", OperatorFile)
		case "merge":
			add(n, "merge is ignored here: an agent writing memories could turn a person's review of consolidation off; set it in .git/%s (mindmount serve: the user's repository's, or ROOT/config for every user)", OperatorFile)
		default:
			add(n, "unknown key %s (known keys: %s)", keyName(key), strings.Join(settingsKeys, ", "))
		}
	})
	return s, probs
}

// eachKeyValue calls fn for every line of a "key: value" file (the tracked
// settings, the operator's file) that is not blank: n is the line number,
// "#" starts a comment, and ok is false where the line has no colon.
func eachKeyValue(data []byte, fn func(n int, key, val string, ok bool)) {
	for i, line := range strings.Split(string(data), "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		fn(i+1, strings.TrimSpace(key), strings.TrimSpace(val), ok)
	}
}

// settingsCache re-reads SettingsFile when it changed on disk (one stat
// per look), so every front sees an edit without being told.
type settingsCache struct {
	mu     sync.Mutex
	loaded bool
	stamp  [3]int64 // size, mtime (ns), inode; all 0 when the file is missing
	s      Settings
	probs  []Problem
}

func (c *settingsCache) get(tree *subtree.Tree) (Settings, []Problem) {
	var stamp [3]int64
	if fi, err := tree.Lstat(SettingsFile); err == nil {
		var ino uint64
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = uint64(st.Ino)
		}
		stamp = [3]int64{fi.Size(), fi.ModTime().UnixNano(), int64(ino)}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded && stamp == c.stamp {
		return c.s, c.probs
	}
	c.loaded, c.stamp = true, stamp
	c.s, c.probs = Settings{}, nil
	if p, tooBig := SizeProblem(SettingsFile, stamp[0]); tooBig {
		c.probs = []Problem{p} // refused by its size: never read
	} else if stamp != ([3]int64{}) {
		data, err := tree.ReadFile(SettingsFile, SizeLimit(SettingsFile))
		if err != nil {
			c.probs = []Problem{{Path: SettingsFile, Msg: "cannot read: " + err.Error()}}
		} else {
			c.s, c.probs = ParseSettings(data)
		}
	}
	return c.s, c.probs
}

// Settings returns the repository's settings as SettingsFile has them now
// (defaults where it is missing or invalid) and its problems.
func (g *Graph) Settings() (Settings, []Problem) { return g.settings.get(g.tree) }

// SetIndexTokens overrides the index budget of SettingsFile (a command-line
// flag); 0 removes the override.
func (g *Graph) SetIndexTokens(tokens int) { g.indexOverride.Store(int64(tokens)) }

// IndexTokens returns the budget of each index in tokens: the override,
// else SettingsFile, else DefaultIndexTokens.
func (g *Graph) IndexTokens() int {
	if v := g.indexOverride.Load(); v > 0 {
		return int(v)
	}
	if s, _ := g.Settings(); s.IndexTokens > 0 {
		return s.IndexTokens
	}
	return DefaultIndexTokens
}
