package gitrepo

import "strings"

// MailDomain is the domain of every identity mindmount commits under: a
// writer named "agent" commits as "agent <agent@mindmount.local>".
const MailDomain = "mindmount.local"

// Writer is the commit identity of a program writing a repository through
// mindmount: the name as given, the e-mail its first word at MailDomain
// ("mcp (claude-code)" commits as "mcp (claude-code) <mcp@mindmount.local>").
func Writer(name string) Author {
	local, _, _ := strings.Cut(strings.TrimSpace(name), " ")
	if local == "" {
		return Mindmount
	}
	return Author{Name: name, Email: local + "@" + MailDomain}
}

// Mindmount is the identity of the commits mindmount makes on its own behalf
// (mindmount init, the start-up recovery) and of any commit whose author has
// no name.
var Mindmount = Author{Name: "mindmount", Email: "mindmount@" + MailDomain}

// ShortHash abbreviates a commit hash to the 7 characters git shows by
// default, for logs and messages; shorter input is returned as it is.
func ShortHash(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}
