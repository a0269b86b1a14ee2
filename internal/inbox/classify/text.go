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
	return strings.FieldsFunc(folded, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
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

// own is the part of a reply its sender wrote: the text before the quoted message ("On … wrote:", its German,
// French and Spanish forms, an "Original Message" line, an Outlook header block), without quoted (">") lines,
// and before the signature ("-- ", a sign-off line after the first line, "Sent from my iPhone").
func (r *Rules) own(text string) string {
	if len(text) > maxText {
		text = text[:maxText]
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if len(lines) > maxLines {
		lines = lines[:maxLines]
	}
	var out []string
	seen := false
	for i, line := range lines {
		if line == "-- " || strings.TrimSpace(line) == "--" {
			break
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
			break
		}
		if seen && slices.Contains(r.signoffs, strings.TrimRight(t, ",.!- ")) {
			break
		}
		if t != "" {
			seen = true
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
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
