//go:build !unix

package recall

import "io/fs"

const noFollow = 0

// sameOwner cannot tell owners apart here: the mode check stands alone.
func sameOwner(a, b fs.FileInfo) bool { return true }

// ownsClosest cannot tell owners apart here.
func ownsClosest(dir string) bool { return true }
