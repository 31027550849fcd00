package secret

import (
	"strings"
	"testing"
)

// TestAdded: the secrets a change adds are the findings of the new text
// beyond those of the old one, rule by rule and by count: a secret already
// committed does not refuse every later edit of the file, while a second
// copy, a secret of another kind, or one in a new file does count.
func TestAdded(t *testing.T) {
	const prose = "# Notes\n\nThe user keeps their keys in a password manager.\n"
	withAWS := prose + "AWS " + awsKey + " here\n"
	cases := []struct {
		name         string
		before, text string
		want         []string // rules of the added findings, in order
		wantLine     int      // line of the first one
	}{
		{"no secret at all", prose, prose + "More prose.\n", nil, 0},
		{"a new file with a secret", "", withAWS, []string{"aws-access-token"}, 4},
		{"a secret added to a file", prose, withAWS, []string{"aws-access-token"}, 4},
		{"an edit beside a secret already there", withAWS, withAWS + "An unrelated line.\n", nil, 0},
		{"the secret removed", withAWS, prose, nil, 0},
		{"a second copy of the same kind", withAWS, withAWS + "and again " + awsKey + "\n", []string{"aws-access-token"}, 5},
		{"another kind beside the old one", withAWS, withAWS + "the shop key is " + stripeKey + "\n", []string{"stripe-access-token"}, 5},
		{"one of each, nothing before", "", "AWS " + awsKey + "\nstripe " + stripeKey + "\n", []string{"aws-access-token", "stripe-access-token"}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Added(tc.before, tc.text)
			var rules []string
			for _, f := range got {
				rules = append(rules, f.Rule)
			}
			if strings.Join(rules, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("Added = %v, want rules %v", got, tc.want)
			}
			if len(got) > 0 && got[0].Line != tc.wantLine {
				t.Errorf("first finding on line %d, want %d", got[0].Line, tc.wantLine)
			}
		})
	}
}
