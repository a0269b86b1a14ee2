package oauth_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/oauth"
)

func TestValidateRedirectURI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		uri           string
		privateScheme bool
		ok            bool
	}{
		{"https://app.example.com/callback", false, true},
		{"https://app.example.com/callback?x=1", false, true},
		{"http://127.0.0.1:8765/callback", false, true},
		{"http://[::1]:8765/callback", false, true},
		{"http://localhost/callback", false, true},
		{"http://LOCALHOST:1/cb", false, true},
		{"http://app.example.com/callback", false, false},
		{"http://127.0.0.2/callback", false, false},
		{"https://app.example.com/callback#frag", false, false},
		{"https://user:pw@app.example.com/callback", false, false},
		{"https:///callback", false, false},
		{"/callback", false, false},
		{"", false, false},
		{"com.example.app:/callback", false, false},
		{"com.example.app:/callback", true, true},
		{"javascript:alert(1)", true, false},
		{"data:text/html,hi", true, false},
		{"file:///etc/passwd", true, false},
		{"myapp:/callback", true, false},
	} {
		err := oauth.ValidateRedirectURI(tc.uri, tc.privateScheme)
		if tc.ok {
			require.NoError(t, err, tc.uri)
		} else {
			require.Error(t, err, tc.uri)
		}
	}
	require.Error(t, oauth.ValidateRedirectURIs(nil, false))
	require.Error(t, oauth.ValidateRedirectURIs([]string{"https://a.example/cb", "https://a.example/cb"}, false), "duplicates")
}

func TestWebhookDomains(t *testing.T) {
	t.Parallel()
	domains, err := oauth.NormalizeWebhookDomains([]string{"Hooks.Example.com.", ".partner.io", ".partner.io"})
	require.NoError(t, err)
	require.Equal(t, []string{"hooks.example.com", ".partner.io"}, domains)

	for host, allowed := range map[string]bool{
		"hooks.example.com":   true,  // bare entry: that exact host
		"HOOKS.example.com.":  true,  // case and trailing dot do not matter
		"example.com":         false, // a bare entry is not its apex
		"a.hooks.example.com": false, // nor its subdomains
		"partner.io":          true,  // leading dot: the apex
		"eu.api.partner.io":   true,  // and every subdomain
		"evilpartner.io":      false, // not a suffix match on the label boundary
		"partner.io.evil.com": false,
		"":                    false,
	} {
		require.Equal(t, allowed, oauth.WebhookHostAllowed(host, domains), host)
	}
	require.False(t, oauth.WebhookHostAllowed("hooks.example.com", nil), "an empty list allows nothing")

	for _, bad := range []string{"*.example.com", "localhost", "203.0.113.7", "https://example.com", "exa mple.com", "example.com:443", "."} {
		_, err := oauth.NormalizeWebhookDomains([]string{bad})
		require.Error(t, err, bad)
	}

	require.NoError(t, oauth.ValidateWebhookURL("", nil), "empty opts out")
	require.NoError(t, oauth.ValidateWebhookURL("https://eu.api.partner.io/hooks", domains))
	require.NoError(t, oauth.ValidateWebhookURL("https://hooks.example.com:8443/x", domains))
	require.Error(t, oauth.ValidateWebhookURL("https://hooks.example.com/x", nil), "no allowed domains forbids a webhook_url")
	require.Error(t, oauth.ValidateWebhookURL("http://hooks.example.com/x", domains), "https only")
	require.Error(t, oauth.ValidateWebhookURL("https://other.example.com/x", domains))
	require.Error(t, oauth.ValidateWebhookURL("https://u:p@hooks.example.com/x", domains))
}

func TestScopes(t *testing.T) {
	t.Parallel()
	p, err := oauth.ParseScope("read_contacts  write_contacts")
	require.NoError(t, err)
	require.Equal(t, auth.ReadContacts|auth.WriteContacts, p)
	require.Equal(t, "read_contacts write_contacts", oauth.ScopeString(p))

	_, err = oauth.ParseScope("READ_CONTACTS")
	require.Error(t, err, "scopes are lower case")
	_, err = oauth.ParseScope("read_everything")
	require.Error(t, err)

	require.Len(t, oauth.ScopeNames(auth.FullAccess), 25)
	require.Equal(t, auth.SendCampaigns|auth.APIKeys, oauth.SelfRegisteredForbidden)
}

func TestCheckDeliveryURL(t *testing.T) {
	t.Parallel()
	domains := []string{".partner.io", "hooks.example.com"}
	require.NoError(t, oauth.CheckDeliveryURL("https://eu.hooks.partner.io/in", domains))
	require.NoError(t, oauth.CheckDeliveryURL("https://hooks.example.com/in", domains))
	require.Error(t, oauth.CheckDeliveryURL("", domains), "an app without webhook_url receives nothing")
	require.Error(t, oauth.CheckDeliveryURL("https://a.hooks.example.com/in", domains))
	require.Error(t, oauth.CheckDeliveryURL("http://eu.hooks.partner.io/in", domains))
	require.Error(t, oauth.CheckDeliveryURL("https://eu.hooks.partner.io/in", nil), "narrowed to nothing")
}
