package hooks

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"path"
	"strings"

	"github.com/mindmount/mindmount/memgraph"
)

// memoryMerge is the result of merging one memory file.
type memoryMerge struct {
	// Data is the merged file: a clean three-way merge, or on a real
	// conflict the newer version (with the union of both access logs).
	Data []byte
	// Deleted is set when the merge removes the file (deleted on one side,
	// unchanged on the other).
	Deleted bool
	// SiblingPath and Sibling are set on a real conflict: the other
	// version, retired (status: superseded, superseded_by: the kept file),
	// so nothing is lost and the index stays clean.
	SiblingPath string
	Sibling     []byte
}

// memoryMergeInput is one three-way merge of a memory file. A nil side is
// a missing file (added or deleted).
type memoryMergeInput struct {
	Path               string // repo-relative, slash-separated
	Base, Ours, Theirs []byte
	// TheirsNewer says which version stays in place on a real conflict;
	// the other becomes the retired sibling.
	TheirsNewer bool
	// Taken reports whether a repo-relative path is already used, so the
	// sibling never replaces a file (nil: nothing is taken but Path).
	Taken func(rel string) bool
}

// mergeMemory merges three versions of a memory file. The access log is a
// union of both sides' lines, ordered by date, duplicates dropped;
// frontmatter keys and sections merge three-way, each as a whole. A key or
// section changed differently on both sides, or a result the daemon would
// refuse, is a real conflict: the newer version stays and the other
// becomes a retired sibling. It never writes conflict markers. A file
// deleted on one side and changed on the other is kept.
func mergeMemory(in memoryMergeInput) memoryMerge {
	b, o, t := in.Base, in.Ours, in.Theirs
	switch {
	case bytes.Equal(o, t) && (o == nil) == (t == nil):
		return keep(o)
	case b != nil && o != nil && bytes.Equal(b, o):
		return keep(t) // only theirs changed (a nil theirs deletes)
	case b != nil && t != nil && bytes.Equal(b, t):
		return keep(o)
	case o == nil:
		return memoryMerge{Data: t} // deleted here, changed there: keep the change
	case t == nil:
		return memoryMerge{Data: o}
	}
	if merged, ok := mergeParts(in.Path, b, o, t); ok {
		return memoryMerge{Data: merged}
	}
	return retire(in)
}

func keep(data []byte) memoryMerge {
	if data == nil {
		return memoryMerge{Deleted: true}
	}
	return memoryMerge{Data: data}
}

// mergeParts merges key by key and section by section; ok is false on a
// real conflict or when the result would not be a valid memory.
func mergeParts(rel string, b, o, t []byte) ([]byte, bool) {
	pb, po, pt := memgraph.SplitParts(rel, b), memgraph.SplitParts(rel, o), memgraph.SplitParts(rel, t)
	var out memgraph.Parts
	var ok bool
	if out.Open, ok = pick(pb.Open, po.Open, pt.Open); !ok {
		return nil, false
	}
	if out.Close, ok = pick(pb.Close, po.Close, pt.Close); !ok {
		return nil, false
	}
	if out.Keys, ok = mergeList(pb.Keys, po.Keys, pt.Keys, nil); !ok {
		return nil, false
	}
	if len(po.Sections) == 0 || len(pt.Sections) == 0 {
		return nil, false
	}
	// The preamble (title) is Sections[0] on every side.
	pre, ok := pick(first(pb.Sections), po.Sections[0].Raw, pt.Sections[0].Raw)
	if !ok {
		return nil, false
	}
	secs, ok := mergeList(rest(pb.Sections), po.Sections[1:], pt.Sections[1:], unionSection)
	if !ok {
		return nil, false
	}
	out.Sections = append([]memgraph.Part{{Raw: pre}}, secs...)
	data := out.Join()
	if !validMerge(rel, data, o, t) {
		return nil, false
	}
	return data, true
}

func first(ps []memgraph.Part) string {
	if len(ps) == 0 {
		return ""
	}
	return ps[0].Raw
}

func rest(ps []memgraph.Part) []memgraph.Part {
	if len(ps) == 0 {
		return nil
	}
	return ps[1:]
}

// pick is the three-way rule for one piece.
func pick(b, o, t string) (string, bool) {
	switch {
	case o == t, b == t:
		return o, true
	case b == o:
		return t, true
	}
	return "", false
}

// mergeList merges named parts three-way: ours' order, then parts only
// theirs added. A name present twice on a side makes the merge give up
// (the daemon ignores the repeat, so which one counts is unclear). union,
// when set, merges parts it recognises instead of the three-way rule,
// also when one side removed the part.
func mergeList(b, o, t []memgraph.Part, union func(name, b, o, t string) (string, bool)) ([]memgraph.Part, bool) {
	bm, ok1 := byName(b)
	om, ok2 := byName(o)
	tm, ok3 := byName(t)
	if !ok1 || !ok2 || !ok3 {
		return nil, false
	}
	var out []memgraph.Part
	one := func(name string) bool {
		bv, inB := bm[name]
		ov, inO := om[name]
		tv, inT := tm[name]
		if union != nil && (inO || inT) {
			// A union part survives its removal on one side: what the
			// other side holds is still unioned in.
			uo, ut := ov, tv
			if !inO {
				uo, ut = tv, ""
			}
			if v, ok := union(name, bv, uo, ut); ok {
				out = append(out, memgraph.Part{Name: name, Raw: v})
				return true
			}
		}
		switch {
		case inO && inT:
			v, ok := pickOrAppend(bv, ov, tv)
			if !ok {
				return false
			}
			out = append(out, memgraph.Part{Name: name, Raw: v})
		case inO: // theirs removed it, or ours added it
			if inB && bv != ov {
				return false // removed there, changed here
			}
			if !inB {
				out = append(out, memgraph.Part{Name: name, Raw: ov})
			}
		case inT:
			if inB && bv != tv {
				return false
			}
			if !inB {
				out = append(out, memgraph.Part{Name: name, Raw: tv})
			}
		}
		return true
	}
	for _, p := range o {
		if !one(p.Name) {
			return nil, false
		}
	}
	for _, p := range t {
		if _, ok := om[p.Name]; !ok && !one(p.Name) {
			return nil, false
		}
	}
	return out, true
}

func byName(ps []memgraph.Part) (map[string]string, bool) {
	m := make(map[string]string, len(ps))
	for _, p := range ps {
		if _, dup := m[p.Name]; dup {
			return nil, false
		}
		m[p.Name] = p.Raw
	}
	return m, true
}

// unionSection merges the access log as a union; other sections are left
// to the three-way rule.
func unionSection(name, b, o, t string) (string, bool) {
	if name != accessLogName {
		return "", false
	}
	return UnionAccessLog(o, t), true
}

// validMerge reports whether a merged file is something the daemon would
// commit, given that the sides were: a merge never turns two valid versions
// into an invalid one.
func validMerge(rel string, merged, o, t []byte) bool {
	if len(memgraph.Validate(rel, merged, nil)) == 0 {
		return true
	}
	return len(memgraph.Validate(rel, o, nil)) > 0 || len(memgraph.Validate(rel, t, nil)) > 0
}

// retire resolves a real conflict: the newer version stays at Path with
// both access logs, the other moves to a sibling path and is retired.
func retire(in memoryMergeInput) memoryMerge {
	kept, other := in.Ours, in.Theirs
	if in.TheirsNewer {
		kept, other = in.Theirs, in.Ours
	}
	kept = withAccessLog(in.Path, kept, other)
	dir, file := path.Split(in.Path)
	base := strings.TrimSuffix(file, ".md")
	taken := func(slug string) bool {
		rel := dir + slug + ".md"
		return rel == in.Path || in.Taken != nil && in.Taken(rel)
	}
	slug, err := memgraph.UniqueSlug(base, taken)
	if err != nil {
		// Every numbered name is taken: a name of the retired version's
		// own content cannot be.
		sum := sha256.Sum256(other)
		slug = fmt.Sprintf("retired-%x", sum[:8])
	}
	sib := dir + slug + ".md"
	m, _ := memgraph.Parse(sib, other)
	m.SetStatus(memgraph.StatusSuperseded, strings.TrimSuffix(in.Path, ".md"))
	return memoryMerge{Data: kept, SiblingPath: sib, Sibling: m.Render()}
}

// withAccessLog gives kept the union of both versions' access logs, so the
// uses recorded on the retired side still count.
func withAccessLog(rel string, kept, other []byte) []byte {
	pk, po := memgraph.SplitParts(rel, kept), memgraph.SplitParts(rel, other)
	var otherLog string
	for _, s := range po.Sections {
		if s.Name == accessLogName {
			otherLog = s.Raw
			break
		}
	}
	if otherLog == "" {
		return kept
	}
	for i, s := range pk.Sections {
		if s.Name == accessLogName {
			pk.Sections[i].Raw = UnionAccessLog(s.Raw, otherLog)
			out := pk.Join()
			if len(memgraph.Validate(rel, out, nil)) > len(memgraph.Validate(rel, kept, nil)) {
				return kept
			}
			return out
		}
	}
	return kept
}

// DreamMerger is consolidate.FileMerger over MergeFile, for merging a
// consolidation's dream (theirs) into the live branch (ours): the
// access-log union, and on a memory's real conflict the live version stays
// in place — a write of the agent's or a person's beats the model's
// proposal — with the dream's version retired beside it, so no line is
// lost.
func DreamMerger(rel string, base, ours, theirs []byte, taken func(string) bool) ([]byte, bool, string, []byte, error) {
	res, err := MergeFile(MergeInput{Path: rel, Base: base, Ours: ours, Theirs: theirs, Taken: taken})
	return res.Data, res.Deleted, res.SiblingPath, res.Sibling, err
}
