package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	gh "github.com/google/go-github/v75/github"
)

// Client is the hosting service's REST API for one repository.
type Client struct {
	api         *gh.Client
	Owner, Repo string
}

// ErrNoToken means no token was given: the hosting service is not asked.
var ErrNoToken = errors.New("no token for the hosting service's API (set GITHUB_TOKEN)")

// ErrAPI is a failed call to the hosting service's API.
var ErrAPI = errors.New("the hosting service's API")

// NewClient is a client of the API at base ("" is https://api.github.com/;
// GitHub Enterprise's is https://HOST/api/v3/, Gitea's https://HOST/api/v1/)
// for owner/repo, with token. hc nil is http.DefaultClient.
func NewClient(base, token, owner, repo string, hc *http.Client) (*Client, error) {
	if token == "" {
		return nil, ErrNoToken
	}
	if owner == "" || repo == "" || strings.ContainsAny(owner+repo, "/ \n") {
		return nil, fmt.Errorf("%w: want the repository as OWNER/NAME, got %q/%q", ErrAPI, owner, repo)
	}
	c := gh.NewClient(hc).WithAuthToken(token)
	if base != "" {
		u, err := url.Parse(strings.TrimSuffix(base, "/") + "/")
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("%w: base URL %q is not an http(s) URL", ErrAPI, base)
		}
		c.BaseURL = u
	}
	return &Client{api: c, Owner: owner, Repo: repo}, nil
}

// apiErr wraps an error of go-github, which never includes the token.
func apiErr(what string, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrAPI, what, err)
}

// Complete adds to it what an event payload lacks: a pull request's
// changed paths, its review comments and comments, and the titles of the
// issues its text names. One page of each (100) is read.
func (c *Client) Complete(ctx context.Context, it *Item) error {
	page := &gh.ListOptions{PerPage: 100}
	if it.PR {
		files, _, err := c.api.PullRequests.ListFiles(ctx, c.Owner, c.Repo, it.Number, page)
		if err != nil {
			return apiErr("listing the changed files", err)
		}
		for _, f := range files {
			it.Paths = append(it.Paths, f.GetFilename())
		}
		rcs, _, err := c.api.PullRequests.ListComments(ctx, c.Owner, c.Repo, it.Number, &gh.PullRequestListCommentsOptions{ListOptions: *page})
		if err != nil {
			return apiErr("listing the review comments", err)
		}
		for _, rc := range rcs {
			it.Comments = append(it.Comments, rc.GetPath()+": "+rc.GetBody())
		}
	}
	ics, _, err := c.api.Issues.ListComments(ctx, c.Owner, c.Repo, it.Number, &gh.IssueListCommentsOptions{ListOptions: *page})
	if err != nil {
		return apiErr("listing the comments", err)
	}
	for _, ic := range ics {
		if !strings.Contains(ic.GetBody(), Marker) { // not our own recall
			it.Comments = append(it.Comments, ic.GetBody())
		}
	}
	for i, l := range it.Linked {
		if i >= 10 {
			break
		}
		is, resp, err := c.api.Issues.Get(ctx, c.Owner, c.Repo, l.Number)
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			continue
		}
		if err != nil {
			return apiErr(fmt.Sprintf("reading #%d", l.Number), err)
		}
		it.Linked[i].Title = is.GetTitle()
	}
	return nil
}

// ChangedPaths lists a pull request's changed files (for recall's query).
func (c *Client) ChangedPaths(ctx context.Context, n int) ([]string, error) {
	files, _, err := c.api.PullRequests.ListFiles(ctx, c.Owner, c.Repo, n, &gh.ListOptions{PerPage: 100})
	if err != nil {
		return nil, apiErr("listing the changed files", err)
	}
	var out []string
	for _, f := range files {
		out = append(out, f.GetFilename())
	}
	return out, nil
}

// Upsert posts body as the one comment of mindmount on issue or pull
// request n, or edits the one there (found by Marker): never two. It
// returns the comment's id and whether it was created.
func (c *Client) Upsert(ctx context.Context, n int, body string) (int64, bool, error) {
	opt := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		cs, resp, err := c.api.Issues.ListComments(ctx, c.Owner, c.Repo, n, opt)
		if err != nil {
			return 0, false, apiErr("listing the comments", err)
		}
		for _, cm := range cs {
			if strings.Contains(cm.GetBody(), Marker) {
				_, _, err := c.api.Issues.EditComment(ctx, c.Owner, c.Repo, cm.GetID(), &gh.IssueComment{Body: gh.Ptr(body)})
				if err != nil {
					return 0, false, apiErr("editing the comment", err)
				}
				return cm.GetID(), false, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	cm, _, err := c.api.Issues.CreateComment(ctx, c.Owner, c.Repo, n, &gh.IssueComment{Body: gh.Ptr(body)})
	if err != nil {
		return 0, false, apiErr("posting the comment", err)
	}
	return cm.GetID(), true, nil
}

// PR is a pull request as the proposal flow needs it.
type PR struct {
	Number  int
	HeadRef string // "mindmount/dream/3"
	HeadSHA string
	Open    bool
	Merged  bool
	URL     string
}

// DreamPRs lists the pull requests into the memory branch, newest first.
func (c *Client) DreamPRs(ctx context.Context) ([]PR, error) {
	opt := &gh.PullRequestListOptions{State: "all", Base: MemoryBranch, ListOptions: gh.ListOptions{PerPage: 100}}
	var out []PR
	for range 10 {
		prs, resp, err := c.api.PullRequests.List(ctx, c.Owner, c.Repo, opt)
		if err != nil {
			return nil, apiErr("listing the pull requests", err)
		}
		for _, p := range prs {
			out = append(out, PR{Number: p.GetNumber(), HeadRef: p.GetHead().GetRef(), HeadSHA: p.GetHead().GetSHA(),
				Open: p.GetState() == "open", Merged: p.GetMerged() || p.GetMergedAt() != (gh.Timestamp{}), URL: p.GetHTMLURL()})
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	return out, nil
}

// Open opens a pull request from head into the memory branch.
func (c *Client) Open(ctx context.Context, head, title, body string) (PR, error) {
	p, _, err := c.api.PullRequests.Create(ctx, c.Owner, c.Repo, &gh.NewPullRequest{Title: gh.Ptr(title), Head: gh.Ptr(head),
		Base: gh.Ptr(MemoryBranch), Body: gh.Ptr(body), MaintainerCanModify: gh.Ptr(false)})
	if err != nil {
		return PR{}, apiErr("opening the pull request", err)
	}
	return PR{Number: p.GetNumber(), HeadRef: head, Open: true, URL: p.GetHTMLURL()}, nil
}
