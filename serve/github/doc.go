// Package github is mindmount's glue to a project's repository and its
// hosting service: the project's memory kept on a branch of its own
// (MemoryBranch), pull requests and issues turned into transcripts for
// consolidation (Item), dreams proposed as pull requests (Proposal) and
// recall posted as one comment on a new pull request or issue (Comment).
// The hosting service is reached through go-github with a configurable
// base URL (GitHub, GitHub Enterprise, Gitea-compatible APIs); the token is
// handed in by the caller and never logged.
package github
