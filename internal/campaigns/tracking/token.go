package tracking

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Kind names what a token opens: the pixel, a link redirect or the unsubscribe page. Each kind has its own
// signing key and its own byte in the payload, so a token of one kind never validates as another.
type Kind byte

// The three kinds of token a campaign message carries, and the click identification ticket a click redirect
// adds to the link it redirects to.
const (
	// KindOpen is the open pixel's token.
	KindOpen Kind = 'o'
	// KindClick is a tracked link's token; it carries the original URL so the redirect needs no database read.
	KindClick Kind = 'c'
	// KindUnsubscribe is the List-Unsubscribe link's token.
	KindUnsubscribe Kind = 'u'
	// KindTicket is the click identification ticket (website-visit attribution): the send, the link and when
	// it was clicked.
	KindTicket Kind = 't'
)

// String names the kind as the key-derivation label and error messages spell it.
func (k Kind) String() string {
	switch k {
	case KindOpen:
		return "open"
	case KindClick:
		return "click"
	case KindUnsubscribe:
		return "unsubscribe"
	case KindTicket:
		return "ticket"
	}
	return fmt.Sprintf("kind(%d)", byte(k))
}

const (
	// tokenVersion is the payload layout below; a new layout takes a new version so old links keep working
	// only as long as their version is still parsed.
	tokenVersion = 1
	// macSize is the HMAC-SHA256 tag truncated to 128 bits: ample against forgery, and it keeps pixel URLs short.
	macSize = 16
	// headerSize is version, kind, organization id and send-task id.
	headerSize = 1 + 1 + 16 + 16
	// clickExtra is the link index and the URL length that follow the header in a click token.
	clickExtra = 2 + 2
	// ticketExtra is the link index and the click time (Unix seconds) that follow the header in a ticket.
	ticketExtra = 2 + 8
	// keyLabel prefixes the HKDF info string; the kind's name follows ("outflow/tracking/v1/click").
	keyLabel = "outflow/tracking/v1/"
)

// MaxURLLength bounds the original URL a click token carries (bytes). Longer links are sent untracked by
// the caller; the bound keeps tokens, and so the work an attacker can make Parse do, small.
const MaxURLLength = 2048

// MaxTokenLength bounds an encoded token (characters): the longest click token, in unpadded base64. Parse
// refuses anything longer before decoding it.
const MaxTokenLength = ((headerSize+clickExtra+MaxURLLength+macSize)*8 + 5) / 6

// ErrInvalidToken is the one error Parse returns for any token it will not honour (forged, truncated,
// altered, of another kind, of an unknown version, signed by a key this deployment does not hold, or too
// long), so callers answer all of them the same way and learn nothing an attacker could probe.
var ErrInvalidToken = errors.New("tracking: invalid token")

// Token is what a tracking or unsubscribe URL proves: which send task of which organization it belongs to
// and, for a click, which link and where it goes.
type Token struct {
	// Kind is the token's use.
	Kind Kind
	// OrganizationID is the tenant the send belongs to; every later query is scoped by it.
	OrganizationID uuid.UUID
	// TaskID is the send task (one message to one lead) the event belongs to.
	TaskID uuid.UUID
	// LinkIndex is the link's position in the message (clicks and tickets, 0 to 65535).
	LinkIndex int
	// URL is the original (UTM-tagged) link target (clicks only, http or https, at most MaxURLLength bytes).
	URL string
	// At is when the link was clicked (tickets only, kept to the second).
	At time.Time
}

// Signer signs tokens with the deployment's current secret key and verifies them with it or any previous
// key, so links in messages already sent keep working through a key rotation.
type Signer struct {
	// keys[kind][0] signs; every entry verifies.
	keys map[Kind][][]byte
}

// NewSigner derives one HMAC key per kind from each deployment secret (config.SecretKey first, then
// config.PreviousSecretKeys): HKDF-SHA256 with the secret as input key material, no salt and the info
// "outflow/tracking/v1/<kind>" (open, click, unsubscribe, ticket). Deriving per purpose keeps these keys apart from
// every other use of the secret (sealing, cursors), and apart from each other.
func NewSigner(current []byte, previous ...[]byte) (*Signer, error) {
	if len(current) == 0 {
		return nil, errors.New("tracking: no secret key")
	}
	s := &Signer{keys: map[Kind][][]byte{}}
	for _, secret := range append([][]byte{current}, previous...) {
		for _, kind := range []Kind{KindOpen, KindClick, KindUnsubscribe, KindTicket} {
			key, err := hkdf.Key(sha256.New, secret, nil, keyLabel+kind.String(), sha256.Size)
			if err != nil {
				return nil, fmt.Errorf("tracking: derive %s key: %w", kind, err)
			}
			s.keys[kind] = append(s.keys[kind], key)
		}
	}
	return s, nil
}

// Sign encodes t as a URL-safe token (base64url without padding). It refuses a token no redirect could
// honour: an unknown kind, a click without an http(s) URL, a URL over MaxURLLength, a link index out of range.
func (s *Signer) Sign(t Token) (string, error) {
	keys, ok := s.keys[t.Kind]
	if !ok {
		return "", fmt.Errorf("tracking: cannot sign a token of %s", t.Kind)
	}
	buf := make([]byte, 0, headerSize+clickExtra+len(t.URL)+macSize)
	buf = append(buf, tokenVersion, byte(t.Kind))
	buf = append(buf, t.OrganizationID[:]...)
	buf = append(buf, t.TaskID[:]...)
	if t.Kind == KindClick || t.Kind == KindTicket {
		if t.LinkIndex < 0 || t.LinkIndex > 0xFFFF {
			return "", fmt.Errorf("tracking: link index %d must be between 0 and 65535", t.LinkIndex)
		}
		buf = binary.BigEndian.AppendUint16(buf, uint16(t.LinkIndex))
	}
	switch t.Kind {
	case KindClick:
		if err := checkURL(t.URL); err != nil {
			return "", err
		}
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(t.URL)))
		buf = append(buf, t.URL...)
	case KindTicket:
		buf = binary.BigEndian.AppendUint64(buf, uint64(t.At.Unix()))
	}
	buf = append(buf, tag(keys[0], buf)...)
	return base64.RawURLEncoding.EncodeToString(buf), nil
}

// Parse verifies a token of the expected kind and returns what it carries. Every failure is
// ErrInvalidToken; the signature is checked (in constant time) before any field is trusted.
func (s *Signer) Parse(token string, kind Kind) (Token, error) {
	keys, ok := s.keys[kind]
	if !ok || len(token) > MaxTokenLength {
		return Token{}, ErrInvalidToken
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(raw) < headerSize+macSize {
		return Token{}, ErrInvalidToken
	}
	body, mac := raw[:len(raw)-macSize], raw[len(raw)-macSize:]
	if !verify(keys, body, mac) {
		return Token{}, ErrInvalidToken
	}
	if body[0] != tokenVersion || Kind(body[1]) != kind {
		return Token{}, ErrInvalidToken
	}
	t := Token{Kind: kind}
	copy(t.OrganizationID[:], body[2:18])
	copy(t.TaskID[:], body[18:34])
	rest := body[headerSize:]
	switch kind {
	case KindClick:
	case KindTicket:
		if len(rest) != ticketExtra {
			return Token{}, ErrInvalidToken
		}
		t.LinkIndex = int(binary.BigEndian.Uint16(rest))
		t.At = time.Unix(int64(binary.BigEndian.Uint64(rest[2:])), 0).UTC()
		return t, nil
	default:
		if len(rest) != 0 {
			return Token{}, ErrInvalidToken
		}
		return t, nil
	}
	if len(rest) < clickExtra {
		return Token{}, ErrInvalidToken
	}
	t.LinkIndex = int(binary.BigEndian.Uint16(rest))
	n := int(binary.BigEndian.Uint16(rest[2:]))
	if len(rest) != clickExtra+n {
		return Token{}, ErrInvalidToken
	}
	t.URL = string(rest[clickExtra:])
	if checkURL(t.URL) != nil {
		return Token{}, ErrInvalidToken
	}
	return t, nil
}

// checkURL accepts only what a redirect may point to: an absolute http or https URL within MaxURLLength.
func checkURL(raw string) error {
	if len(raw) > MaxURLLength {
		return fmt.Errorf("tracking: link of %d bytes is over the %d-byte limit for tracked links", len(raw), MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (!strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https")) {
		return fmt.Errorf("tracking: link %q must be an absolute http or https URL", raw)
	}
	return nil
}

// tag is the truncated HMAC-SHA256 of body under key.
func tag(key, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return m.Sum(nil)[:macSize]
}

// verify reports whether mac is body's tag under any of keys, comparing in constant time.
func verify(keys [][]byte, body, mac []byte) bool {
	ok := false
	for _, key := range keys {
		if hmac.Equal(tag(key, body), mac) {
			ok = true
		}
	}
	return ok
}

// TicketParam is the query parameter the click redirect adds to the link it redirects to, carrying the click
// identification ticket (a KindTicket token) for website-visit attribution; the name follows the click-id
// parameters of ad networks (gclid, msclkid) and is Outflow's own.
const TicketParam = "ofclid"

// WithTicket is target with the ticket added as its TicketParam query parameter: after the existing query
// (kept byte for byte) and before any fragment, so the page and its anchor are the ones the link named.
func WithTicket(target, ticket string) string {
	base, fragment, hasFragment := strings.Cut(target, "#")
	switch {
	case !strings.Contains(base, "?"):
		base += "?"
	case !strings.HasSuffix(base, "?") && !strings.HasSuffix(base, "&"):
		base += "&"
	}
	base += TicketParam + "=" + ticket
	if hasFragment {
		return base + "#" + fragment
	}
	return base
}
