// Package orgs holds the rules of organization governance that take more than one query: what each role
// allows (the built-in owner, admin and member roles and the organization's custom roles), who may change whose
// role (only owners touch the owner role, and an organization never loses its last owner), and invitations by
// email with single-use tokens. Every function runs in the caller's organization-scoped transaction
// (db.WithOrgTx) and records its change in the audit log there.
package orgs
