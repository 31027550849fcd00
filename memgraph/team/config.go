package team

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// ConfigFile is the teams configuration of a serve ROOT, relative to ROOT.
// Only root writes it ("mindmount teams"); a file owned by anyone else, or
// that its group or others may write, is refused (ErrUnsafeConfig).
const ConfigFile = "teams.conf"

// Dir is where a serve ROOT keeps the teams' repositories: ROOT/teams/<team>.
const Dir = "teams"

// ErrBadConfig: a line of the configuration cannot be read.
var ErrBadConfig = errors.New("bad teams configuration")

// maxConfig bounds the file a daemon reads (a million members is far past
// any host's).
const maxConfig = 16 << 20

// Team is one team: its system uid and group (0: none assigned yet) and
// its members by user ID.
type Team struct {
	Name     string
	UID, GID int
	Members  map[string]Role
}

// Config is every team of a ROOT. The zero value has none.
type Config struct {
	Teams map[string]*Team
}

// Parse reads a configuration:
//
//	# a comment
//	team NAME [UID GID]
//	member TEAM USER ROLE
//
// A member line names a team declared above it. Errors name the line,
// wrap ErrBadConfig, and never quote more than the offending word.
func Parse(data []byte) (Config, error) {
	c := Config{Teams: map[string]*Team{}}
	if len(data) > maxConfig {
		return Config{}, fmt.Errorf("%w: %d bytes, at most %d", ErrBadConfig, len(data), maxConfig)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxConfig)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if err := c.parseLine(f); err != nil {
			return Config{}, fmt.Errorf("%w: line %d: %v", ErrBadConfig, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrBadConfig, err)
	}
	return c, nil
}

func (c *Config) parseLine(f []string) error {
	switch {
	case f[0] == "team" && (len(f) == 2 || len(f) == 4):
		t := &Team{Name: f[1], Members: map[string]Role{}}
		if len(f) == 4 {
			var err error
			if t.UID, err = parseID(f[2]); err != nil {
				return err
			}
			if t.GID, err = parseID(f[3]); err != nil {
				return err
			}
		}
		return c.add(t)
	case f[0] == "member" && len(f) == 4:
		return c.SetMember(f[1], f[2], Role(f[3]))
	}
	return fmt.Errorf("want \"team NAME [UID GID]\" or \"member TEAM USER ROLE\"")
}

// parseID reads a uid or gid: a decimal number, not root's.
func parseID(s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v <= 0 || v >= 1<<31 || strconv.Itoa(v) != s {
		return 0, fmt.Errorf("uid/gid %q: want a number from 1", s)
	}
	return v, nil
}

// add declares a team.
func (c *Config) add(t *Team) error {
	if err := ValidName(t.Name); err != nil {
		return err
	}
	if c.Teams == nil {
		c.Teams = map[string]*Team{}
	}
	if c.Teams[t.Name] != nil {
		return fmt.Errorf("%w: %s", ErrExists, t.Name)
	}
	c.Teams[t.Name] = t
	return nil
}

// AddTeam declares the team name with its system uid and gid (0, 0 for
// none).
func (c *Config) AddTeam(name string, uid, gid int) error {
	return c.add(&Team{Name: name, UID: uid, GID: gid, Members: map[string]Role{}})
}

// RemoveTeam forgets a team and its members.
func (c *Config) RemoveTeam(name string) error {
	if c.Teams[name] == nil {
		return fmt.Errorf("%w: %s", ErrUnknownTeam, name)
	}
	delete(c.Teams, name)
	return nil
}

// SetMember gives user the role in team (a member already there changes
// role).
func (c *Config) SetMember(team, user string, role Role) error {
	t := c.Teams[team]
	if t == nil {
		return fmt.Errorf("%w: %s", ErrUnknownTeam, team)
	}
	if err := ValidName(user); err != nil {
		return err
	}
	if _, err := ParseRole(string(role)); err != nil {
		return err
	}
	t.Members[user] = role
	return nil
}

// RemoveMember takes user out of team.
func (c *Config) RemoveMember(team, user string) error {
	t := c.Teams[team]
	if t == nil {
		return fmt.Errorf("%w: %s", ErrUnknownTeam, team)
	}
	if _, ok := t.Members[user]; !ok {
		return fmt.Errorf("%w: %s in %s", ErrNotMember, user, team)
	}
	delete(t.Members, user)
	return nil
}

// Names returns the teams' names, sorted.
func (c Config) Names() []string {
	var names []string
	for n := range c.Teams {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Format writes c in Parse's format, teams and members sorted.
func (c Config) Format() []byte {
	var b bytes.Buffer
	b.WriteString("# mindmount teams (written by \"mindmount teams\"; root's, never in a repository)\n")
	for _, n := range c.Names() {
		t := c.Teams[n]
		if t.UID != 0 || t.GID != 0 {
			fmt.Fprintf(&b, "team %s %d %d\n", n, t.UID, t.GID)
		} else {
			fmt.Fprintf(&b, "team %s\n", n)
		}
		var users []string
		for u := range t.Members {
			users = append(users, u)
		}
		sort.Strings(users)
		for _, u := range users {
			fmt.Fprintf(&b, "member %s %s %s\n", n, u, t.Members[u])
		}
	}
	return b.Bytes()
}

// ForUser returns the teams user belongs to under a serve ROOT, each with
// its repository (ROOT/teams/<team>) and the user's role, sorted by name.
func (c Config) ForUser(root, user string) []Attachment {
	var out []Attachment
	for _, n := range c.Names() {
		if r, ok := c.Teams[n].Members[user]; ok {
			out = append(out, Attachment{Name: n, Dir: filepath.Join(root, Dir, n), Role: r})
		}
	}
	return out
}

// Load reads ROOT's configuration. A missing file is no team. A file not
// owned by root, or writable by its group or others, is refused
// (ErrUnsafeConfig): whoever could write it could grant themselves any
// team.
func Load(root string) (Config, error) {
	p := filepath.Join(root, ConfigFile)
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		return Config{Teams: map[string]*Team{}}, nil
	}
	if err != nil {
		return Config{}, err
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return Config{}, err
	}
	if st.Uid != 0 || st.Mode&0o022 != 0 || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return Config{}, fmt.Errorf("%w: %s (chown root, chmod go-w)", ErrUnsafeConfig, p)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfig+1))
	if err != nil {
		return Config{}, err
	}
	return Parse(data)
}
