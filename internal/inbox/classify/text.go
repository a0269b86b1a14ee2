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

// tokens are the words of folded text: runs of letters, digits and apostrophes (so "i'm" and "don't" are
// one word each), with an elided article or pronoun split off (see appendWord); everything else separates them.
func tokens(folded string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(folded, func(r rune) bool { return !wordRune(r) }) {
		out = appendWord(out, w)
	}
	return out
}

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\''
}

// elisions are the words that drop their vowel before another in French and in Italian-style writing (l',
// d', m', n', qu', jusqu', dell', all'). An apostrophe after one of them ends a word of its own (l'effacement
// is l' and effacement; jusqu'au is jusqu' and au), while English contractions (don't, i'm, it's, o'clock)
// stay one word.
var elisions = map[string]bool{"c": true, "d": true, "j": true, "l": true, "m": true, "n": true, "s": true, "t": true,
	"qu": true, "jusqu": true, "lorsqu": true, "puisqu": true, "quoiqu": true, "presqu": true, "quelqu": true,
	"dell": true, "all": true, "nell": true, "dall": true, "sull": true, "un": true, "quest": true, "quell": true}

// appendWord appends the word w of folded text to out: quotes around it dropped ('stop' is stop; customers' is
// customers; an elision typed before a space keeps its apostrophe) and each elided word before an
// apostrophe split off (qu'il is qu' and il).
func appendWord(out []string, w string) []string {
	w = strings.TrimLeft(w, "'")
	if t := strings.TrimRight(w, "'"); t != w && !elisions[t] {
		w = t
	}
	for {
		i := strings.IndexByte(w, '\'')
		if i <= 0 || i == len(w)-1 || !elisions[w[:i]] {
			break
		}
		out, w = append(out, w[:i+1]), w[i+1:]
	}
	if w != "" {
		out = append(out, w)
	}
	return out
}

// joinWords is words as evidence quotes them: spaced, but an elided word joined to the next (l'effacement).
func joinWords(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 && !strings.HasSuffix(words[i-1], "'") {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

// place is where a word of a person's text stands: its clause and sentence, and whether it is quoted.
type place struct {
	clause, sentence int32
	// quoted says the word stands in quotation marks; question that its sentence ends with a question mark.
	quoted, question bool
}

// shortLine is the length under which a line break ends a sentence: a person's one-line answers and sign-off
// lines end there, while a paragraph wrapped by the mail client goes on.
const shortLine = 45

// segment answers the words of folded text as tokens does, with each word's place: a comma or a spaced dash
// ends a clause; . ! ? ; … a blank line or a break after a short line end a sentence (and its clause), a
// question mark marking its words as a question's; quotation marks open and close a quote, which a sentence
// end closes too.
func segment(folded string) ([]string, []place) {
	words := make([]string, 0, len(folded)/6)
	at := make([]place, 0, len(folded)/6)
	var cur place
	start, line, first := -1, 0, 0
	end := func() {
		cur.clause++
		cur.sentence++
		cur.quoted = false
		first = len(words)
	}
	for i, r := range folded {
		if wordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			words = appendWord(words, folded[start:i])
			at = placed(at, cur, len(words))
			start = -1
		}
		switch r {
		case ',':
			cur.clause++
		case '-':
			if i > 0 && folded[i-1] == ' ' {
				cur.clause++
			}
		case '?':
			for k := first; k < len(at); k++ {
				at[k].question = true
			}
			end()
		case '.', '!', ';', '\u2026':
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
		words = appendWord(words, folded[start:])
		at = placed(at, cur, len(words))
	}
	return words, at
}

// placed gives the words appended since at was last extended (up to n) the place cur.
func placed(at []place, cur place, n int) []place {
	for len(at) < n {
		at = append(at, cur)
	}
	return at
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
// from my iPhone"); a quote above any text of the person's own is skipped (a reply written below the
// quote); with the text's lines and cut, the first line that is not the sender's own (the quote's
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
			if !seen && quotedNext(lines[i+1:]) {
				continue // a reply written below the quote: the person's text follows the quoted lines
			}
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

// quotedNext says whether the first line of rest that is not blank is a quoted (">") line.
func quotedNext(rest []string) bool {
	for _, line := range rest {
		if t := strings.TrimSpace(line); t != "" {
			return strings.HasPrefix(t, ">")
		}
	}
	return false
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

// quoteStart says whether the folded line t starts the quoted message (rest are the lines after it): a line
// ending in a verb of writing ("wrote:"), a separator (an "Original Message" line however many dashes frame
// it, "Sent from my iPhone"), a rule of underscores, a client's attribution line (see attribution) or a
// header block (see headerBlock).
func (r *Rules) quoteStart(t string, rest []string) bool {
	if t == "" {
		return false
	}
	if r.hasMarker(t) || strings.HasPrefix(t, "____") {
		return true
	}
	core := strings.Trim(t, frame)
	for _, s := range r.quoteSeparators {
		if strings.HasPrefix(t, s) || core == strings.Trim(s, frame) {
			return true
		}
	}
	return r.attribution(core, rest, strings.HasPrefix(t, "--")) || r.headerBlock(t, rest)
}

// frame are the characters a client draws around a separator or an attribution line (---- On … wrote ----,
// *From:*).
const frame = "-_=*~ "

// normalLine is a line folded with its spaces collapsed, as split reads it.
func normalLine(line string) string {
	return strings.Join(strings.Fields(fold(line)), " ")
}

// maxAttribution bounds the length of an attribution line (two wrapped lines of one).
const maxAttribution = 300

// attribution says whether core (a folded line without its frame; rest are the lines after it) is a mail
// client's attribution line: a lead word (On, Am, Le, El), a date or a time, and a verb of writing (wrote,
// schrieb, a écrit, escribió), ending with a colon or with the verb (anywhere when the line is framed by
// dashes), on one line or wrapped onto the next: "On Mon, 14 Sep 2026 at 09:12, Maya Chen <maya@x> wrote:",
// "Am Mo., 14. Sept. 2026 um 09:12 Uhr schrieb Felix Wagner <felix@x>:", "Am 14.09.26 um 09:12 schrieb
// Felix Wagner:", "---- On … Maya Chen wrote ----".
func (r *Rules) attribution(core string, rest []string, framed bool) bool {
	if lead, _, _ := strings.Cut(core, " "); !r.quoteLeads[lead] || !strings.ContainsAny(core, "0123456789") {
		return false
	}
	line := core
	if !strings.HasSuffix(line, ":") && len(rest) > 0 {
		line += " " + strings.Trim(normalLine(rest[0]), frame)
	}
	words := tokens(line)
	if len(line) > maxAttribution {
		return false
	}
	for _, v := range r.quoteVerbs {
		for i := 1; i+len(v) <= len(words); i++ {
			if slices.Equal(words[i:i+len(v)], v) && (framed || strings.HasSuffix(line, ":") || i+len(v) == len(words)) {
				return true
			}
		}
	}
	return false
}

// headerBlock says whether the folded line t starts a block of a quoted message's header fields: a From
// line with another field within the next four lines (Outlook: From, Sent, To, Subject), or a field with a
// From line after it (GMX, web.de: Gesendet, Von, An, Betreff); a field may be bold (*From:*).
func (r *Rules) headerBlock(t string, rest []string) bool {
	from, field := r.headerField(t)
	if !from && !field {
		return false
	}
	for _, next := range rest[:min(len(rest), 4)] {
		f, fl := r.headerField(normalLine(next))
		if (from && fl) || (field && f) {
			return true
		}
	}
	return false
}

// headerField says whether the folded line t is a From field or another header field of a quoted message.
func (r *Rules) headerField(t string) (from, field bool) {
	t = strings.TrimLeft(t, "*")
	t = strings.Replace(t, "*", "", 1)
	for _, f := range r.quoteFrom {
		from = from || strings.HasPrefix(t, f)
	}
	for _, f := range r.quoteFields {
		field = field || strings.HasPrefix(t, f)
	}
	return from, field
}
