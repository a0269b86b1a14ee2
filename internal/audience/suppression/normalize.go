package suppression

import (
	"net/mail"
	"strings"
)

// Kind says whether an entry suppresses one address or a whole domain.
type Kind string

// The kinds of entry.
const (
	KindEmail  Kind = "email"
	KindDomain Kind = "domain"
)

// maxValue is the longest value stored (an address is at most 320 characters).
const maxValue = 320

// Normalize reads one value as a suppression entry: an address (`Ada <ada@example.com>` and `ADA@Example.com`
// both become `ada@example.com`), a domain (`example.com`, `@example.com`), lowercased and trimmed. ok is
// false for anything else.
func Normalize(raw string) (kind Kind, value string, ok bool) {
	v := strings.TrimSpace(raw)
	if v == "" || len(v) > 2*maxValue {
		return "", "", false
	}
	if d, found := strings.CutPrefix(v, "@"); found {
		d = strings.ToLower(strings.TrimSuffix(d, "."))
		return KindDomain, d, validDomain(d)
	}
	if !strings.Contains(v, "@") {
		d := strings.ToLower(strings.TrimSuffix(v, "."))
		return KindDomain, d, validDomain(d)
	}
	address, plain := plainAddress(v)
	if !plain {
		parsed, err := mail.ParseAddress(v)
		if err != nil {
			return "", "", false
		}
		address = parsed.Address
	}
	a := strings.ToLower(address)
	local, domain, found := strings.Cut(a, "@")
	if !found || local == "" || len(local) > 64 || len(a) > maxValue || !validDomain(domain) {
		return "", "", false
	}
	return KindEmail, a, true
}

// plainAddress recognizes the common form, a bare dot-atom address such as ada.l+x@example.com, which
// mail.ParseAddress would answer unchanged; it is read without the parser (an import of 50,000 rows spent
// a third of its parsing time there). Anything else (a display name, quotes, comments, non-ASCII) is left to
// the parser.
func plainAddress(v string) (string, bool) {
	at := strings.IndexByte(v, '@')
	if at <= 0 || at == len(v)-1 || strings.IndexByte(v[at+1:], '@') >= 0 {
		return "", false
	}
	return v, dotAtom(v[:at]) && dotAtom(v[at+1:])
}

// dotAtom reports whether s is atoms of RFC 5322 atext joined by single dots.
func dotAtom(s string) bool {
	prevDot := true // a leading dot is refused like a doubled one
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if prevDot {
				return false
			}
			prevDot = true
			continue
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0:
		default:
			return false
		}
		prevDot = false
	}
	return !prevDot
}

// validDomain accepts an ASCII host name (IDNs in their xn-- form) with at least two labels and a
// non-numeric top-level label.
func validDomain(d string) bool {
	if len(d) < 3 || len(d) > 253 {
		return false
	}
	labels, start, numeric := 0, 0, true // numeric: the current label has digits only
	for i := 0; i <= len(d); i++ {
		if i == len(d) || d[i] == '.' {
			l := d[start:i]
			if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
				return false
			}
			labels++
			if i == len(d) {
				return labels >= 2 && !numeric
			}
			start, numeric = i+1, true
			continue
		}
		switch c := d[i]; {
		case c >= 'a' && c <= 'z', c == '-':
			numeric = false
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return false
}
