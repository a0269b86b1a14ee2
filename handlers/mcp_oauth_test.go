package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/handlers/apitest"
	"golang.org/x/oauth2"
)

var challengeParam = regexp.MustCompile(`(\w+)="([^"]*)"`)

// TestMCPSignInAsTheInspectorDoes follows an MCP client's OAuth discovery from the endpoint's 401 as the
// official inspector does: the challenge's resource metadata, its authorization server's metadata, dynamic
// registration asking for the scopes offered, the consent page, the token, then tools over MCP.
func TestMCPSignInAsTheInspectorDoes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	pair := env.SignUp(t, "owner@inspector.example")
	org := homeOrganization(t, env, pair)
	// The documents name the deployment's public URL; this test server answers at another address.
	local := func(raw string) string {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(raw, env.Config.PublicURL), raw)
		return u.RequestURI()
	}
	getJSON := func(path string, out any) {
		resp := env.Do(t, http.MethodGet, path, "", nil, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
	}

	resp := mcpPost(t, env, "", mcpInitialize, nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	challenge := map[string]string{}
	for _, m := range challengeParam.FindAllStringSubmatch(resp.Header.Get("WWW-Authenticate"), -1) {
		challenge[m[1]] = m[2]
	}
	var resource struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	getJSON(local(challenge["resource_metadata"]), &resource)
	require.Equal(t, env.Config.PublicURL+"/v1/mcp", resource.Resource)
	require.Equal(t, strings.Fields(challenge["scope"]), resource.ScopesSupported)
	var server struct {
		RegistrationEndpoint string   `json:"registration_endpoint"`
		ScopesSupported      []string `json:"scopes_supported"`
	}
	getJSON(local(resource.AuthorizationServers[0]+"/.well-known/oauth-authorization-server"), &server)
	require.Equal(t, resource.ScopesSupported, server.ScopesSupported)

	// The client asks for every scope offered, and gets them.
	reg := registerPublicClient(t, env, challenge["scope"])
	require.ElementsMatch(t, resource.ScopesSupported, strings.Fields(reg.Scope))
	conf := oauthConfig(env, reg.ClientID, "", resource.ScopesSupported...)
	verifier := oauth2.GenerateVerifier()
	browser := newOAuthBrowser(t, env, "owner@inspector.example")
	page := browser.consent(t, conf.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier),
		oauth2.SetAuthURLParam("resource", resource.Resource)))
	back := browser.decide(t, page, org, "approve")
	tok, err := conf.Exchange(oauthContext(env), back.Query().Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)

	session, err := mcpConnect(t, env, tok.AccessToken)
	require.NoError(t, err)
	names := mcpToolNames(t, session)
	require.Contains(t, names, "mailboxes_send")
	require.Contains(t, names, "unibox_reply")
	require.NotContains(t, names, "campaigns_send_test_email", "it needs send_campaigns, which the client could not ask for")
	require.NotContains(t, names, "api_keys_list")
	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami"})
	require.NoError(t, err)
	var me whoamiResult
	mcpResult(t, res, &me)
	require.Equal(t, "oauth", me.Credential.Kind)
	require.Equal(t, org, me.Organization.ID)
}
