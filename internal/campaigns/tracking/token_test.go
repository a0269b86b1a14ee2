package tracking_test

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/campaigns/tracking"
)

var (
	keyA = bytes.Repeat([]byte{0xA1}, 32)
	keyB = bytes.Repeat([]byte{0xB2}, 32)
)

func newSigner(t *testing.T, current []byte, previous ...[]byte) *tracking.Signer {
	t.Helper()
	s, err := tracking.NewSigner(current, previous...)
	require.NoError(t, err)
	return s
}

func sampleTokens() []tracking.Token {
	org, task := uuid.MustParse("0190a7a0-0000-7000-8000-000000000001"), uuid.MustParse("0190a7a0-0000-7000-8000-0000000000aa")
	return []tracking.Token{
		{Kind: tracking.KindOpen, OrganizationID: org, TaskID: task},
		{Kind: tracking.KindClick, OrganizationID: org, TaskID: task, LinkIndex: 3,
			URL: "https://example.com/pricing?utm_source=outflow&utm_content=link-3"},
		{Kind: tracking.KindUnsubscribe, OrganizationID: org, TaskID: task},
		{Kind: tracking.KindTicket, OrganizationID: org, TaskID: task, LinkIndex: 3, At: time.Date(2026, 11, 26, 9, 0, 31, 0, time.UTC)},
	}
}

func TestTokensRoundTripForEveryKind(t *testing.T) {
	t.Parallel()
	s := newSigner(t, keyA)
	for _, want := range sampleTokens() {
		tok, err := s.Sign(want)
		require.NoError(t, err)
		require.NotContains(t, tok, "=", "no padding")
		require.Equal(t, url64(tok), tok, "URL-safe alphabet only")
		got, err := s.Parse(tok, want.Kind)
		require.NoError(t, err, want.Kind.String())
		require.Equal(t, want, got)
	}
}

// url64 keeps only base64url characters, so a token with anything else differs from it.
func url64(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, s)
}

func TestTokensOfAnotherKindAreRejected(t *testing.T) {
	t.Parallel()
	s := newSigner(t, keyA)
	for _, tok := range sampleTokens() {
		signed, err := s.Sign(tok)
		require.NoError(t, err)
		for _, other := range []tracking.Kind{tracking.KindOpen, tracking.KindClick, tracking.KindUnsubscribe, tracking.KindTicket} {
			if other == tok.Kind {
				continue
			}
			_, err := s.Parse(signed, other)
			require.ErrorIs(t, err, tracking.ErrInvalidToken, "%s token used as %s", tok.Kind, other)
		}
	}
}

func TestTruncatedAndAlteredTokensAreRejected(t *testing.T) {
	t.Parallel()
	s := newSigner(t, keyA)
	for _, tok := range sampleTokens() {
		signed, err := s.Sign(tok)
		require.NoError(t, err)
		raw, err := base64.RawURLEncoding.DecodeString(signed)
		require.NoError(t, err)
		for n := range len(raw) {
			_, err := s.Parse(base64.RawURLEncoding.EncodeToString(raw[:n]), tok.Kind)
			require.ErrorIs(t, err, tracking.ErrInvalidToken, "%s truncated to %d bytes", tok.Kind, n)
		}
		for i := range raw {
			altered := bytes.Clone(raw)
			altered[i] ^= 0x01
			_, err := s.Parse(base64.RawURLEncoding.EncodeToString(altered), tok.Kind)
			require.ErrorIs(t, err, tracking.ErrInvalidToken, "%s with byte %d flipped", tok.Kind, i)
		}
		_, err = s.Parse(signed+"A", tok.Kind)
		require.ErrorIs(t, err, tracking.ErrInvalidToken, "a trailing character")
	}
}

// signAs signs raw token bytes the way the package documents (HKDF-SHA256, info "outflow/tracking/v1/<kind>",
// HMAC-SHA256 truncated to 16 bytes), so a test can build tokens Sign would never make.
func signAs(t *testing.T, secret []byte, kind tracking.Kind, body []byte) string {
	t.Helper()
	key, err := hkdf.Key(sha256.New, secret, nil, "outflow/tracking/v1/"+kind.String(), 32)
	require.NoError(t, err)
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return base64.RawURLEncoding.EncodeToString(append(bytes.Clone(body), m.Sum(nil)[:16]...))
}

func TestTheDocumentedKeyDerivationSignsValidTokensAndOnlyVersionOneParses(t *testing.T) {
	t.Parallel()
	s := newSigner(t, keyA)
	open := sampleTokens()[0]
	signed, err := s.Sign(open)
	require.NoError(t, err)
	raw, err := base64.RawURLEncoding.DecodeString(signed)
	require.NoError(t, err)
	body := raw[:len(raw)-16]
	require.Equal(t, signed, signAs(t, keyA, tracking.KindOpen, body))

	v2 := bytes.Clone(body)
	v2[0] = 2
	_, err = s.Parse(signAs(t, keyA, tracking.KindOpen, v2), tracking.KindOpen)
	require.ErrorIs(t, err, tracking.ErrInvalidToken, "an unknown version, correctly signed")

	asClick := bytes.Clone(body)
	asClick[1] = byte(tracking.KindClick)
	_, err = s.Parse(signAs(t, keyA, tracking.KindOpen, asClick), tracking.KindOpen)
	require.ErrorIs(t, err, tracking.ErrInvalidToken, "a click payload under the open key")
}

func TestTokensSignedWithAnotherKeyAreRejected(t *testing.T) {
	t.Parallel()
	foreign, ours := newSigner(t, keyB), newSigner(t, keyA)
	for _, tok := range sampleTokens() {
		signed, err := foreign.Sign(tok)
		require.NoError(t, err)
		_, err = ours.Parse(signed, tok.Kind)
		require.ErrorIs(t, err, tracking.ErrInvalidToken, tok.Kind.String())
	}
}

func TestTokensSignedBeforeARotationStillParse(t *testing.T) {
	t.Parallel()
	before, after := newSigner(t, keyA), newSigner(t, keyB, keyA)
	for _, tok := range sampleTokens() {
		old, err := before.Sign(tok)
		require.NoError(t, err)
		got, err := after.Parse(old, tok.Kind)
		require.NoError(t, err, "a link in a message sent before the rotation still works")
		require.Equal(t, tok, got)

		fresh, err := after.Sign(tok)
		require.NoError(t, err)
		require.NotEqual(t, old, fresh, "new tokens use the new key")
		_, err = before.Parse(fresh, tok.Kind)
		require.ErrorIs(t, err, tracking.ErrInvalidToken)
	}
}

func TestSignRefusesLinksNoRedirectMayFollow(t *testing.T) {
	t.Parallel()
	s := newSigner(t, keyA)
	click := sampleTokens()[1]
	for name, u := range map[string]string{
		"javascript":  "javascript:alert(1)",
		"relative":    "/pricing",
		"empty":       "",
		"mailto":      "mailto:a@example.com",
		"over 2048 B": "https://example.com/" + strings.Repeat("a", tracking.MaxURLLength),
	} {
		c := click
		c.URL = u
		_, err := s.Sign(c)
		require.Error(t, err, name)
	}
	c := click
	c.URL = "https://example.com/" + strings.Repeat("a", tracking.MaxURLLength-len("https://example.com/"))
	tok, err := s.Sign(c)
	require.NoError(t, err, "a URL of exactly 2048 bytes is tracked")
	require.Len(t, tok, tracking.MaxTokenLength, "the longest link makes the longest token")
	_, err = s.Parse(tok, tracking.KindClick)
	require.NoError(t, err)

	c.LinkIndex = 65536
	_, err = s.Sign(c)
	require.Error(t, err)
}

func TestOversizeTokensAreRejectedBeforeDecoding(t *testing.T) {
	t.Parallel()
	s := newSigner(t, keyA)
	_, err := s.Parse(strings.Repeat("A", tracking.MaxTokenLength+1), tracking.KindClick)
	require.ErrorIs(t, err, tracking.ErrInvalidToken)
}

func TestNewSignerRequiresASecret(t *testing.T) {
	t.Parallel()
	_, err := tracking.NewSigner(nil)
	require.Error(t, err)
}

func FuzzParse(f *testing.F) {
	s, err := tracking.NewSigner(keyA)
	require.NoError(f, err)
	for _, tok := range sampleTokens() {
		signed, err := s.Sign(tok)
		require.NoError(f, err)
		f.Add(signed, byte(tok.Kind))
	}
	f.Add("", byte('c'))
	f.Add("AQ", byte('o'))
	f.Fuzz(func(t *testing.T, token string, kind byte) {
		got, err := s.Parse(token, tracking.Kind(kind))
		if err != nil {
			require.ErrorIs(t, err, tracking.ErrInvalidToken)
			return
		}
		again, err := s.Sign(got)
		require.NoError(t, err, "whatever parses can be signed again")
		back, err := s.Parse(again, got.Kind)
		require.NoError(t, err)
		require.Equal(t, got, back)
	})
}

func TestWithTicketKeepsTheQueryAndFragmentAsTheyWere(t *testing.T) {
	t.Parallel()
	for target, want := range map[string]string{
		"https://example.com/pricing":                     "https://example.com/pricing?ofclid=TKT",
		"https://example.com/?q=a%20b&utm_source=outflow": "https://example.com/?q=a%20b&utm_source=outflow&ofclid=TKT",
		"https://example.com/p?x=1#plans":                 "https://example.com/p?x=1&ofclid=TKT#plans",
		"https://example.com/p#top?not=query":             "https://example.com/p?ofclid=TKT#top?not=query",
		"https://example.com/p?":                          "https://example.com/p?ofclid=TKT",
		"https://example.com/p?a=1&":                      "https://example.com/p?a=1&ofclid=TKT",
	} {
		require.Equal(t, want, tracking.WithTicket(target, "TKT"), target)
	}
}
