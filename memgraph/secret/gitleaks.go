package secret

import (
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// detector is gitleaks' detector over its embedded default rules. Compiling
// its ~220 rules takes about 0.1 s, so it is built on first use, not at
// start-up of every mindmount command.
var detector = sync.OnceValue(func() *detect.Detector {
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
	cfg, err := vc.Translate()
	if err != nil {
		return nil
	}
	d := detect.NewDetector(cfg)
	// A "gitleaks:allow" comment must not let a secret into a memory
	// repository: nobody reviews those lines.
	d.IgnoreGitleaksAllow = true
	return d
})

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
	d := detector()
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
