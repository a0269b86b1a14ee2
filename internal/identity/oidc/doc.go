// Package oidc signs people in through an external OpenID Connect provider: Google, Apple, or the one
// identity provider a deployment configures. It reads the provider's discovery document, fetches and caches its
// published signing keys, builds authorization requests (state, nonce, PKCE S256), redeems authorization codes
// at the token endpoint and verifies ID tokens: signature against the published keys, issuer, audience,
// expiry and nonce.
//
// Everything about a provider comes from its issuer URL, so pointing the issuer at another provider (a test's
// in-process one, a self-hosted IdP) needs no other setting. Outbound calls go through a client that is bounded
// in time and size, follows no redirects and cannot reach link-local, multicast or unspecified addresses: a
// discovery document names the URLs the server then calls, so they are treated as untrusted.
//
// Errors are plain: ErrRejected when the answer does not prove an identity (bad token, refused code) and
// ErrUnavailable when the provider cannot be reached or answers nonsense. Callers map them to HTTP.
package oidc
