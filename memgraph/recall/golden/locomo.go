package golden

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// LoCoMo is the retrieval part of the LoCoMo benchmark (Maharana et al.,
// "Evaluating Very Long-Term Conversational Memory of LLM Agents", 2024):
// long conversations of many sessions, and questions that name the
// dialogue turns holding their evidence. Only the file's shape is known
// here; the data is read at run time from wherever the user keeps it.

// LoCoMoSample is one conversation of the benchmark with its questions.
type LoCoMoSample struct {
	ID       string
	SpeakerA string
	SpeakerB string
	Sessions []LoCoMoSession
	QA       []LoCoMoQuestion
}

// LoCoMoSession is one session of a conversation.
type LoCoMoSession struct {
	N        int    // 1-based, from the key "session_N"
	DateTime string // as written, e.g. "1:56 pm on 8 May, 2023"
	Turns    []LoCoMoTurn
}

// LoCoMoTurn is one dialogue turn.
type LoCoMoTurn struct {
	Speaker string `json:"speaker"`
	ID      string `json:"dia_id"` // "D3:13": session 3, turn 13
	Text    string `json:"text"`
	Caption string `json:"blip_caption"` // a shared image's caption, when any
}

// LoCoMoQuestion is one question with the turns that hold its evidence.
type LoCoMoQuestion struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

// LoCoMoCategories are the question categories scored (5, adversarial,
// has no evidence), in the benchmark's numbering.
var LoCoMoCategories = []struct {
	N    int
	Name string
}{{1, "multi-hop"}, {2, "temporal"}, {3, "open-domain"}, {4, "single-hop"}}

// ParseLoCoMo reads the benchmark's JSON: an array of samples, each with a
// "conversation" object (speaker_a, speaker_b, session_N and
// session_N_date_time) and a "qa" array.
func ParseLoCoMo(r io.Reader) ([]LoCoMoSample, error) {
	var raw []struct {
		ID           string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []LoCoMoQuestion           `json:"qa"`
	}
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("locomo: %w", err)
	}
	out := make([]LoCoMoSample, 0, len(raw))
	for i, rs := range raw {
		s := LoCoMoSample{ID: rs.ID, QA: rs.QA}
		if s.ID == "" {
			s.ID = fmt.Sprintf("sample-%d", i)
		}
		str := func(key string) string {
			var v string
			if b, ok := rs.Conversation[key]; ok {
				_ = json.Unmarshal(b, &v) // a non-string is as good as absent
			}
			return v
		}
		s.SpeakerA, s.SpeakerB = str("speaker_a"), str("speaker_b")
		for key, b := range rs.Conversation {
			num, ok := strings.CutPrefix(key, "session_")
			if !ok {
				continue
			}
			n, err := strconv.Atoi(num)
			if err != nil || n <= 0 {
				continue // session_N_date_time and the like
			}
			var turns []LoCoMoTurn
			if err := json.Unmarshal(b, &turns); err != nil {
				return nil, fmt.Errorf("locomo: %s: %s: %w", s.ID, key, err)
			}
			s.Sessions = append(s.Sessions, LoCoMoSession{N: n, DateTime: str(key + "_date_time"), Turns: turns})
		}
		slices.SortFunc(s.Sessions, func(a, b LoCoMoSession) int { return a.N - b.N })
		out = append(out, s)
	}
	return out, nil
}

// locomoDate parses a session's date ("1:56 pm on 8 May, 2023").
func locomoDate(s string) time.Time {
	for _, layout := range []string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t
		}
	}
	return time.Time{}
}

// TurnPath is the memory file of a turn: "D3:13" is user_memory/d3-13.md.
// ok is false for an id that makes no valid memory name.
func TurnPath(id string) (string, bool) {
	slug := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(id), ":", "-"))
	if !memgraph.ValidSlug(slug) {
		return "", false
	}
	return memgraph.UserDir + "/" + slug + ".md", true
}

// TurnMemory renders one turn as a memory file, as an importer of a chat
// log would write it: the title says who spoke and when, the description
// and the fact hold what was said (and a shared photo's caption), the
// episode the session and its date.
func TurnMemory(s *LoCoMoSample, sess *LoCoMoSession, t *LoCoMoTurn) (string, []byte, bool) {
	rel, ok := TurnPath(t.ID)
	if !ok {
		return "", nil, false
	}
	date := locomoDate(sess.DateTime)
	title := t.Speaker
	if !date.IsZero() {
		title += ", " + date.Format("2 January 2006")
	}
	fact := t.Speaker + ": " + t.Text
	desc := t.Text
	if c := strings.TrimSpace(t.Caption); c != "" {
		fact += "\n\n" + t.Speaker + " shared a photo: " + c + "."
		desc += " [photo: " + c + "]"
	}
	other := s.SpeakerB
	if t.Speaker == s.SpeakerB {
		other = s.SpeakerA
	}
	episode := fmt.Sprintf("%s to %s in session %d, %s.", t.Speaker, other, sess.N, sess.DateTime)
	m := memgraph.NewMemory(rel, title, desc, fact, episode, date)
	return rel, m.Render(), true
}

// LoCoMoConfig shapes a run.
type LoCoMoConfig struct {
	K int // hits asked of recall per question; 0 means 10
	// Embedder, when set, also embeds every turn and every question and
	// ranks by the fused keyword+vector ranking recall uses after
	// `mindmount reindex`.
	Embedder recall.Embedder
	Model    string
	// Expander, when set, expands every question (recall.SetExpander).
	Expander recall.Expander
}

// LoCoMoScore is the quality over one category's questions.
type LoCoMoScore struct {
	Questions   int
	MRR         float64 // of the first evidence turn found
	R1, R5, R10 float64 // share of evidence turns in the top 1, 5, 10
	AllAt10     float64 // share of questions with every evidence turn in the top 10
}

// add counts one question whose evidence turns ranked ranks (1-based, 0
// for not returned); the figures are sums until finish.
func (s *LoCoMoScore) add(ranks []int) {
	s.Questions++
	first, n1, n5, n10 := 0, 0, 0, 0
	for _, r := range ranks {
		if r <= 0 {
			continue
		}
		if first == 0 || r < first {
			first = r
		}
		if r == 1 {
			n1++
		}
		if r <= 5 {
			n5++
		}
		if r <= 10 {
			n10++
		}
	}
	if first > 0 {
		s.MRR += 1 / float64(first)
	}
	e := float64(len(ranks))
	s.R1 += float64(n1) / e
	s.R5 += float64(n5) / e
	s.R10 += float64(n10) / e
	if n10 == len(ranks) {
		s.AllAt10++
	}
}

// finish turns the sums into means.
func (s *LoCoMoScore) finish() {
	if n := float64(s.Questions); n > 0 {
		s.MRR, s.R1, s.R5, s.R10, s.AllAt10 = s.MRR/n, s.R1/n, s.R5/n, s.R10/n, s.AllAt10/n
	}
}

// LoCoMoReport is the outcome of RunLoCoMo.
type LoCoMoReport struct {
	Conversations int
	Turns         int // memories written, one per turn
	Skipped       int // questions of categories 1-4 with no evidence turn in their conversation
	K             int
	ByCategory    map[int]*LoCoMoScore
	Overall       LoCoMoScore
	Latency       Latency // of one recall, in-process
	Vectors       bool    // the fused keyword+vector ranking was measured
	Expanded      bool    // questions were expanded (WordNet)
}

// RunLoCoMo builds one repository per conversation under dir (one memory
// file per turn, read back by memgraph.Scan as every door reads a
// repository), asks every question of categories 1-4 through the graph's
// recall, and scores where the evidence turns rank.
func RunLoCoMo(ctx context.Context, samples []LoCoMoSample, dir string, cfg LoCoMoConfig) (*LoCoMoReport, error) {
	if cfg.K <= 0 {
		cfg.K = 10
	}
	rep := &LoCoMoReport{Conversations: len(samples), K: cfg.K, ByCategory: map[int]*LoCoMoScore{}, Vectors: cfg.Embedder != nil, Expanded: cfg.Expander != nil}
	for _, c := range LoCoMoCategories {
		rep.ByCategory[c.N] = &LoCoMoScore{}
	}
	var lat []time.Duration
	for i := range samples {
		d, err := rep.runSample(ctx, &samples[i], filepath.Join(dir, strconv.Itoa(i)), cfg, &lat)
		if err != nil {
			return nil, err
		}
		rep.Turns += d
	}
	for _, c := range LoCoMoCategories {
		rep.ByCategory[c.N].finish()
	}
	rep.Overall.finish()
	rep.Latency = latencyOf(lat)
	return rep, nil
}

func (rep *LoCoMoReport) runSample(ctx context.Context, s *LoCoMoSample, dir string, cfg LoCoMoConfig, lat *[]time.Duration) (int, error) {
	if err := os.MkdirAll(filepath.Join(dir, memgraph.UserDir), 0o700); err != nil {
		return 0, err
	}
	known := map[string]string{} // normalised turn id -> memory path
	n := 0
	for si := range s.Sessions {
		sess := &s.Sessions[si]
		for ti := range sess.Turns {
			t := &sess.Turns[ti]
			rel, data, ok := TurnMemory(s, sess, t)
			if !ok {
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), data, 0o600); err != nil {
				return 0, err
			}
			known[normTurnID(t.ID)] = rel
			n++
		}
	}
	g, err := memgraph.Scan(dir)
	if err != nil {
		return 0, err
	}
	defer g.Close()
	if probs := g.Problems(); len(probs) > 0 {
		return 0, fmt.Errorf("locomo: %s: a turn made an invalid memory: %s", s.ID, probs[0])
	}
	g.RecallIndex().SetExpander(cfg.Expander)
	if cfg.Embedder != nil {
		model := cfg.Model
		if model == "" {
			model = "default"
		}
		ix := g.RecallIndex()
		if err := ix.SetVectors(recall.NewVectors(cfg.Embedder, model, ""), false); err != nil {
			return 0, err
		}
		if _, err := ix.Reindex(ctx, nil); err != nil {
			return 0, fmt.Errorf("locomo: embedding %s: %w", s.ID, err)
		}
	}
	for _, q := range s.QA {
		score := rep.ByCategory[q.Category]
		if score == nil {
			continue
		}
		var want []string
		for _, e := range q.Evidence {
			for _, id := range splitEvidence(e) {
				if rel, ok := known[normTurnID(id)]; ok && !slices.Contains(want, rel) {
					want = append(want, rel)
				}
			}
		}
		if len(want) == 0 {
			rep.Skipped++
			continue
		}
		t0 := time.Now()
		hits := g.RecallContext(ctx, q.Question, recall.Options{K: cfg.K})
		*lat = append(*lat, time.Since(t0))
		ranks := make([]int, len(want))
		for i, w := range want {
			for r, h := range hits {
				if h.Path == w {
					ranks[i] = r + 1
					break
				}
			}
		}
		score.add(ranks)
		rep.Overall.add(ranks)
	}
	return n, nil
}

// splitEvidence splits one evidence entry: the data has "D8:6; D9:17" in
// one string here and there.
func splitEvidence(e string) []string {
	return strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' })
}

// normTurnID normalises a turn id: "D:11:26", a slip in the data, is
// "D11:26".
func normTurnID(id string) string {
	id = strings.ToUpper(strings.TrimSpace(id))
	if rest, ok := strings.CutPrefix(id, "D:"); ok {
		id = "D" + rest
	}
	return id
}

func latencyOf(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	at := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	return Latency{Queries: len(ds), P50: at(0.50), P95: at(0.95), Max: ds[len(ds)-1]}
}

// WriteText prints the report as a table, one row per category.
func (rep *LoCoMoReport) WriteText(w io.Writer) {
	ranking := "keyword ranking"
	if rep.Vectors {
		ranking = "keyword+vector ranking"
	}
	if rep.Expanded {
		ranking += ", questions expanded through WordNet"
	}
	fmt.Fprintf(w, "LoCoMo: %d %s, %d turns (one memory each), %d questions of categories 1-4 (%d without a known evidence turn left out); %s, top %d\n\n",
		rep.Conversations, memgraph.Plural(rep.Conversations, "conversation", "conversations"), rep.Turns, rep.Overall.Questions, rep.Skipped, ranking, rep.K)
	fmt.Fprintf(w, "%-12s %9s %6s %9s %9s %9s %8s\n", "category", "questions", "MRR", "recall@1", "recall@5", "recall@10", "all@10")
	row := func(name string, s *LoCoMoScore) {
		fmt.Fprintf(w, "%-12s %9d %6.3f %9.3f %9.3f %9.3f %8.3f\n", name, s.Questions, s.MRR, s.R1, s.R5, s.R10, s.AllAt10)
	}
	for _, c := range LoCoMoCategories {
		row(c.Name, rep.ByCategory[c.N])
	}
	row("overall", &rep.Overall)
	l := rep.Latency
	fmt.Fprintf(w, "\nrecall latency, in-process (%d queries, about %d memories a repository): p50 %s  p95 %s\n",
		l.Queries, rep.Turns/max(1, rep.Conversations), ms(l.P50), ms(l.P95))
	fmt.Fprintln(w, "recall@N is the share of a question's evidence turns ranked in the top N; all@10 the share of questions with all of them there.")
}
