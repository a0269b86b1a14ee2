package auth

import (
	"context"

	"github.com/google/uuid"
)

// Kind says which sort of credential authenticated a request; routes treat them differently (session-only
// routes refuse API keys, API keys and OAuth tokens need scopes, sessions need organization permissions).
type Kind string

// The credential kinds a bearer token can be.
const (
	KindAPIKey  Kind = "api_key"
	KindSession Kind = "session"
	KindOAuth   Kind = "oauth"
)

// Principal is the authenticated caller of one request.
type Principal struct {
	// Kind is the sort of credential presented.
	Kind Kind
	// CredentialID identifies the credential (API key id, session id or OAuth grant id); idempotency keys and
	// rate limits are kept per credential.
	CredentialID uuid.UUID
	// OrganizationID is the organization every query of the request is scoped to.
	OrganizationID uuid.UUID
	// UserID is the human behind the credential, when there is one.
	UserID uuid.UUID
	// Permissions is the scope bitmask of an API key or OAuth token.
	Permissions Permission
	// Role is a session caller's role in OrganizationID (owner, admin, member or a custom role id).
	Role string
	// OrgPermissions is what a session caller may do in OrganizationID.
	OrgPermissions OrgPermission
	// AllowedMailboxes limits an API key to these mailboxes (nil: every mailbox of the organization).
	AllowedMailboxes []uuid.UUID
	// RateLimitPerMinute is the credential's request budget per sliding minute (API keys and OAuth tokens).
	RateLimitPerMinute int
	// ClientID is the OAuth application behind an OAuth token ("" for other kinds).
	ClientID string
}

// MayUseMailbox reports whether the caller may act on mailbox id: sessions and unrestricted keys may use
// every mailbox of their organization, a mailbox-scoped key only its own.
func (p *Principal) MayUseMailbox(id uuid.UUID) bool {
	if p == nil || p.AllowedMailboxes == nil {
		return true
	}
	for _, m := range p.AllowedMailboxes {
		if m == id {
			return true
		}
	}
	return false
}

// IsSession reports whether the caller is a signed-in person rather than an API key or OAuth token.
func (p *Principal) IsSession() bool { return p != nil && p.Kind == KindSession }

// outcome is what authenticating the request's bearer token produced: a principal or the reason it failed.
type outcome struct {
	principal *Principal
	err       error
}

type outcomeKey struct{}

// WithOutcome records the result of authenticating the request's token, so the token is verified once per
// request however many layers (idempotency, the security handler) need the caller.
func WithOutcome(ctx context.Context, p *Principal, err error) context.Context {
	return context.WithValue(ctx, outcomeKey{}, outcome{principal: p, err: err})
}

// OutcomeFrom returns the recorded authentication result; ok is false when no token was authenticated yet.
func OutcomeFrom(ctx context.Context) (p *Principal, err error, ok bool) {
	o, ok := ctx.Value(outcomeKey{}).(outcome)
	return o.principal, o.err, ok
}

// WithPrincipal returns ctx carrying p as the authenticated caller.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return WithOutcome(ctx, p, nil)
}

// PrincipalFrom returns the authenticated caller in ctx, or nil for public operations, jobs and the CLI.
func PrincipalFrom(ctx context.Context) *Principal {
	p, err, _ := OutcomeFrom(ctx)
	if err != nil {
		return nil
	}
	return p
}
