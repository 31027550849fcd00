package memgraph

import (
	"errors"
	"fmt"
	"strings"
)

// Scope is a memory repository attached beside the personal one: a team
// whose repository the user reads at shared/<Name>/ in the mount. Graph is
// that repository's own graph (scopes attached to it are ignored: a team
// never brings in another team).
type Scope struct {
	Name  string
	Graph *Graph
}

// Scope selectors of recall (--scope, the MCP tool's scope, /v1/recall's
// scope): ScopePersonal is the personal repository alone, ScopeAll (or "")
// the personal one and every attached team; any other value names one team.
const (
	ScopePersonal = "personal"
	ScopeAll      = "all"
)

// SharedDir is the folder of the mount under which attached teams appear.
const SharedDir = "shared"

// ErrUnknownScope is returned for a scope selector that names no attached
// team (or a team the user does not belong to: the two are not told apart).
var ErrUnknownScope = errors.New("no such scope")

// ErrBadScopeName is returned by AttachScopes for a name that cannot be a
// folder of shared/ or that collides with a selector.
var ErrBadScopeName = errors.New("bad scope name")

// SharedPrefix is the prefix of a team's paths as the user sees them:
// "shared/eng/".
func SharedPrefix(team string) string { return SharedDir + "/" + team + "/" }

// ScopeOf splits a labelled path into its scope and the path inside that
// scope's repository: "shared/eng/user/a.md" is ("eng", "user/a.md"); a
// personal path is (ScopePersonal, path).
func ScopeOf(p string) (scope, rel string) {
	rest, ok := strings.CutPrefix(p, SharedDir+"/")
	if !ok {
		return ScopePersonal, p
	}
	team, rel, ok := strings.Cut(rest, "/")
	if !ok || team == "" {
		return ScopePersonal, p
	}
	return team, rel
}

// ValidScopeName reports whether name can name a team: 1 to 64 of a-z,
// 0-9, '-', '_', starting with a letter or digit, and neither selector.
func ValidScopeName(name string) bool {
	if name == "" || len(name) > 64 || name == ScopePersonal || name == ScopeAll {
		return false
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '-' || r == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}

// AttachScopes sets the teams attached to this (personal) graph, replacing
// any set before; nil detaches all. From then on Index, FullIndex,
// IndexWithin and Context include each team's memories in its own
// section within the same budget, and RecallScoped searches them. With no
// scope attached, every one of them is exactly what it was.
func (g *Graph) AttachScopes(scopes []Scope) error {
	seen := map[string]bool{}
	var keep []Scope
	for _, s := range scopes {
		if !ValidScopeName(s.Name) || seen[s.Name] {
			return fmt.Errorf("%w: %q", ErrBadScopeName, s.Name)
		}
		if s.Graph == nil || s.Graph == g {
			return fmt.Errorf("%w: %q has no graph of its own", ErrBadScopeName, s.Name)
		}
		seen[s.Name] = true
		keep = append(keep, s)
	}
	if len(keep) == 0 {
		g.scopes.Store(nil)
		return nil
	}
	g.scopes.Store(&keep)
	return nil
}

// Scopes returns the attached teams, in the order they were attached.
func (g *Graph) Scopes() []Scope {
	if p := g.scopes.Load(); p != nil {
		return *p
	}
	return nil
}

// SelectScopes returns whether sel includes the personal repository and
// which of the attached teams it includes. "" and ScopeAll select all.
func (g *Graph) SelectScopes(sel string) (personal bool, teams []Scope, err error) {
	all := g.Scopes()
	switch sel {
	case "", ScopeAll:
		return true, all, nil
	case ScopePersonal:
		return true, nil, nil
	}
	for _, s := range all {
		if s.Name == sel {
			return false, []Scope{s}, nil
		}
	}
	return false, nil, fmt.Errorf("%w %q: use %s, %s or one of your teams (%s)", ErrUnknownScope, SafeLine(sel), ScopePersonal, ScopeAll, scopeNames(all))
}

func scopeNames(s []Scope) string {
	if len(s) == 0 {
		return "none attached"
	}
	names := make([]string, len(s))
	for i, x := range s {
		names[i] = x.Name
	}
	return strings.Join(names, ", ")
}

// shareBudget splits avail bytes among parts that need needs[i] each: a
// part needing less than an equal share gets what it needs, and the parts
// that need more split what is left equally (water filling).
func shareBudget(avail int, needs []int) []int {
	alloc := make([]int, len(needs))
	if avail < 0 {
		avail = 0
	}
	pending := make([]int, 0, len(needs))
	for i := range needs {
		pending = append(pending, i)
	}
	for len(pending) > 0 {
		share := avail / len(pending)
		var still []int
		for _, i := range pending {
			if needs[i] <= share {
				alloc[i] = needs[i]
				avail -= needs[i]
			} else {
				still = append(still, i)
			}
		}
		if len(still) == len(pending) {
			for _, i := range still {
				alloc[i] = share
			}
			break
		}
		pending = still
	}
	return alloc
}
