package suppression

import (
	"net/mail"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	good := map[string][2]string{
		"ada@example.com":                 {"email", "ada@example.com"},
		"  ADA@Example.COM ":              {"email", "ada@example.com"},
		"Ada Lovelace <ada@example.com>":  {"email", "ada@example.com"},
		"\"Ada, L\" <a.b+tag@mail.co.uk>": {"email", "a.b+tag@mail.co.uk"},
		"example.com":                     {"domain", "example.com"},
		"@Example.com":                    {"domain", "example.com"},
		"mail.example.co.uk.":             {"domain", "mail.example.co.uk"},
		"xn--bcher-kva.example":           {"domain", "xn--bcher-kva.example"},
	}
	for in, want := range good {
		kind, value, ok := Normalize(in)
		require.True(t, ok, in)
		require.Equal(t, want[0], string(kind), in)
		require.Equal(t, want[1], value, in)
	}
	for _, bad := range []string{"", "   ", "ada", "ada@", "@", "@localhost", "localhost", "ada@localhost", "1.2.3.4",
		"example.123", "-bad.com", "bad-.com", "exa mple.com", "ada@exa_mple.com", "bücher.example", "ada@@example.com",
		strings.Repeat("a", 65) + "@example.com", strings.Repeat("a.", 200) + "com", "example..com", ".example.com",
		strings.Repeat("a", 64) + ".com", "example.com-", "ada@example.c_m"} {
		_, _, ok := Normalize(bad)
		require.False(t, ok, bad)
	}
}

// TestPlainAddressesReadAsTheParserReadsThem holds the fast path to the parser: every input it takes, the
// parser answers with the same address, and what it leaves goes to the parser.
func TestPlainAddressesReadAsTheParserReadsThem(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"ada@example.com", "Ada.L+news@Example.COM", "o'brien@x.io", "a!#$%&'*+-/=?^_`{|}~b@x.io",
		"a.b.c@d.e.f", "x@localhost", "a..b@x.io", ".a@x.io", "a.@x.io", "a@x..io", "a@.x.io", "a@x.io.", "a@b@c.io",
		"@x.io", "a@", "Ada <ada@example.com>", `"a b"@x.io`, "a(c)@x.io", "ä@x.io", "a b@x.io", "[a]@x.io", "a@[1.2.3.4]"} {
		got, plain := plainAddress(in)
		parsed, err := mail.ParseAddress(in)
		if plain {
			require.NoError(t, err, in)
			require.Equal(t, parsed.Address, got, in)
		}
	}
	for _, in := range []string{"ada@example.com", "a.b+c@x.io"} {
		_, plain := plainAddress(in)
		require.True(t, plain, in)
	}
	for _, in := range []string{"Ada <ada@example.com>", "a..b@x.io", `"a"@x.io`, "ä@x.io"} {
		_, plain := plainAddress(in)
		require.False(t, plain, in)
	}
}
