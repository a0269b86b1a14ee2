package checks_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/checks"
)

// cleanBody is 28 plain words in normal case, no links and no exclamation marks: it loses no points.
const cleanBody = "Hi Alex, I noticed your team is hiring engineers and wanted to ask how you handle onboarding today. " +
	"Would a short call next week be useful for you?"

func TestScoreMatchesHandComputations(t *testing.T) {
	t.Parallel()
	fiveLinks := []string{"https://bit.ly/x", "https://example.com/1", "https://example.com/2", "https://example.com/3", "https://example.com/4"}
	for _, tc := range []struct {
		name    string
		content checks.Content
		want    int
		rules   map[string]int
	}{
		{"a clean message keeps every point", checks.Content{Subject: "Quick question about Example", Plain: cleanBody}, 100, map[string]int{}},
		{
			// 4 phrases (urgent, act now, click here, free gift) x 5 = 20; capitals URGENT and FREE: 2 x 50 / 38
			// words = 2; 4 marks: (4 - 1) x 2 = 6. 100 - 28 = 72.
			"spam phrases, capitals and exclamation marks add up",
			checks.Content{Subject: "URGENT: act now!!!", Plain: cleanBody + " Click here to claim your FREE gift!"},
			72, map[string]int{"spam_words": 20, "all_caps": 2, "exclamation_marks": 6},
		},
		{
			// Visible text "See this, one, two, three and four." is 7 words: too_short 10; HTML only 10;
			// 5 links: (5 - 3) x 5 = 10; one shortener 10. 100 - 40 = 60.
			"an HTML-only message with many links and a shortener",
			checks.Content{Subject: "Links", Links: fiveLinks,
				HTML: `<p>See <a href="https://bit.ly/x">this</a>, <a href="https://example.com/1">one</a>, <a href="https://example.com/2">two</a>, ` +
					`<a href="https://example.com/3">three</a> and <a href="https://example.com/4">four</a>.</p>`},
			60, map[string]int{"too_short": 10, "html_only": 10, "links": 10, "url_shorteners": 10},
		},
		{
			// An image with one word of text: image_only 20, html_only 10, too_short 10.
			"an image-only HTML body", checks.Content{Subject: "Hi", HTML: `<img src="https://example.com/banner.png"><p>Hello</p>`},
			60, map[string]int{"image_only": 20, "html_only": 10, "too_short": 10},
		},
		{
			"a body over 500 words", checks.Content{Subject: "Update", Plain: strings.Repeat("word ", 501)},
			90, map[string]int{"too_long": 10},
		},
		{
			// 7 phrases x 5 = 35, held to 25; 13 words: too_short 10.
			"spam words saturate at 25",
			checks.Content{Subject: "Offer", Plain: "act now, apply now, buy now, cash bonus, click below, click here, congratulations"},
			65, map[string]int{"spam_words": 25, "too_short": 10},
		},
		{
			// 8 marks: 7 x 2 = 14, held to 10.
			"exclamation marks saturate at 10", checks.Content{Subject: "Hi!!!!!!!!", Plain: cleanBody},
			90, map[string]int{"exclamation_marks": 10},
		},
		{
			// 21 capital words of 22: 1050 / 22 = 47, held to 15. Words of two letters do not shout.
			"capitals saturate at 15", checks.Content{Subject: "Hello", Plain: strings.Repeat("LOUD ", 21)},
			85, map[string]int{"all_caps": 15},
		},
		{
			"short words in capitals and single words do not count as shouting",
			checks.Content{Subject: "OK so I am in", Plain: cleanBody}, 100, map[string]int{},
		},
		{
			// 3 shortened links x 10 = 30, held to 20; three links cost nothing.
			"shorteners saturate at 20 and www. is ignored",
			checks.Content{Subject: "Links", Plain: cleanBody, Links: []string{"https://bit.ly/a", "https://www.TinyURL.com/b", "http://t.co/c"}},
			80, map[string]int{"url_shorteners": 20},
		},
		{
			"phrases match whole words across punctuation, not inside other words",
			checks.Content{Subject: "Risk-free trial", Plain: cleanBody + " Our winners list is attached."},
			95, map[string]int{"spam_words": 5},
		},
		{
			// spam 25 (winner, urgent, act now, guaranteed, click here), capitals 7 of 7 -> 15, 11 marks -> 10,
			// 6 links -> 15, HTML only 10, too short 10, image only 20, 6 shorteners -> 20: 125, floored at 0.
			"the score never goes below 0",
			checks.Content{Subject: "WINNER URGENT ACT NOW GUARANTEED!!!!!!!", HTML: `<img src="x.png"><p>CLICK HERE!!!!</p>`,
				Links: []string{"https://bit.ly/1", "https://bit.ly/2", "https://bit.ly/3", "https://bit.ly/4", "https://bit.ly/5", "https://bit.ly/6"}},
			0, map[string]int{"spam_words": 25, "all_caps": 15, "exclamation_marks": 10, "links": 15, "html_only": 10,
				"too_short": 10, "image_only": 20, "url_shorteners": 20},
		},
		{
			// The visible text is cleanBody's 28 words; only the missing plain part costs points.
			"script, style and head text is not body text",
			checks.Content{Subject: "Quick question about Example",
				HTML: "<html><head><title>URGENT WINNER</title><style>p { color: red }</style></head><body><p>" + cleanBody + "</p><script>var x = 'act now';</script></body></html>"},
			90, map[string]int{"html_only": 10},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, penalties := checks.Score(tc.content)
			rules := map[string]int{}
			for _, p := range penalties {
				require.NotEmpty(t, p.Detail, p.Rule)
				require.NotEmpty(t, p.Hint, p.Rule)
				rules[p.Rule] = p.Points
			}
			require.Equal(t, tc.rules, rules)
			require.Equal(t, tc.want, got)
		})
	}
}
