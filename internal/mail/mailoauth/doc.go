// Package mailoauth talks to the two mail providers whose mailboxes connect through consent instead of a
// password: Google (gmail) and Microsoft (outlook). It builds the consent URL (authorization code flow with
// PKCE S256, offline access so a refresh token is issued), redeems the code, refreshes access tokens, and
// reads Gmail's send-as identities.
//
// The address a grant belongs to is read from the ID token the token endpoint answers. That token arrives
// directly from the provider over TLS in answer to our own authenticated request, so, as OpenID Connect Core
// 1.0 section 3.1.3.7 allows, the TLS server check stands in for the signature check; the audience is still
// checked. This avoids Microsoft's multi-tenant issuer, which no fixed issuer comparison accepts.
//
// Every endpoint comes from configuration (with the providers' real ones as defaults), so tests run an
// in-process authorization server and mail servers. Errors are plain: ErrRevoked when the provider no longer
// honours the grant (the mailbox needs a new consent), ErrRejected when an answer does not prove a mailbox,
// ErrUnavailable when the provider cannot be asked.
package mailoauth
