package tracker

import (
	"strings"

	"github.com/mindmount/mindmount/memgraph"
)

// IsInbox reports whether rel is in the transcripts/ inbox. Transcripts
// hold private talk and never reach git (issue 14, defect 3): the tracker
// never commits such a path — whatever .gitignore says, so repositories
// made before the template ignored the folder are covered — but tells its
// subscribers it changed, which is how the consolidator hears of new
// transcripts. The folder's placeholder (.gitkeep) is the one exception.
func IsInbox(rel string) bool {
	rest, ok := strings.CutPrefix(rel, memgraph.TranscriptsDir+"/")
	return ok && rest != ".gitkeep"
}
