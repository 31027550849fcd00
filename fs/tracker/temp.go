package tracker

import (
	"path"
	"strconv"
	"strings"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// tempGlobs are base-name patterns of files that editors and tools create
// next to the file being edited and delete (or rename away) moments later.
// Committing them would fill the history with noise and, for swap files,
// with half-written content.
var tempGlobs = []string{
	".*.sw?",           // vim swap: .name.swp, .name.swo, ...
	"*.swp",            // vim swap with 'directory' set elsewhere
	"*~",               // vim/emacs/nano backups
	".#*",              // emacs lock files
	"#*#",              // emacs auto-save files
	".~lock.*#",        // LibreOffice locks
	".goutputstream-*", // GNOME/gedit atomic writes
}

// IsScratch reports whether rel names an editor or tool temporary file: vim swap
// files and its "4913" write probe, "~" backups, emacs ".#" locks and "#…#"
// auto-saves, the "sedXXXXXX" temporaries of sed -i, and the "*.tmp" of
// write-to-temp-then-rename (atomicfile.IsTemp: mindmount's own and many other
// tools'). Such files may be written freely but are never committed. It
// looks at the base name only; the tracker also skips whatever .gitignore
// ignores.
func IsScratch(rel string) bool {
	base := path.Base(rel)
	if base == "" || base == "." || base == "/" {
		return false
	}
	if base == ".swp" || isVimProbe(base) || isSedTemp(base) || atomicfile.IsTemp(base) {
		return true
	}
	lower := strings.ToLower(base)
	for _, g := range tempGlobs {
		if ok, _ := path.Match(g, lower); ok {
			return true
		}
	}
	return false
}

// isVimProbe matches the file vim creates to test whether it may write in a
// directory: "4913", and when that exists 4913+123, 4913+246, ... (see
// vim's fileio.c, buf_write).
func isVimProbe(base string) bool {
	n, err := strconv.Atoi(base)
	if err != nil || base[0] == '0' || base[0] == '+' || base[0] == '-' {
		return false
	}
	return n >= 4913 && n < 4913+123*100 && (n-4913)%123 == 0
}

// isSedTemp matches GNU sed -i's temporary: "sed" followed by six characters
// from mkostemp's alphabet (letters and digits).
func isSedTemp(base string) bool {
	if len(base) != 9 || !strings.HasPrefix(base, "sed") {
		return false
	}
	for _, c := range base[3:] {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
