package template

import (
	"bytes"
	"fmt"
	"html"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// mode is how a body's links are found: the href of <a> tags in HTML, bare URLs in plain text.
type mode uint8

const (
	modeHTML mode = iota
	modePlain
	modes
)

// utm parameter bits, in the order they are added.
const (
	utmSource uint8 = 1 << iota
	utmMedium
	utmCampaign
	utmContent
	utmAll = utmSource | utmMedium | utmCampaign | utmContent
)

// utmNames are the parameters by bit position.
var utmNames = [...]string{"utm_source", "utm_medium", "utm_campaign", "utm_content"}

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

// findLinks finds the links of every literal for both body modes, and marks a mode dynamic when a link
// could be built, continued or hidden by what renders next to a literal, so that mode's links are found in
// the rendered body instead. Links are what the rendered body holds either way; this only saves the scan.
//
// In HTML, values are escaped and cannot open a tag: only a literal cut inside an <a> tag or a comment, and
// the raw signature, make it dynamic. In plain text, a URL or a "://" at a literal's edge does, and so does
// a fallback that could carry a URL; a value that could is checked at render time (valuesMayLink).
func (t *Template) findLinks() {
	var walk func(segs []segment, top bool)
	walk = func(segs []segment, top bool) {
		for i := range segs {
			s := &segs[i]
			first, last := top && i == 0, top && i == len(segs)-1
			switch {
			case s.v != nil:
				t.vars = append(t.vars, s.v)
				t.dynamic[modeHTML] = t.dynamic[modeHTML] || s.v.field == fieldSignature
				t.dynamic[modePlain] = t.dynamic[modePlain] || s.v.hasDefault && linkish([]byte(s.v.def))
				continue
			case s.opts != nil:
				for _, opt := range s.opts {
					walk(opt, false)
				}
				continue
			}
			var cut bool
			s.links[modeHTML], cut = scanHTML(s.lit)
			t.dynamic[modeHTML] = t.dynamic[modeHTML] || cut
			plain, open := scanPlain(s.lit)
			s.links[modePlain] = plain
			sep := strings.Index(s.lit, "://")
			cut = !first && (sep >= 0 && sep < len("https") || len(plain) > 0 && plain[0].start == 0)
			cut = cut || !last && (open || endsInScheme(s.lit))
			t.dynamic[modePlain] = t.dynamic[modePlain] || cut
		}
	}
	walk(t.segs, true)
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
// an <a> tag, or holds the end of a comment it did not open: what renders next to it could add, continue or
// hide a link, so the links of the whole rendered body must be found after rendering instead.
func scanHTML(text string) (links []link, cut bool) {
	i := 0
	for {
		lt := strings.IndexByte(text[i:], '<')
		if lt < 0 {
			return links, cut || strings.Contains(text[i:], "-->")
		}
		cut = cut || strings.Contains(text[i:i+lt], "-->")
		i += lt + 1
		if strings.HasPrefix(text[i:], "!--") {
			end := strings.Index(text[i+3:], "-->")
			if end < 0 {
				return links, true
			}
			i += 3 + end + 3
			continue
		}
		if i == len(text) || i+1 == len(text) && (text[i] == 'a' || text[i] == 'A') {
			return links, true
		}
		if text[i] != 'a' && text[i] != 'A' || !isSpace(text[i+1]) && text[i+1] != '>' && text[i+1] != '/' {
			continue
		}
		var complete bool
		if i, complete = scanTag(text, i+1, &links); !complete {
			return links, true
		}
	}
}

// scanTag reads the attributes of a tag from text[i] to its ">", adding an http(s) href to links. It
// returns where it stopped and whether it reached the ">".
func scanTag(text string, i int, links *[]link) (int, bool) {
	for {
		for i < len(text) && (isSpace(text[i]) || text[i] == '/') {
			i++
		}
		if i == len(text) {
			return i, false
		}
		if text[i] == '>' {
			return i + 1, true
		}
		name := i
		for i < len(text) && !isSpace(text[i]) && text[i] != '=' && text[i] != '>' && text[i] != '/' {
			i++
		}
		attr := text[name:i]
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		if i == len(text) {
			return i, false
		}
		if text[i] != '=' {
			continue
		}
		i++
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		if i == len(text) {
			return i, false
		}
		start, end := i, 0
		if q := text[i]; q == '"' || q == '\'' {
			close := strings.IndexByte(text[i+1:], q)
			if close < 0 {
				return len(text), false
			}
			start, end = i+1, i+1+close
			i = end + 1
		} else {
			for i < len(text) && !isSpace(text[i]) && text[i] != '>' {
				i++
			}
			if i == len(text) {
				return i, false
			}
			end = i
		}
		if strings.EqualFold(attr, "href") {
			if u := html.UnescapeString(strings.TrimSpace(text[start:end])); isWeb(u) {
				*links = append(*links, newLink(start, end, u))
			}
		}
	}
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
// ".,;:!?'" and closing brackets that the URL did not open.
func trimURL(u string) int {
	for len(u) > 0 {
		c := u[len(u)-1]
		switch {
		case strings.IndexByte(".,;:!?'*", c) >= 0:
		case c == ')' && strings.Count(u, "(") < strings.Count(u, ")"):
		case c == ']' && strings.Count(u, "[") < strings.Count(u, "]"):
		default:
			return len(u)
		}
		u = u[:len(u)-1]
	}
	return 0
}

// MaxUTMSourceLen is the most characters utm_source may have.
const MaxUTMSourceLen = 128

// CheckUTMSource validates a campaign's utm_source as a person sets it, so create, update and duplicate
// refuse the same values with the same message.
func CheckUTMSource(s string) error {
	if n := utf8.RuneCountInString(s); n > MaxUTMSourceLen {
		return apierror.BadRequest("invalid_utm_source", fmt.Sprintf("utm_source must be at most %d characters; it has %d.", MaxUTMSourceLen, n))
	}
	return nil
}

// UTM is a campaign's link tagging, resolved once per campaign: defaults applied and values escaped, so
// tagging a link at render time only appends.
type UTM struct {
	// params are "utm_x=value" for source, medium and campaign, query-escaped.
	params [3]string
}

// NewUTM resolves a campaign's utm_source, utm_medium and utm_campaign: empty values default to "outflow",
// "email" and the campaign name as a slug (lowercase ASCII letters and digits, other runs as "-"; "campaign"
// when the name has neither).
func NewUTM(source, medium, campaign, campaignName string) *UTM {
	if source == "" {
		source = "outflow"
	}
	if medium == "" {
		medium = "email"
	}
	if campaign == "" {
		campaign = slug(campaignName)
	}
	u := &UTM{}
	for i, v := range [...]string{source, medium, campaign} {
		u.params[i] = utmNames[i] + "=" + url.QueryEscape(v)
	}
	return u
}

// slug is name in lowercase ASCII letters and digits with every other run as one "-", trimmed.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteByte(c)
			dash = false
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "campaign"
	}
	return b.String()
}

// tag is l's URL with the utm parameters it lacks, utm_content naming link number index ("link-1" for 0),
// inserted before the fragment.
func (u *UTM) tag(l *link, index int) string {
	missing := utmAll &^ l.present
	if missing == 0 {
		return l.url
	}
	var b strings.Builder
	b.Grow(len(l.url) + len(u.params[0]) + len(u.params[1]) + len(u.params[2]) + 24)
	b.WriteString(l.url[:l.frag])
	sep := byte('&')
	if !l.query {
		sep = '?'
	} else if last := l.url[l.frag-1]; last == '?' || last == '&' {
		sep = 0
	}
	for bit := range utmNames {
		if missing&(1<<bit) == 0 {
			continue
		}
		if sep != 0 {
			b.WriteByte(sep)
		}
		sep = '&'
		if bit < len(u.params) {
			b.WriteString(u.params[bit])
			continue
		}
		b.WriteString("utm_content=link-")
		b.WriteString(strconv.Itoa(index + 1))
	}
	b.WriteString(l.url[l.frag:])
	return b.String()
}
