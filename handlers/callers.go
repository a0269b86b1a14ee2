package handlers

import (
	"context"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// errSessionRequired answers API keys and OAuth tokens on routes that only a signed-in person may use.
var errSessionRequired = apierror.Forbidden("session_required", "This operation needs a signed-in session; API keys and OAuth tokens cannot use it.")

// sessionCaller returns the signed-in person behind a session-only operation.
func sessionCaller(ctx context.Context) (*auth.Principal, error) {
	p := auth.PrincipalFrom(ctx)
	if p == nil {
		return nil, apierror.Unauthorized("missing_credential", "Send a credential as `Authorization: Bearer <token>`.")
	}
	if !p.IsSession() {
		return nil, errSessionRequired
	}
	return p, nil
}

// callerOrganization returns the organization the request acts in; a session without one selected is a 400.
func callerOrganization(p *auth.Principal) (uuid.UUID, error) {
	if p.OrganizationID == uuid.Nil {
		return uuid.Nil, apierror.BadRequest("organization_required",
			"Select an organization: send X-Organization-Id or switch organization first.")
	}
	return p.OrganizationID, nil
}

// requireOrgPermission checks a session caller's organization permission.
func requireOrgPermission(p *auth.Principal, need auth.OrgPermission) error {
	if !p.OrgPermissions.Has(need) {
		return apierror.Forbidden("permission_denied", "Your role in this organization does not allow this.")
	}
	return nil
}

// tenantCaller is the organization every query of an organization-scoped operation runs in: 401 without a
// credential, 400 organization_required for a session that has not selected one.
func tenantCaller(ctx context.Context) (uuid.UUID, error) {
	p := auth.PrincipalFrom(ctx)
	if p == nil {
		return uuid.Nil, apierror.Unauthorized("missing_credential", "Send a credential as `Authorization: Bearer <token>`.")
	}
	return callerOrganization(p)
}

// memberCaller returns the signed-in caller and the organization they act in.
func memberCaller(ctx context.Context) (*auth.Principal, uuid.UUID, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, uuid.Nil, err
	}
	org, err := callerOrganization(p)
	return p, org, err
}

// managerCaller is memberCaller for operations that need an organization permission.
func managerCaller(ctx context.Context, need auth.OrgPermission) (*auth.Principal, uuid.UUID, error) {
	p, org, err := memberCaller(ctx)
	if err != nil {
		return nil, uuid.Nil, err
	}
	return p, org, requireOrgPermission(p, need)
}

// teamCaller authorizes the team operations, the one governance surface open to API keys and OAuth tokens:
// those need scope (named scopeName in the refusal), sessions need perm (0 lets any member through).
func teamCaller(ctx context.Context, scope auth.Permission, scopeName string, perm auth.OrgPermission) (uuid.UUID, error) {
	p := auth.PrincipalFrom(ctx)
	if p == nil {
		return uuid.Nil, apierror.Unauthorized("missing_credential", "Send a credential as `Authorization: Bearer <token>`.")
	}
	if !p.IsSession() {
		if !p.Permissions.Has(scope) {
			return uuid.Nil, apierror.Forbidden("missing_scope", "This credential lacks the "+scopeName+" scope.")
		}
		return p.OrganizationID, nil
	}
	org, err := callerOrganization(p)
	if err != nil {
		return uuid.Nil, err
	}
	if perm != 0 {
		return org, requireOrgPermission(p, perm)
	}
	return org, nil
}

// webhooksCaller is the caller of the webhook operations: scope WEBHOOKS or permission manage_settings.
func webhooksCaller(ctx context.Context) (uuid.UUID, error) {
	return teamCaller(ctx, auth.Webhooks, "WEBHOOKS", auth.ManageSettings)
}

// contactSource is how a contact the caller adds is recorded: by hand in the app, or through the API.
func contactSource(ctx context.Context) string {
	if auth.PrincipalFrom(ctx).IsSession() {
		return "manual"
	}
	return "api"
}

// actorUser is the person behind the request, for activity entries; none for API keys without a user.
func actorUser(ctx context.Context) uuid.NullUUID {
	if p := auth.PrincipalFrom(ctx); p != nil && p.UserID != uuid.Nil {
		return uuid.NullUUID{UUID: p.UserID, Valid: true}
	}
	return uuid.NullUUID{}
}
