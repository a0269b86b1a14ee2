package template

import (
	"fmt"
	"strings"
	"sync"

	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Data is everything a message may be personalised with, mapped by the caller from its own records.
type Data struct {
	Contact  Contact
	Sender   Sender
	Campaign Campaign
	// App holds the objects captured by earlier app_action steps by output key, as decoded from JSON.
	App map[string]any
}

// Contact is the recipient's standard and custom fields.
type Contact struct {
	FirstName, LastName, Email, Company, Phone string
	Custom                                     map[string]string
}

// Sender is the sending mailbox: its display name, address and signatures.
type Sender struct {
	Name string
	// FirstName, when empty, is the first word of Name.
	FirstName                     string
	Email                         string
	SignatureHTML, SignaturePlain string
}

// Campaign is what a message may say about its campaign.
type Campaign struct {
	Name string
}

// Options are what one send decides beyond the data: the spintax seed and the link treatments.
type Options struct {
	// Seed picks the spintax options; derive it with Seed so every re-render of a (contact, step) agrees.
	Seed uint64
	// UTM, when set, tags every link (see NewUTM).
	UTM *UTM
	// Links, when set, replaces each link with what it returns for the link's number (0 first, in document
	// order) and its URL (already UTM-tagged): a tracking URL with a ticket per link.
	Links func(index int, url string) string
}

// Message is one step's compiled content; a nil part renders as empty (a text-only step has no HTML).
type Message struct {
	Subject, Plain, HTML *Template
}

// ParseMessage compiles a step's subject, plain body and HTML body, naming the part in an error
// ("body_html: unclosed ..."). An empty source leaves its part nil.
func ParseMessage(subject, plain, html string) (*Message, error) {
	m := &Message{}
	for _, part := range []struct {
		name string
		src  string
		dst  **Template
	}{{"subject", subject, &m.Subject}, {"body_plain", plain, &m.Plain}, {"body_html", html, &m.HTML}} {
		if part.src == "" {
			continue
		}
		t, err := Parse(part.src)
		if err != nil {
			e := apierror.From(err)
			return nil, apierror.BadRequest(e.Code, part.name+": "+e.Message)
		}
		*part.dst = t
	}
	return m, nil
}

// Link is one link of a rendered message, as tracking records it.
type Link struct {
	// Index is the link's number in document order, HTML body first, from 0.
	Index int
	// URL is the link's URL as rendered (an href's entities decoded), UTM-tagged when tagging is on: where a
	// tracked click redirects.
	URL string
}

// Rendered is a message filled in for one contact.
type Rendered struct {
	Subject, Plain, HTML string
	// Unresolved lists the variables with no value and no fallback, as written ("FirstName",
	// "Custom.industry"), each once, in order of first appearance (subject, HTML body, plain body).
	Unresolved []string
	// Links lists each link number once, in order.
	Links []Link
}

// Sendable refuses a message that must not be sent: one with an unresolved variable. Every path that sends
// calls it, so a message that would greet "Hi ," never leaves.
func (r Rendered) Sendable() error {
	if len(r.Unresolved) == 0 {
		return nil
	}
	return apierror.BadRequest("unresolved_variables",
		fmt.Sprintf("The message has variables with no value and no fallback: %s.", strings.Join(r.Unresolved, ", "))).
		WithFix("Give the contact a value for each, or add a fallback such as " + fallbackHint + ".")
}

// renderer is the scratch state of one Render, pooled so rendering many contacts reuses its buffers.
type renderer struct {
	d   *Data
	o   Options
	out []byte
	// raw receives a body whose links are found after rendering.
	raw        []byte
	html       bool
	mode       mode
	noLinks    bool
	sigLinks   []link // the links of the HTML signature, found before an HTML body renders
	unresolved []string
	links      []Link
	// numbered runs parallel to links: what numbering and rewriting need to know of each.
	numbered []numbered
	// byURL indexes the HTML body's untaken link numbers by URL once a message has many links.
	byURL map[string][]int
}

// numbered is what a Render knows of one link number besides its Link.
type numbered struct {
	base      string // the URL before tagging, matched by the plain body's links
	fromHTML  bool   // the HTML body found it
	taken     bool   // a plain-body link shares its number already (or found it)
	rewritten string // the rewriter's answer, once asked
	rewrote   bool
}

// renderers pools scratch state; a renderer whose buffer grew past maxPooledBuffer (a huge value) is
// dropped rather than kept.
var renderers = sync.Pool{New: func() any { return &renderer{} }}

const maxPooledBuffer = 1 << 20

// Render fills the message in for one contact. It never fails: what did not resolve is in Unresolved, and
// Sendable turns that into the error that stops a send. A nil d renders every variable as unresolved.
func (m *Message) Render(d *Data, o Options) Rendered {
	if d == nil {
		d = &Data{}
	}
	r := renderers.Get().(*renderer)
	r.d, r.o = d, o
	r.out, r.unresolved, r.links, r.numbered = r.out[:0], r.unresolved[:0], r.links[:0], r.numbered[:0]

	r.out = r.out[:foldLines(r.out[:r.part(m.Subject, false, modePlain, true)])]
	subject := len(r.out)
	htmlEnd := r.part(m.HTML, true, modeHTML, false)
	plainEnd := r.part(m.Plain, false, modePlain, false)

	all := string(r.out)
	out := Rendered{Subject: all[:subject], HTML: all[subject:htmlEnd], Plain: all[htmlEnd:plainEnd]}
	if len(r.unresolved) > 0 {
		out.Unresolved = append([]string(nil), r.unresolved...)
	}
	if len(r.links) > 0 {
		out.Links = append([]Link(nil), r.links...)
	}
	clear(r.links)
	clear(r.numbered)
	r.d, r.o, r.sigLinks, r.byURL = nil, Options{}, nil, nil
	if cap(r.out) <= maxPooledBuffer && cap(r.raw) <= maxPooledBuffer {
		renderers.Put(r)
	}
	return out
}

// part renders t at the end of r.out and returns the new end. Links are treated unless noLinks (subjects).
func (r *renderer) part(t *Template, html bool, md mode, noLinks bool) int {
	if t == nil {
		return len(r.out)
	}
	r.html, r.mode, r.noLinks = html, md, noLinks
	if noLinks || !t.dynamic[md] && !r.valuesMayLink(t, md) {
		r.seq(t.segs)
		return len(r.out)
	}
	out := r.out
	r.out, r.noLinks = r.raw[:0], true
	r.seq(t.segs)
	r.raw, r.out, r.noLinks = r.out, out, false
	text := string(r.raw)
	var links []link
	if md == modeHTML {
		links, _, _ = scanHTML(text)
	} else {
		links, _ = scanPlain(text)
	}
	r.emit(text, links)
	return len(r.out)
}

// valuesMayLink reports whether this contact's values could make or change a link of t, so the part's
// links must be found after rendering. In a plain body that is a value holding a URL or the start of one;
// in an HTML body, where values are escaped, only a raw HTML signature that ends inside a tag or comment.
// Otherwise it keeps the signature's own links for signature to treat.
func (r *renderer) valuesMayLink(t *Template, md mode) bool {
	if md == modeHTML {
		r.sigLinks = nil
		if !t.signature || strings.TrimSpace(r.d.Sender.SignatureHTML) == "" {
			return false
		}
		var cut bool
		var tail int
		r.sigLinks, cut, tail = scanHTML(r.d.Sender.SignatureHTML)
		return cut || tail >= 0
	}
	start := len(r.out)
	defer func() { r.out = r.out[:start] }()
	for _, v := range t.vars {
		r.out = r.out[:start]
		r.value(v)
		if linkish(r.out[start:]) {
			return true
		}
	}
	return false
}

// seq renders segments.
func (r *renderer) seq(segs []segment) {
	for i := range segs {
		s := &segs[i]
		switch {
		case s.v != nil:
			r.variable(s.v)
		case s.opts != nil:
			r.seq(s.opts[choose(r.o.Seed, s.group, len(s.opts))])
		case r.noLinks:
			r.out = append(r.out, s.lit...)
		default:
			r.emit(s.lit, s.links[r.mode])
		}
	}
}

// emit writes text with each of its links treated.
func (r *renderer) emit(text string, links []link) {
	prev := 0
	for i := range links {
		l := &links[i]
		r.out = append(r.out, text[prev:l.start]...)
		r.link(text[l.start:l.end], l)
		prev = l.end
	}
	r.out = append(r.out, text[prev:]...)
}

// link numbers l, records it, and writes it tagged or rewritten (as written when neither applies).
func (r *renderer) link(written string, l *link) {
	n := r.number(l)
	u := r.links[n].URL
	if r.o.Links != nil {
		if nb := &r.numbered[n]; !nb.rewrote {
			nb.rewritten, nb.rewrote = r.o.Links(n, u), true
		}
		u = r.numbered[n].rewritten
	} else if u == l.url {
		r.out = append(r.out, written...)
		return
	}
	if r.html {
		r.out = appendEscaped(r.out, u)
	} else {
		r.out = append(r.out, u...)
	}
}

// number is l's link number: in a plain body, that of the first HTML link with the same URL not matched
// yet; otherwise the next one.
func (r *renderer) number(l *link) int {
	if n, ok := r.matchHTML(l.url); ok {
		return n
	}
	n := len(r.links)
	u := l.url
	if r.o.UTM != nil {
		u = r.o.UTM.tag(l, n)
	}
	r.links = append(r.links, Link{Index: n, URL: u})
	r.numbered = append(r.numbered, numbered{base: l.url, fromHTML: r.html, taken: !r.html})
	return n
}

// matchHTML finds, for a plain-body link, the first HTML link with the same URL that no plain-body link
// shares yet, and takes it. Past a few dozen links it indexes them by URL, so a body with thousands of
// links is not quadratic.
func (r *renderer) matchHTML(url string) (int, bool) {
	if r.html {
		return 0, false
	}
	if len(r.numbered) <= 64 {
		for i := range r.numbered {
			if nb := &r.numbered[i]; nb.fromHTML && !nb.taken && nb.base == url {
				nb.taken = true
				return i, true
			}
		}
		return 0, false
	}
	if r.byURL == nil {
		r.byURL = map[string][]int{}
		for i, nb := range r.numbered {
			if nb.fromHTML {
				r.byURL[nb.base] = append(r.byURL[nb.base], i)
			}
		}
	}
	if queue := r.byURL[url]; len(queue) > 0 {
		r.byURL[url] = queue[1:]
		r.numbered[queue[0]].taken = true
		return queue[0], true
	}
	return 0, false
}

// unresolve records a variable that did not resolve, once.
func (r *renderer) unresolve(name string) {
	for _, n := range r.unresolved {
		if n == name {
			return
		}
	}
	r.unresolved = append(r.unresolved, name)
}

// foldLines turns each CRLF, CR or LF of a subject into one space, in place, and returns the new length:
// a header line break in a subject would end the header.
func foldLines(b []byte) int {
	n := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\r' || c == '\n' {
			if c == '\r' && i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			c = ' '
		}
		b[n] = c
		n++
	}
	return n
}
