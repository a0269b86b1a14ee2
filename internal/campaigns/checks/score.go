package checks

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/net/html"

	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/template"
)

// triggerPhrases are the spam trigger words and phrases the content score penalises (doc.go). They are matched
// case-insensitively on whole words, punctuation other than "%" counting as a space ("risk-free" is "risk
// free").
var triggerPhrases = []string{
	"100% free", "act now", "apply now", "buy now", "cash bonus", "click below", "click here", "congratulations",
	"dear friend", "double your", "earn money", "extra income", "free gift", "guaranteed", "limited time",
	"lowest price", "make money", "no credit check", "no obligation", "once in a lifetime", "order now",
	"risk free", "special promotion", "this is not spam", "urgent", "while supplies last", "winner",
}

// shorteners are the link-shortening hosts the content score penalises: filters distrust links whose
// destination is hidden.
var shorteners = []string{
	"bit.ly", "bl.ink", "buff.ly", "cutt.ly", "goo.gl", "is.gd", "ow.ly", "rb.gy", "rebrand.ly", "shorturl.at",
	"t.co", "t.ly", "tiny.cc", "tinyurl.com",
}

// Penalty is one rule of the content score that took points from a message, with what it found and how to
// earn the points back.
type Penalty struct {
	// Rule is spam_words, all_caps, exclamation_marks, links, html_only, too_short, too_long, image_only or
	// url_shorteners.
	Rule   string
	Points int
	Detail string
	Hint   string
}

// Content is one message as a contact receives it: the rendered subject and bodies and the URLs of its
// links, each link once.
type Content struct {
	Subject, Plain, HTML string
	Links                []string
}

// Score is the content score of c (0 to 100) and the penalties that make it, by the formula in doc.go: 100
// less each rule's points, every rule saturating at its own maximum.
func Score(c Content) (int, []Penalty) {
	htmlText, images := visibleText(c.HTML)
	body := c.Plain
	if strings.TrimSpace(body) == "" {
		body = htmlText
	}
	bodyWords := words(body)
	all := append(words(c.Subject), bodyWords...)
	var out []Penalty
	add := func(rule string, points, most int, detail, hint string) {
		if points = min(points, most); points > 0 {
			out = append(out, Penalty{Rule: rule, Points: points, Detail: detail, Hint: hint})
		}
	}
	found := spamPhrases(c.Subject + "\n" + body)
	add("spam_words", 5*len(found), 25, `the spam trigger phrases "`+strings.Join(found, `", "`)+`"`,
		"reword the trigger phrases")
	caps := 0
	for _, w := range all {
		if shouting(w) {
			caps++
		}
	}
	if len(all) > 0 {
		add("all_caps", caps*50/len(all), 15, fmt.Sprintf("%d of %d words in capitals", caps, len(all)),
			"write words in normal case")
	}
	marks := strings.Count(c.Subject, "!") + strings.Count(body, "!")
	add("exclamation_marks", 2*(marks-1), 10, fmt.Sprintf("%d exclamation marks", marks), "keep at most one exclamation mark")
	add("links", 5*(len(c.Links)-3), 15, fmt.Sprintf("%d links", len(c.Links)), "keep to 3 links or fewer")
	if strings.TrimSpace(c.HTML) != "" && strings.TrimSpace(c.Plain) == "" {
		add("html_only", 10, 10, "an HTML body without a plain-text part", "write body_plain too")
	}
	switch n := len(bodyWords); {
	case n < 20:
		add("too_short", 10, 10, fmt.Sprintf("a body of %d words", n), "write at least 20 words")
	case n > 500:
		add("too_long", 10, 10, fmt.Sprintf("a body of %d words", n), "keep the body to 500 words or fewer")
	}
	if images > 0 && len(words(htmlText)) < 10 {
		add("image_only", 20, 20, "an HTML body that is images with almost no text", "say it in text, not in images")
	}
	short := 0
	for _, l := range c.Links {
		if u, err := url.Parse(l); err == nil && slices.Contains(shorteners, strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")) {
			short++
		}
	}
	add("url_shorteners", 10*short, 20, fmt.Sprintf("%d shortened links", short), "link to the full address")
	score := 100
	for _, p := range out {
		score -= p.Points
	}
	return max(score, 0), out
}

// words are the whitespace-separated tokens of s holding a letter or a digit.
func words(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		if strings.ContainsFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			out = append(out, f)
		}
	}
	return out
}

// shouting reports an all-capitals word: at least three letters, none of them lower case.
func shouting(w string) bool {
	letters := 0
	for _, r := range w {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters >= 3
}

// phraseForm is s lower-cased with every run of characters other than letters, digits and "%" made one
// space, padded with a space at each end, so phrases match on whole words.
func phraseForm(s string) string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '%'
	})
	return " " + strings.Join(f, " ") + " "
}

// spamPhrases lists the trigger phrases text holds, each once, in list order.
func spamPhrases(text string) []string {
	t := phraseForm(text)
	var out []string
	for _, p := range triggerPhrases {
		if strings.Contains(t, phraseForm(p)) {
			out = append(out, p)
		}
	}
	return out
}

// visibleText is the text a reader sees in an HTML body (entities decoded; script, style and head left out)
// and the number of images it shows.
func visibleText(src string) (string, int) {
	z := html.NewTokenizer(strings.NewReader(src))
	var b strings.Builder
	images, hidden := 0, 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return b.String(), images
		case html.TextToken:
			if hidden == 0 {
				b.Write(z.Text())
				b.WriteByte(' ')
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "img":
				if tt != html.EndTagToken {
					images++
				}
			case "script", "style", "head":
				if tt == html.StartTagToken {
					hidden++
				} else if tt == html.EndTagToken && hidden > 0 {
					hidden--
				}
			}
		}
	}
}

// sample is the contact a message is rendered for to be scored: every standard field filled, so the score
// reads the words a typical contact gets.
var sample = template.Data{
	Contact: template.Contact{FirstName: "Alex", LastName: "Morgan", Email: "alex.morgan@example.com",
		Company: "Example Ltd", Phone: "+1 555 0100"},
	Sender: template.Sender{Name: "Sam Taylor", Email: "sam@example.com"},
}

// scoreMessage renders m for the sample contact (spintax seed 0; no HTML part in a text_only campaign) and
// scores it. A part that does not parse is scored as written.
func scoreMessage(m *message, c campaign.Campaign) (int, []Penalty) {
	msg := template.Message{Subject: m.templates[0], Plain: m.templates[1], HTML: m.templates[2]}
	if c.TextOnly {
		msg.HTML = nil
	}
	d := sample
	d.Campaign.Name = c.Name
	r := msg.Render(&d, template.Options{})
	rendered := [3]*string{&r.Subject, &r.Plain, &r.HTML}
	for i, t := range m.templates {
		if t == nil && m.parts[i] != "" && !(i == 2 && c.TextOnly) {
			*rendered[i] = m.parts[i]
		}
	}
	content := Content{Subject: r.Subject, Plain: r.Plain, HTML: r.HTML}
	for _, l := range r.Links {
		content.Links = append(content.Links, l.URL)
	}
	return Score(content)
}
