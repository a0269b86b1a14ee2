// Package oauth is Outflow's OAuth 2.1 authorization server for third-party apps and agents: the fosite
// provider (authorization code with PKCE S256 only, rotating refresh tokens with reuse detection, revocation),
// its Postgres token store, dynamic client registration (RFC 7591), the discovery documents (RFC 8414 and RFC
// 9728), the rules apps are registered under (exact HTTPS or loopback redirect URIs, scopes, allowed webhook
// domains) and the consent page's HTML.
//
// The model: an app (a client) is registered by an organization from the dashboard, or registers itself. A
// person who may manage API keys in an organization approves it on the consent page, which creates a grant: the
// app's access to that organization with the approved scopes. fosite's request id is the grant id, so every
// code and token of one approval belongs to one grant, and revoking any of them (or replaying a code, or
// reusing a rotated refresh token) revokes the grant. An access token then acts like an API key of the
// organization whose scopes are those the grant and the app still hold.
//
// Tokens are fosite's opaque HMAC tokens (`ory_at_…`, `ory_rt_…`, `ory_ac_…`); only their signatures are
// stored. Every row but a self-registered client belongs to an organization and sits behind row-level
// security; the endpoints that know no organization yet (the token endpoint, authentication) find a row
// through narrow SECURITY DEFINER functions and make every change inside the row's organization.
package oauth
