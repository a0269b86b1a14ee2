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
