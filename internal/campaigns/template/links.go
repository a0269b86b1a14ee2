package template

import (
	"bytes"
	"html"
	"strings"
)

// mode is how a body's links are found: the href of <a> tags in HTML, bare URLs in plain text.
type mode uint8

const (
	modeHTML mode = iota
	modePlain
	modes
)

// link is one http(s) link found in a text: the byte range of its text (an href's raw value, or the bare
// URL) and what tagging needs to know of its URL, worked out once.
type link struct {
	start, end int
	url        string // the URL itself (an href's entities decoded)
	frag       int    // where its fragment starts ("#"), or len(url)
	query      bool   // it has a "?"
	present    uint8  // the utm parameters it already has
}

// newLink analyses u, found at text[start:end].
func newLink(start, end int, u string) link {
	l := link{start: start, end: end, url: u, frag: len(u)}
	if i := strings.IndexByte(u, '#'); i >= 0 {
		l.frag = i
	}
	q := strings.IndexByte(u[:l.frag], '?')
	if q < 0 {
		return l
	}
	l.query = true
	for param := range strings.SplitSeq(u[q+1:l.frag], "&") {
		key, _, _ := strings.Cut(param, "=")
		for bit, name := range utmNames {
			if strings.EqualFold(key, name) {
				l.present |= 1 << bit
			}
		}
	}
	return l
}

// isWeb reports whether u is an http or https URL with something after the scheme.
func isWeb(u string) bool {
	for _, scheme := range [...]string{"http://", "https://"} {
		if len(u) > len(scheme) && strings.EqualFold(u[:len(scheme)], scheme) {
			return true
		}
	}
	return false
}

// maxPendingTag bounds the text of an <a> tag carried across variables while finding links at parse time,
// so a tag spread over many variables cannot make parsing quadratic (past it, links are found after
// rendering).
const maxPendingTag = 4096

// findLinks finds the links of every literal for both body modes, and marks a mode dynamic when a link
// could be built, continued or hidden by what renders next to a literal, so that mode's links are found in
// the rendered body instead. Links are what the rendered body holds either way; this only saves the scan.
//
// In HTML, values are escaped and cannot open a tag, close one or end a quoted attribute: a literal that
// ends inside an <a> tag whose link is settled is scanned again with the next literal, a placeholder
// standing for the value between them; anything less certain (a cut href that could still become a URL, a
// comment, a spintax group or the raw signature inside a tag) makes the mode dynamic. The signature's own
// links are found at render time (valuesMayLink). In plain text, a URL or a "://" at a literal's edge makes
// it dynamic, and so does a fallback that could carry a URL; values are checked at render time.
func (t *Template) findLinks() {
	t.walk(t.segs, true)
}

// walk finds the links of one sequence of segments; top reports that it is the template's own sequence
// rather than a spintax option.
func (t *Template) walk(segs []segment, top bool) {
	pending := ""
	for i := range segs {
		s := &segs[i]
		first, last := top && i == 0, i == len(segs)-1
		switch {
		case s.v != nil:
			t.vars = append(t.vars, s.v)
			t.signature = t.signature || s.v.field == fieldSignature
			t.dynamic[modePlain] = t.dynamic[modePlain] || s.v.hasDefault && linkish([]byte(s.v.def))
			if pending != "" && s.v.field == fieldSignature {
				t.dynamic[modeHTML], pending = true, ""
			} else if pending != "" {
				pending += "x"
			}
			continue
		case s.opts != nil:
			t.dynamic[modeHTML] = t.dynamic[modeHTML] || pending != ""
			pending = ""
			for _, opt := range s.opts {
				t.walk(opt, false)
			}
			continue
		}
		text := pending + s.lit
		links, cut, tail := scanHTML(text)
		for _, l := range links {
			if l.start >= len(pending) {
				l.start, l.end = l.start-len(pending), l.end-len(pending)
				s.links[modeHTML] = append(s.links[modeHTML], l)
			}
		}
		pending = ""
		if tail >= 0 && !(top && last) {
			if last || len(text)-tail > maxPendingTag {
				cut = true
			} else {
				pending = text[tail:]
			}
		}
		t.dynamic[modeHTML] = t.dynamic[modeHTML] || cut

		plain, open := scanPlain(s.lit)
		s.links[modePlain] = plain
		sep := strings.Index(s.lit, "://")
		cut = !first && (sep >= 0 && sep < len("https") || len(plain) > 0 && plain[0].start == 0)
		cut = cut || !(top && last) && (open || endsInScheme(s.lit))
		t.dynamic[modePlain] = t.dynamic[modePlain] || cut
	}
	t.dynamic[modeHTML] = t.dynamic[modeHTML] || pending != "" && !top
}

// linkish reports whether b holds a "://" or ends in the start of one, so it could make or complete a URL
// in a plain body.
func linkish(b []byte) bool {
	return bytes.Contains(b, []byte("://")) || bytes.HasSuffix(b, []byte(":")) || bytes.HasSuffix(b, []byte(":/"))
}

// endsInScheme reports whether s ends in ":", ":/" or "://", which text after it could complete into a URL.
func endsInScheme(s string) bool {
	return strings.HasSuffix(s, ":") || strings.HasSuffix(s, ":/") || strings.HasSuffix(s, "://")
}

// scanHTML finds the http(s) href of every <a> tag in text. cut reports that text ends inside a comment or
// inside an <a> tag whose link is not settled yet, or holds the end of a comment it did not open: what
// renders next to it could add, continue or hide a link. tail, when not -1, is where an <a> tag starts that
// text ends inside of with its link settled.
func scanHTML(text string) (links []link, cut bool, tail int) {
	i := 0
	for {
		lt := strings.IndexByte(text[i:], '<')
		if lt < 0 {
			return links, cut || strings.Contains(text[i:], "-->"), -1
		}
		cut = cut || strings.Contains(text[i:i+lt], "-->")
		at := i + lt
		i = at + 1
		if strings.HasPrefix(text[i:], "!--") {
			end := strings.Index(text[i+3:], "-->")
			if end < 0 {
				return links, true, -1
			}
			i += 3 + end + 3
			continue
		}
		if i == len(text) || i+1 == len(text) && (text[i] == 'a' || text[i] == 'A') {
			return links, true, -1
		}
		if text[i] != 'a' && text[i] != 'A' || !isSpace(text[i+1]) && text[i+1] != '>' && text[i+1] != '/' {
			continue
		}
		var st tagState
		switch i, st = scanTag(text, i+1, &links); st {
		case tagOpen:
			return links, true, -1
		case tagSettled:
			return links, cut, at
		}
	}
}

// tagState is where scanning an <a> tag stopped.
type tagState uint8

const (
	// tagClosed: the tag's ">" was reached.
	tagClosed tagState = iota
	// tagSettled: the text ended inside the tag, but after its href (or inside an href that cannot become
	// an http(s) URL), so nothing after it can change the tag's link.
	tagSettled
	// tagOpen: the text ended inside the tag where what follows could still make or change its link.
	tagOpen
)

// scanTag reads the attributes of an <a> tag from text[i] to its ">", adding its href to links when it is
// an http(s) URL (the first href, as browsers read it). It returns where it stopped and how.
func scanTag(text string, i int, links *[]link) (int, tagState) {
	seen := false
	ended := func(settled bool) (int, tagState) {
		if settled {
			return len(text), tagSettled
		}
		return len(text), tagOpen
	}
	for {
		for i < len(text) && (isSpace(text[i]) || text[i] == '/') {
			i++
		}
		if i == len(text) {
			return ended(seen)
		}
		if text[i] == '>' {
			return i + 1, tagClosed
		}
		name := i
		for i < len(text) && !isSpace(text[i]) && text[i] != '=' && text[i] != '>' && text[i] != '/' {
			i++
		}
		href := !seen && strings.EqualFold(text[name:i], "href")
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		if i == len(text) {
			return ended(seen)
		}
		if text[i] != '=' {
			continue
		}
		i++
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		start, end := i, -1
		if i < len(text) && (text[i] == '"' || text[i] == '\'') {
			start = i + 1
			if close := strings.IndexByte(text[start:], text[i]); close >= 0 {
				end, i = start+close, start+close+1
			}
		} else {
			for i < len(text) && !isSpace(text[i]) && text[i] != '>' {
				i++
			}
			if i < len(text) {
				end = i
			}
		}
		if end < 0 {
			return ended(seen || href && !mayBecomeWeb(text[start:]))
		}
		if href {
			seen = true
			if u := html.UnescapeString(strings.TrimSpace(text[start:end])); isWeb(u) {
				*links = append(*links, newLink(start, end, u))
			}
		}
	}
}

// mayBecomeWeb reports whether the start of an href value could continue into an http(s) URL: it is empty,
// holds an entity, or agrees with "http://" or "https://" as far as it goes.
func mayBecomeWeb(partial string) bool {
	p := strings.TrimLeft(partial, " \t\n\r\f")
	if strings.IndexByte(p, '&') >= 0 {
		return true
	}
	for _, scheme := range [...]string{"http://", "https://"} {
		n := min(len(p), len(scheme))
		if strings.EqualFold(p[:n], scheme[:n]) {
			return true
		}
	}
	return false
}

// isSpace reports whether c is HTML or URL-ending ASCII white space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// scanPlain finds the bare http(s) URLs of text. open reports that one runs to the end of text (before its
// trailing punctuation is trimmed), where text rendered after it would continue it.
func scanPlain(text string) (links []link, open bool) {
	i := 0
	for {
		sep := strings.Index(text[i:], "://")
		if sep < 0 {
			return links, open
		}
		sep += i
		i = sep + 3
		start := -1
		for _, scheme := range [...]string{"https", "http"} {
			if s := sep - len(scheme); s >= 0 && strings.EqualFold(text[s:sep], scheme) && (s == 0 || !isWordByte(text[s-1])) {
				start = s
				break
			}
		}
		if start < 0 {
			continue
		}
		end := i
		for end < len(text) && !endsURL(text[end]) {
			end++
		}
		open = open || end == len(text)
		end = trimURL(text[start:end]) + start
		if end == i {
			continue
		}
		links = append(links, newLink(start, end, text[start:end]))
		i = end
	}
}

// isWordByte reports whether c is an ASCII letter or digit (which would make "xhttp://" not a URL).
func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// endsURL reports whether c cannot be part of a bare URL in plain text.
func endsURL(c byte) bool {
	return c <= ' ' || c == 0x7f || strings.IndexByte("<>\"`{}|\\^", c) >= 0
}

// trimURL is the length of u without the sentence punctuation that follows a URL in prose: trailing
// ".,;:!?'*" and closing brackets that the URL did not open. Brackets are counted once, so trimming stays
// linear however many there are.
func trimURL(u string) int {
	parens := strings.Count(u, ")") - strings.Count(u, "(")
	squares := strings.Count(u, "]") - strings.Count(u, "[")
	for len(u) > 0 {
		switch c := u[len(u)-1]; {
		case strings.IndexByte(".,;:!?'*", c) >= 0:
		case c == ')' && parens > 0:
			parens--
		case c == ']' && squares > 0:
			squares--
		default:
			return len(u)
		}
		u = u[:len(u)-1]
	}
	return 0
}
