package classify

import (
	"html"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// folder lower-cases text the way every phrase is compared: accents dropped (a reply typed without them
// matches), typographic apostrophes made plain.
var folder = strings.NewReplacer(
	"à", "a", "á", "a", "â", "a", "ã", "a", "ä", "a", "å", "a", "æ", "ae", "ç", "c", "è", "e", "é", "e", "ê", "e",
	"ë", "e", "ì", "i", "í", "i", "î", "i", "ï", "i", "ñ", "n", "ò", "o", "ó", "o", "ô", "o", "õ", "o", "ö", "o",
	"ø", "o", "ù", "u", "ú", "u", "û", "u", "ü", "u", "ý", "y", "ÿ", "y", "ß", "ss", "œ", "oe",
	"\u2019", "'", "\u2018", "'", "\u00a0", " ", "\u2013", "-", "\u2014", "-")

// fold is s lower-cased and folded (see folder), punctuation kept.
func fold(s string) string {
	return folder.Replace(strings.ToLower(s))
}

// tokens are the words of folded text: runs of letters, digits and apostrophes (so "i'm" and "jusqu'au" are
// one word each); everything else separates them.
func tokens(folded string) []string {
	return strings.FieldsFunc(folded, func(r rune) bool { return !wordRune(r) })
}

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\''
}

// place is where a word of a person's text stands: its clause and sentence, and whether it is quoted.
type place struct {
	clause, sentence int32
	quoted           bool
}

// shortLine is the length under which a line break ends a sentence: a person's one-line answers and sign-off
// lines end there, while a paragraph wrapped by the mail client goes on.
const shortLine = 45

// segment answers the words of folded text as tokens does, with each word's place: a comma or a spaced dash
// ends a clause; . ! ? ; … a blank line or a break after a short line end a sentence (and its clause);
// quotation marks open and close a quote, which a sentence end closes too.
func segment(folded string) ([]string, []place) {
	words := make([]string, 0, len(folded)/6)
	at := make([]place, 0, len(folded)/6)
	var cur place
	start, line := -1, 0
	end := func() {
		cur.clause++
		cur.sentence++
		cur.quoted = false
	}
	for i, r := range folded {
		if wordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			words, at = append(words, folded[start:i]), append(at, cur)
			start = -1
		}
		switch r {
		case ',':
			cur.clause++
		case '-':
			if i > 0 && folded[i-1] == ' ' {
				cur.clause++
			}
		case '.', '!', '?', ';', '\u2026':
			end()
		case '"', '\u201c', '\u201d', '\u201e', '\u00ab', '\u00bb':
			cur.quoted = !cur.quoted
		case '\n':
			if len(strings.TrimSpace(folded[line:i])) < shortLine {
				end()
			}
			line = i + 1
		}
	}
	if start >= 0 {
		words, at = append(words, folded[start:]), append(at, cur)
	}
	return words, at
}

// Bounds on how much text a verdict reads: a reply's own words are at the top, and a bound keeps the time of
// one classification small whatever arrives.
const (
	maxText  = 64 << 10
	maxLines = 400
)

var (
	htmlQuote = regexp.MustCompile(`(?is)<blockquote.*?</blockquote>|<(style|script|head)\b.*?</(style|script|head)>`)
	htmlCut   = regexp.MustCompile(`(?is)<div[^>]+(gmail_quote|divRplyFwdMsg|moz-cite-prefix|yahoo_quoted)|<hr\b|id="?appendonsend`)
	htmlBreak = regexp.MustCompile(`(?i)<br\s*/?>|</(p|div|li|tr|h[1-6])>`)
	htmlTag   = regexp.MustCompile(`(?s)<[^>]*>`)
)

// htmlText is the text of an HTML body without its quoted parts (blockquotes, the quote blocks mail clients
// mark), for a message that has no text part.
func htmlText(h string) string {
	if len(h) > 4*maxText {
		h = h[:4*maxText]
	}
	if loc := htmlCut.FindStringIndex(h); loc != nil {
		h = h[:loc[0]]
	}
	h = htmlQuote.ReplaceAllString(h, "")
	h = htmlBreak.ReplaceAllString(h, "\n")
	h = htmlTag.ReplaceAllString(h, "")
	return html.UnescapeString(h)
}

// htmlQuoted is the quoted part of an HTML body that htmlText leaves out: its blockquotes and what follows a
// mail client's quote block, as text.
func htmlQuoted(h string) string {
	if len(h) > 4*maxText {
		h = h[:4*maxText]
	}
	var parts []string
	if loc := htmlCut.FindStringIndex(h); loc != nil {
		parts = append(parts, h[loc[0]:])
		h = h[:loc[0]]
	}
	for _, q := range htmlQuote.FindAllString(h, -1) {
		if strings.HasPrefix(strings.ToLower(q), "<blockquote") {
			parts = append(parts, q)
		}
	}
	q := htmlBreak.ReplaceAllString(strings.Join(parts, "\n"), "\n")
	return html.UnescapeString(htmlTag.ReplaceAllString(q, ""))
}

// split answers own, the part of a reply its sender wrote: the text before the quoted message ("On …
// wrote:", its German, French and Spanish forms, an "Original Message" line, an Outlook header block),
// without quoted (">") lines, and before the signature ("-- ", a sign-off line after the first line, "Sent
// from my iPhone"); with the text's lines and cut, the first line that is not the sender's own (the quote's
// or the signature's start; len(lines) when none), from which quoted reads the quoted message.
func (r *Rules) split(text string) (own string, lines []string, cut int) {
	if len(text) > maxText {
		text = text[:maxText]
	}
	lines = strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if len(lines) > maxLines {
		lines = lines[:maxLines]
	}
	var out []string
	seen := false
	for i, line := range lines {
		if line == "-- " || strings.TrimSpace(line) == "--" {
			return strings.Join(out, "\n"), lines, i
		}
		t := strings.Join(strings.Fields(fold(line)), " ")
		if strings.HasPrefix(t, ">") {
			continue
		}
		if r.quoteStart(t, lines[i+1:]) {
			// A client that wraps "On <date> <name>\nwrote:" leaves the first half above the marker.
			if n := len(out); n > 0 && r.hasMarker(t) && !r.hasMarker(out[n-1]) && len(t) < 30 {
				out = out[:n-1]
			}
			return strings.Join(out, "\n"), lines, i
		}
		if seen && slices.Contains(r.signoffs, strings.TrimRight(t, ",.!- ")) {
			return strings.Join(out, "\n"), lines, i
		}
		if t != "" {
			seen = true
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n"), lines, len(lines)
}

// quoted is the quoted message of a reply split into lines at cut: its quoted (">") lines above cut and every
// line from cut on (a signature's lines too, which matter little).
func quoted(lines []string, cut int) string {
	var b strings.Builder
	for _, line := range lines[:cut] {
		if strings.HasPrefix(strings.TrimSpace(line), ">") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	b.WriteString(strings.Join(lines[cut:], "\n"))
	return b.String()
}

func (r *Rules) hasMarker(t string) bool {
	for _, m := range r.quoteMarkers {
		if strings.HasSuffix(t, m) {
			return true
		}
	}
	return false
}

// quoteStart says whether the folded line t starts the quoted message (rest are the lines after it).
func (r *Rules) quoteStart(t string, rest []string) bool {
	if t == "" {
		return false
	}
	if r.hasMarker(t) {
		return true
	}
	for _, s := range r.quoteSeparators {
		if strings.HasPrefix(t, s) {
			return true
		}
	}
	if strings.HasPrefix(t, "____") {
		return true
	}
	for _, f := range r.quoteFrom {
		if !strings.HasPrefix(t, f) {
			continue
		}
		for _, next := range rest[:min(len(rest), 4)] {
			n := strings.Join(strings.Fields(fold(next)), " ")
			for _, field := range r.quoteFields {
				if strings.HasPrefix(n, field) {
					return true
				}
			}
		}
	}
	return false
}
