package template

import (
	"fmt"
	"unicode/utf8"

	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Limits on what Parse accepts, so a template can neither exhaust memory nor recurse without bound.
const (
	// MaxLen is the most characters one subject or body may have.
	MaxLen = 200_000
	// MaxDepth is how deeply spintax groups may nest ({a|{b|{c|d}}} nests three deep).
	MaxDepth = 10
)

// Template is one compiled subject or body. It is immutable, so one parse serves every contact and
// goroutine; render it through a Message.
type Template struct {
	segs []segment
	// dynamic reports, per body mode, that a link's text is built by variables or spintax (or crosses a
	// segment), so its links are found in the rendered text rather than at parse time.
	dynamic [modes]bool
	// vars are the template's variables, whose values are checked for URLs before a plain body is rendered.
	vars []*variable
	// signature reports that the template inserts the signature, whose HTML links are found at render time.
	signature bool
}

// segment is one step of a compiled program: literal text with its links, a variable, or a spintax group.
type segment struct {
	lit   string
	links [modes][]link
	v     *variable
	opts  [][]segment
	group uint64 // the spintax group's number in the template, in pre-order
}

// brace is a single "{" whose matching "}" was found, and whether a "|" stands at its level (spintax).
type brace struct {
	close int
	pipe  bool
}

// parser holds what the first pass learned about the source: where each variable ends and where each
// single brace closes, so the second pass builds segments in one linear walk.
type parser struct {
	src     string
	actions map[int]int
	braces  map[int]brace
	groups  uint64
}

// Parse compiles one subject or body. Errors are 400 invalid_template and name the rule broken and its
// line and column, for a person to fix in an editor.
func Parse(src string) (*Template, error) {
	if n := utf8.RuneCountInString(src); n > MaxLen {
		return nil, invalid(fmt.Sprintf("a template may have at most %d characters; this one has %d", MaxLen, n))
	}
	p := &parser{src: src, actions: map[int]int{}, braces: map[int]brace{}}
	if err := p.scan(); err != nil {
		return nil, err
	}
	segs, err := p.seq(0, len(src), 0)
	if err != nil {
		return nil, err
	}
	t := &Template{segs: segs}
	t.findLinks()
	return t, nil
}

// invalid is the one error of a template that does not compile.
func invalid(msg string) error {
	return apierror.BadRequest("invalid_template", msg)
}

// errorAt is invalid with the position of byte offset off, counted in lines and characters from 1.
func (p *parser) errorAt(off int, rule string) error {
	line, col := 1, 1
	for _, r := range p.src[:off] {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return invalid(fmt.Sprintf("%s at line %d column %d", rule, line, col))
}

// opensVariable reports whether the "{" at i opens a variable: "{{" not followed by a third brace.
func opensVariable(s string, i int) bool {
	return i+1 < len(s) && s[i+1] == '{' && (i+2 >= len(s) || s[i+2] != '{')
}

// scan is the first pass: it finds every variable's end and every single brace's match, and refuses a
// spintax group that never closes.
func (p *parser) scan() error {
	type open struct {
		at   int
		pipe bool
	}
	var stack []open
	s := p.src
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			if opensVariable(s, i) {
				end, err := p.variableEnd(i)
				if err != nil {
					return err
				}
				p.actions[i] = end
				i = end - 1
				continue
			}
			stack = append(stack, open{at: i})
		case '|':
			if len(stack) > 0 {
				stack[len(stack)-1].pipe = true
			}
		case '}':
			if len(stack) > 0 {
				o := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				p.braces[o.at] = brace{close: i, pipe: o.pipe}
			}
		}
	}
	for _, o := range stack {
		if o.pipe {
			return p.errorAt(o.at, `unbalanced "{" in spintax (close the group with "}")`)
		}
	}
	return nil
}

// variableEnd finds the end (just past "}}") of the variable opened at i. A variable stays on one line,
// so a missing "}}" is reported where it was opened; "}}" inside a quoted fallback does not close it.
func (p *parser) variableEnd(i int) (int, error) {
	s := p.src
	for j := i + 2; j < len(s); j++ {
		switch s[j] {
		case '\n', '\r':
			return 0, p.errorAt(i, `unclosed "{{" (close it with "}}" on the same line)`)
		case '"':
			end, ok := stringEnd(s, j)
			if !ok {
				return 0, p.errorAt(j, `unclosed string in "{{ }}" (end it with a double quote)`)
			}
			j = end - 1
		case '}':
			if j+1 < len(s) && s[j+1] == '}' {
				return j + 2, nil
			}
		}
	}
	return 0, p.errorAt(i, `unclosed "{{" (close it with "}}" on the same line)`)
}

// stringEnd finds the end (just past the closing quote) of the double-quoted string starting at i, on one
// line, honouring backslash escapes.
func stringEnd(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		case '\n', '\r':
			return 0, false
		}
	}
	return 0, false
}

// seq compiles src[from:to] into segments; depth is the number of spintax groups around it.
func (p *parser) seq(from, to, depth int) ([]segment, error) {
	var segs []segment
	lit := from
	flush := func(at int) {
		if at > lit {
			segs = append(segs, segment{lit: p.src[lit:at]})
		}
	}
	for i := from; i < to; {
		if p.src[i] != '{' {
			i++
			continue
		}
		if end, ok := p.actions[i]; ok {
			flush(i)
			v, err := p.variable(i, end)
			if err != nil {
				return nil, err
			}
			segs = append(segs, segment{v: v})
			i, lit = end, end
			continue
		}
		b, ok := p.braces[i]
		if !ok || !b.pipe {
			i++
			continue
		}
		if depth >= MaxDepth {
			return nil, p.errorAt(i, fmt.Sprintf("spintax nested deeper than %d levels", MaxDepth))
		}
		flush(i)
		g, err := p.group(i, b.close, depth)
		if err != nil {
			return nil, err
		}
		segs = append(segs, g)
		i, lit = b.close+1, b.close+1
	}
	flush(to)
	return segs, nil
}

// group compiles the spintax group between the braces at open and close, splitting it at the pipes of its
// own level (not those inside variables or nested braces).
func (p *parser) group(open, close, depth int) (segment, error) {
	g := segment{group: p.groups}
	p.groups++
	start := open + 1
	option := func(end int) error {
		opt, err := p.seq(start, end, depth+1)
		g.opts = append(g.opts, opt)
		start = end + 1
		return err
	}
	for j := open + 1; j < close; {
		if end, ok := p.actions[j]; ok {
			j = end
			continue
		}
		if nb, ok := p.braces[j]; ok {
			j = nb.close + 1
			continue
		}
		if p.src[j] == '|' {
			if err := option(j); err != nil {
				return segment{}, err
			}
		}
		j++
	}
	return g, option(close)
}
