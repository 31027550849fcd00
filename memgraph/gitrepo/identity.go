package gitrepo

import "strings"

// MailDomain is the domain of every identity engram commits under: a
// writer named "agent" commits as "agent <agent@engram.local>".
const MailDomain = "engram.local"

// Writer is the commit identity of a program writing a repository through
// engram: the name as given, the e-mail its first word at MailDomain
// ("mcp (claude-code)" commits as "mcp (claude-code) <mcp@engram.local>").
func Writer(name string) Author {
	local, _, _ := strings.Cut(strings.TrimSpace(name), " ")
	if local == "" {
		return Engram
	}
	return Author{Name: name, Email: local + "@" + MailDomain}
}

// Engram is the identity of the commits engram makes on its own behalf
// (engram init, the start-up recovery) and of any commit whose author has
// no name.
var Engram = Author{Name: "engram", Email: "engram@" + MailDomain}

// ShortHash abbreviates a commit hash to the 7 characters git shows by
// default, for logs and messages; shorter input is returned as it is.
func ShortHash(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}
