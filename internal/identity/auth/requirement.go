package auth

// Access says which credentials may call an operation at all.
type Access uint8

// The access classes of part 1, "Authentication" rules 2 and 3.
const (
	// AccessPublic operations take no credential (sign-in, OAuth token exchange, discovery, tracking links).
	AccessPublic Access = iota + 1
	// AccessAny operations accept sessions (checked against OrgPermission) and API keys or OAuth tokens
	// (checked against Scope).
	AccessAny
	// AccessSession operations are for signed-in people only; API keys and OAuth tokens get 403.
	AccessSession
)

// Requirement is what one operation demands of its caller. Every operation of the contract has exactly one;
// the request path enforces it before the handler runs.
type Requirement struct {
	// Access is who may call at all.
	Access Access
	// Scope is the permission bits an API key or OAuth token must hold (0: any valid key of the organization).
	Scope Permission
	// OrgPermission is what a session caller's role must allow (0: any member of the organization).
	OrgPermission OrgPermission
	// MailboxParam names the path or query parameter that carries a mailbox id; a mailbox-scoped key may only
	// name its own mailboxes there ("" when the operation is not mailbox-scoped).
	MailboxParam string
}
