package gitrepo

import (
	"github.com/go-git/go-git/v5/plumbing"
)

// BlobID is the id git gives data as a blob (git hash-object): what a
// reader of a work tree names the version of a file it started from.
func BlobID(data []byte) string {
	return plumbing.ComputeHash(plumbing.BlobObject, data).String()
}

// ReadBlob returns the blob id from the repository's objects; ok is false
// when id is not a blob it holds (a version never committed).
func (r *Repo) ReadBlob(id string) (data []byte, ok bool, err error) {
	if !plumbing.IsHash(id) {
		return nil, false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := r.readObject(plumbing.BlobObject, plumbing.NewHash(id))
	if err != nil {
		return nil, false, nil // a missing object is a version not held
	}
	return b, true, nil
}
