package oauth

import (
	"slices"

	"github.com/ory/fosite"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

// Client types and token endpoint authentication methods (RFC 7591).
const (
	ClientConfidential = "confidential"
	ClientPublic       = "public"

	AuthMethodNone  = "none"
	AuthMethodBasic = "client_secret_basic"
	AuthMethodPost  = "client_secret_post"
)

// The grant types this server issues for; every client holds both (the token response always carries a
// refresh token).
const (
	GrantAuthorizationCode = "authorization_code"
	GrantRefreshToken      = "refresh_token"
)

// Client is an OAuth client row as fosite sees it.
type Client struct {
	dbq.OauthClient
}

var _ fosite.Client = (*Client)(nil)

// SelfRegistered reports whether the client registered itself (RFC 7591) rather than being registered by an
// organization from the dashboard.
func (c *Client) SelfRegistered() bool { return !c.OrganizationID.Valid }

// AllowedScopes is what the client may be granted now: its registered scopes, never a forbidden one for a
// self-registered client.
func (c *Client) AllowedScopes() auth.Permission {
	p := auth.Permission(uint64(c.Scopes)) & auth.FullAccess
	if c.SelfRegistered() {
		p &^= SelfRegisteredForbidden
	}
	return p
}

// HasRedirectURI reports whether uri is exactly one of the registered redirect URIs: no loopback port
// leniency, no normalisation.
func (c *Client) HasRedirectURI(uri string) bool { return slices.Contains(c.RedirectUris, uri) }

// GetID is the public client_id.
func (c *Client) GetID() string { return c.ClientID }

// GetHashedSecret is the bcrypt hash fosite compares a presented secret with.
func (c *Client) GetHashedSecret() []byte { return c.SecretHash }

// GetRedirectURIs lists the registered redirect URIs.
func (c *Client) GetRedirectURIs() []string { return c.RedirectUris }

// GetGrantTypes lists the grants the client may use.
func (c *Client) GetGrantTypes() fosite.Arguments { return fosite.Arguments(c.GrantTypes) }

// GetResponseTypes is `code` only: the implicit flow does not exist here.
func (c *Client) GetResponseTypes() fosite.Arguments { return fosite.Arguments{"code"} }

// GetScopes lists the scopes the client may request.
func (c *Client) GetScopes() fosite.Arguments { return fosite.Arguments(ScopeNames(c.AllowedScopes())) }

// IsPublic reports a client without a secret (native, CLI, MCP), which must use PKCE.
func (c *Client) IsPublic() bool { return c.ClientType == ClientPublic }

// GetAudience is empty: tokens are for this API only.
func (c *Client) GetAudience() fosite.Arguments { return nil }
