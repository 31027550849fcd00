package secret

import (
	"slices"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// gitleaksConfig is gitleaks' embedded default configuration, read but
// not compiled: reading it takes about 20 ms, compiling all ~220 rules
// (Translate and NewDetector) about 0.15-0.3 s of CPU, which a pre-commit
// hook, a new process per commit, would pay on every commit whose text
// holds one keyword ("access", as in every memory's "## Access log").
var gitleaksConfig = sync.OnceValue(func() *config.ViperConfig {
	// gitleaks logs through its own global zerolog logger to stderr,
	// matched values included at debug level: silence it. mindmount logs
	// findings itself, by rule and line only.
	logging.Logger = zerolog.Nop()
	v := viper.New() // not viper's global: nothing else may see this config
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil
	}
	return &vc
})

// detector is gitleaks' detector over all its default rules, built on
// first use, not at start-up of every mindmount command.
var detector = sync.OnceValue(func() *detect.Detector { return buildDetector(nil) })

// buildMu serialises Translate: it rewrites parts of the configuration it
// reads, and gitleaks keeps its extend depth in a global.
var buildMu sync.Mutex

// buildDetector compiles the rules keep accepts (all when keep is nil).
// A rule another kept rule requires is kept too, and an allowlist aimed at
// rules none of which is kept is left out (with no target left it would
// apply to every rule).
func buildDetector(keep map[string]bool) *detect.Detector {
	vc := gitleaksConfig()
	if vc == nil {
		return nil
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	sub := *vc
	if keep != nil {
		for changed := true; changed; { // the closure over "required"
			changed = false
			for _, r := range vc.Rules {
				if !keep[r.ID] {
					continue
				}
				for _, req := range r.Required {
					if req != nil && !keep[req.ID] {
						keep[req.ID], changed = true, true
					}
				}
			}
		}
		sub.Rules = nil
		for _, r := range vc.Rules {
			if keep[r.ID] {
				sub.Rules = append(sub.Rules, r)
			}
		}
		sub.Allowlists = nil
		for _, a := range vc.Allowlists {
			if a == nil || len(a.TargetRules) == 0 {
				sub.Allowlists = append(sub.Allowlists, a)
				continue
			}
			b := *a
			b.TargetRules = slices.DeleteFunc(slices.Clone(a.TargetRules), func(id string) bool { return !keep[id] })
			if len(b.TargetRules) > 0 {
				sub.Allowlists = append(sub.Allowlists, &b)
			}
		}
	}
	// Translate writes into what it is given (it lower-cases each rule's
	// keywords in place and appends to allowlist slices), while
	// detectorFor reads the shared configuration's keywords without
	// buildMu: hand it copies.
	sub.Rules = slices.Clone(sub.Rules)
	for i := range sub.Rules {
		sub.Rules[i].Keywords = slices.Clone(sub.Rules[i].Keywords)
		sub.Rules[i].Allowlists = slices.Clip(sub.Rules[i].Allowlists)
	}
	sub.Allowlists = slices.Clip(sub.Allowlists)
	cfg, err := sub.Translate()
	if err != nil {
		return nil
	}
	d := detect.NewDetector(cfg)
	// A "gitleaks:allow" comment must not let a secret into a memory
	// repository: nobody reviews those lines.
	d.IgnoreGitleaksAllow = true
	return d
}

// maxPartial bounds the detectors kept for sets of rules: a long-running
// daemon sees many texts and is then served by the full detector, built
// once; a short process (the pre-commit hook) scans a few texts and
// compiles only their rules.
var maxPartial = 8 // a variable for the test that compares every subset

var (
	partialMu sync.Mutex
	partial   = map[string]*detect.Detector{}
)

// detectorFor returns a detector that finds in text exactly what the full
// one finds: gitleaks runs a rule only when one of its keywords occurs in
// the lower-cased text (rules without keywords always), and with decoding
// off (MaxDecodeDepth 0) the text is all it looks at, so the rules whose
// keywords are absent (keywordText) are left uncompiled.
func detectorFor(text string) *detect.Detector {
	vc := gitleaksConfig()
	if vc == nil {
		return nil
	}
	lower := keywordText(text)
	keep := map[string]bool{}
	var ids []string
	for _, r := range vc.Rules {
		if len(r.Keywords) == 0 || slices.ContainsFunc(r.Keywords, func(k string) bool { return strings.Contains(lower, strings.ToLower(k)) }) {
			keep[r.ID] = true
			ids = append(ids, r.ID)
		}
	}
	key := strings.Join(ids, "\x00")
	partialMu.Lock()
	d, ok := partial[key]
	full := len(partial) >= maxPartial
	partialMu.Unlock()
	switch {
	case ok:
		return d
	case full || len(ids) == len(vc.Rules):
		return detector()
	}
	if d = buildDetector(keep); d == nil {
		return detector() // not expected: the subset of a valid configuration
	}
	partialMu.Lock()
	partial[key] = d
	partialMu.Unlock()
	return d
}

// Rules returns the number of gitleaks rules in use (0 if its embedded
// configuration could not be loaded, which a test guards against).
func Rules() int {
	if d := detector(); d != nil {
		return len(d.Config.Rules)
	}
	return 0
}

// gitleaksSpans runs the gitleaks rules. A finding's value is located by
// its text (gitleaks reports a captured group, which for rules such as
// generic-api-key is the value without its label), and every copy of it is
// removed.
func gitleaksSpans(text string) []span {
	if !needsGitleaks(text) {
		return nil // no rule of theirs could match (prefilter.go)
	}
	d := detectorFor(text)
	if d == nil {
		return nil
	}
	var out []span
	for _, f := range d.DetectString(text) {
		v := f.Secret
		if v == "" {
			v = f.Match
		}
		out = append(out, allIndex(text, v, f.RuleID)...)
	}
	return out
}
