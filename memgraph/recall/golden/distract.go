package golden

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/mindmount/mindmount/memgraph/recall"
)

// Word lists for the synthetic distractors. They overlap the golden set's
// vocabulary on purpose (dogs, coffee, cities, allergies, work, languages,
// sports) so that a distractor can compete with the right answer, as the
// memories of a real long-lived repository do.
var (
	firstNames = []string{"Ana", "Ben", "Carla", "Diego", "Eva", "Farid", "Greta", "Hugo", "Ines", "Jonas",
		"Kemal", "Lena", "Marco", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Stefan", "Tomas",
		"Uma", "Victor", "Wen", "Xavier", "Yara", "Zoe", "Pedro", "Sofia", "Lukas", "Amara"}
	cities = []string{"Madrid", "Paris", "Rome", "Vienna", "Prague", "Oslo", "Dublin", "Warsaw", "Athens",
		"Munich", "Hamburg", "Seville", "Valencia", "Milan", "Zurich", "Krakow", "Ghent", "Utrecht", "Bologna", "Braga"}
	relations = []string{"friend", "colleague", "neighbour", "cousin", "former classmate", "manager", "landlord", "teammate"}
	jobs      = []string{"architect", "teacher", "designer", "pharmacist", "carpenter", "translator", "accountant",
		"journalist", "physiotherapist", "chef", "electrician", "librarian", "lawyer", "baker"}
	pets       = []string{"dog", "cat", "parrot", "rabbit", "tortoise", "hamster", "goldfish"}
	petNames   = []string{"Biscuit", "Luna", "Max", "Nala", "Oreo", "Rocky", "Tofu", "Ziggy", "Mango", "Pepper"}
	foods      = []string{"ramen", "tapas", "sourdough bread", "dark chocolate", "kimchi", "pastel de nata", "falafel", "risotto", "espresso", "matcha"}
	allergens  = []string{"shellfish", "pollen", "cats", "penicillin", "dust mites", "bee stings", "latex"}
	projects   = []string{"Orion", "Kestrel", "Nimbus", "Tessera", "Juniper", "Halyard", "Quartz", "Marlin", "Sable", "Aurora"}
	techs      = []string{"Go", "Rust", "Kubernetes", "Postgres", "React", "Terraform", "Kafka", "Django", "Swift", "Spark"}
	books      = []string{"Middlemarch", "Dune", "The Overstory", "Piranesi", "Stoner", "Kindred", "Solaris", "The Remains of the Day", "Beloved", "Pachinko"}
	adjectives = []string{"slow", "moving", "dense", "funny", "bleak", "beautiful", "overrated", "surprising", "long", "gripping"}
	events     = []string{"conference", "wedding", "hiking trip", "workshop", "concert", "football match", "family visit", "job interview"}
	months     = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	sports     = []string{"tennis", "yoga", "padel", "rowing", "table tennis", "squash", "volleyball", "pilates"}
	tools      = []string{"Notion", "Obsidian", "a paper notebook", "Todoist", "Google Sheets", "Trello", "Emacs org-mode"}
	gifts      = []string{"a scarf", "a cookbook", "concert tickets", "a plant", "a watch", "headphones", "a board game"}
	styles     = []string{"numbered steps", "tables", "short summaries", "a final recap", "plain language", "examples from cooking"}
	subjects   = []string{"tax questions", "travel planning", "recipes", "code reviews", "email drafts", "history questions", "gardening"}
)

// Distractors returns n synthetic memories, the same for the same seed.
// About one in ten is retired, so lifecycle filtering is exercised at scale.
func Distractors(n int, seed uint64) []recall.Doc {
	g := gen{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	r := g.r
	docs := make([]recall.Doc, 0, n)
	for i := 0; i < n; i++ {
		name, city := g.pick(firstNames), g.pick(cities)
		year := 2015 + r.IntN(12)
		var m synthetic
		if c := r.IntN(16); c < 8 {
			m = g.aboutPeople(c, name, city, year)
		} else {
			m = g.aboutHabits(c, name, city, year)
		}
		var episode string
		if r.IntN(3) == 0 {
			episode = fmt.Sprintf("Session %02d.%02d.%02d — mentioned in passing.", 1+r.IntN(28), 1+r.IntN(12), year%100)
		}
		status, active := "active", true
		if r.IntN(10) == 0 {
			status, active = []string{"superseded", "retracted", "contradicted"}[r.IntN(3)], false
		}
		dir := "user_memory"
		if m.kind == "character" {
			dir = "character_memory"
		}
		docs = append(docs, recall.Doc{
			Path:        fmt.Sprintf("%s/synthetic-%05d.md", dir, i),
			Kind:        m.kind,
			Title:       m.title,
			Description: m.desc,
			Fact:        m.fact,
			Episode:     episode,
			Active:      active,
			Status:      status,
			Uses:        r.IntN(6),
		})
	}
	return docs
}

// gen draws the synthetic memories' words; the order of its draws is the
// seed's contract.
type gen struct{ r *rand.Rand }

func (g gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

// synthetic is one drawn memory's text and kind.
type synthetic struct {
	title, desc, fact string
	kind              string
}

// aboutPeople draws memories of kinds 0-7: relations, pets, food,
// allergies, projects, books, trips and sports.
func (g gen) aboutPeople(c int, name, city string, year int) synthetic {
	pick, r := g.pick, g.r
	var title, desc, fact string
	switch c {
	case 0:
		rel, job := pick(relations), pick(jobs)
		title = fmt.Sprintf("%s %s", strings.ToUpper(rel[:1])+rel[1:], name)
		desc = fmt.Sprintf("%s is a %s and a %s of yours", name, job, rel)
		fact = fmt.Sprintf("Your %s %s works as a %s in %s.", rel, name, job, city)
	case 1:
		pet, pn := pick(pets), pick(petNames)
		title = fmt.Sprintf("%s's %s %s", name, pet, pn)
		desc = fmt.Sprintf("%s has a %s called %s", name, pet, pn)
		fact = fmt.Sprintf("Your %s %s has a %s named %s that you looked after in %s.", pick(relations), name, pet, pn, months[r.IntN(12)])
	case 2:
		f := pick(foods)
		title = "Tried " + f
		desc = fmt.Sprintf("Tried %s in %s", f, city)
		fact = fmt.Sprintf("You tried %s at a small place in %s and found it %s.", f, city, pick(adjectives))
	case 3:
		a := pick(allergens)
		title = fmt.Sprintf("%s Allergic To %s", name, a)
		desc = fmt.Sprintf("%s, a %s, is allergic to %s", name, pick(relations), a)
		fact = fmt.Sprintf("%s is allergic to %s; keep it in mind when planning the %s.", name, a, pick(events))
	case 4:
		p, t := pick(projects), pick(techs)
		title = "Project " + p
		desc = fmt.Sprintf("Worked on project %s with %s", p, t)
		fact = fmt.Sprintf("In %d you worked on project %s, a %s service, with %s.", year, p, t, name)
	case 5:
		b := pick(books)
		title = "Read " + b
		desc = fmt.Sprintf("Read %s in %d", b, year)
		fact = fmt.Sprintf("You read %s in %d and thought it was %s.", b, year, pick(adjectives))
	case 6:
		ev := pick(events)
		title = fmt.Sprintf("Trip To %s", city)
		desc = fmt.Sprintf("Went to %s for a %s", city, ev)
		fact = fmt.Sprintf("You travelled to %s in %s %d for a %s and stayed %d nights.", city, months[r.IntN(12)], year, ev, 1+r.IntN(9))
	case 7:
		s := pick(sports)
		title = fmt.Sprintf("Tried %s", s)
		desc = fmt.Sprintf("Took a %s class with %s", s, name)
		fact = fmt.Sprintf("You took a trial %s class with %s in %s and did not continue.", s, name, city)
	}
	return synthetic{title, desc, fact, "user"}
}

// aboutHabits draws memories of kinds 8-15: tools, gifts, meetings, the
// agent's manner (character memories), moves, languages and
// recommendations.
func (g gen) aboutHabits(c int, name, city string, year int) synthetic {
	pick := g.pick
	var title, desc, fact string
	kind := "user"
	switch c {
	case 8:
		tl := pick(tools)
		title = "Notes In " + tl
		desc = fmt.Sprintf("Kept %s notes in %s", pick(subjects), tl)
		fact = fmt.Sprintf("For a while you kept notes on %s in %s.", pick(subjects), tl)
	case 9:
		gift := pick(gifts)
		title = fmt.Sprintf("Gift For %s", name)
		desc = fmt.Sprintf("Gave %s %s", name, gift)
		fact = fmt.Sprintf("You gave %s %s for their birthday in %d.", name, gift, year)
	case 10:
		title = fmt.Sprintf("Meeting With %s", name)
		desc = fmt.Sprintf("Met %s at a coffee shop in %s", name, city)
		fact = fmt.Sprintf("You met %s for coffee in %s to talk about %s.", name, city, pick(subjects))
	case 11:
		kind = "character"
		st, sub := pick(styles), pick(subjects)
		title = fmt.Sprintf("Use %s For %s", st, sub)
		desc = fmt.Sprintf("Use %s when helping with %s", st, sub)
		fact = fmt.Sprintf("When helping with %s, use %s.", sub, st)
	case 12:
		kind = "character"
		sub := pick(subjects)
		title = "Ask Before " + sub
		desc = fmt.Sprintf("Ask a clarifying question before %s", sub)
		fact = fmt.Sprintf("Before answering %s, ask one clarifying question.", sub)
	case 13:
		title = fmt.Sprintf("%s Moved To %s", name, city)
		desc = fmt.Sprintf("%s moved to %s in %d", name, city, year)
		fact = fmt.Sprintf("Your %s %s moved to %s in %d for a new job as a %s.", pick(relations), name, city, year, pick(jobs))
	case 14:
		lang := pick([]string{"Spanish", "Italian", "German", "French", "Greek", "Polish", "Dutch"})
		title = fmt.Sprintf("%s Speaks %s", name, lang)
		desc = fmt.Sprintf("%s speaks %s fluently", name, lang)
		fact = fmt.Sprintf("%s grew up in %s and speaks %s fluently.", name, city, lang)
	default:
		f := pick(foods)
		title = fmt.Sprintf("%s Recommends %s", name, f)
		desc = fmt.Sprintf("%s recommended a %s place in %s", name, f, city)
		fact = fmt.Sprintf("%s recommended a %s place near the station in %s.", name, f, city)
	}
	return synthetic{title, desc, fact, kind}
}
