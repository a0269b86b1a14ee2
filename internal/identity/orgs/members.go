package orgs

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

var (
	errMemberNotFound = apierror.NotFound("not_found", "Member not found.")
	errOwnerRequired  = apierror.Forbidden("owner_required", "Only an owner can grant or take away the owner role.")
	errLastOwner      = apierror.Conflict("last_owner",
		"The organization must keep at least one owner: make another member an owner first.")
)

// ChangeRole gives the member target the role r in the organization of tx and returns the member as changed.
// caller is the member asking, already allowed to manage the team. Only an owner grants or takes away the owner
// role, and the last owner cannot be demoted.
func ChangeRole(ctx context.Context, tx pgx.Tx, caller *auth.Principal, target uuid.UUID, r Role) (dbq.MemberGetRow, error) {
	org, _ := db.OrgID(ctx)
	q := dbq.New()
	m, err := lockedMember(ctx, tx, org, target)
	if err != nil {
		return dbq.MemberGetRow{}, err
	}
	if _, err := customRoleName(ctx, tx, org, r); err != nil {
		return dbq.MemberGetRow{}, err
	}
	from := m.Role
	wasOwner := from == auth.RoleOwner
	if (wasOwner || r.IsOwner()) && caller.Role != auth.RoleOwner {
		return dbq.MemberGetRow{}, errOwnerRequired
	}
	if from == r.Stored() {
		return m, nil
	}
	if wasOwner {
		if err := keepAnOwner(ctx, tx, org); err != nil {
			return dbq.MemberGetRow{}, err
		}
	}
	if err := q.MemberSetRole(ctx, tx, dbq.MemberSetRoleParams{OrganizationID: org, UserID: target, Role: r.Stored()}); err != nil {
		return dbq.MemberGetRow{}, err
	}
	if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "member.role_changed", EntityType: audit.EntityMember, EntityID: target.String(),
		Metadata: map[string]any{"from": from, "to": r.Stored()}}); err != nil {
		return dbq.MemberGetRow{}, err
	}
	return q.MemberGet(ctx, tx, dbq.MemberGetParams{OrganizationID: org, UserID: target})
}

// RemoveMember takes target out of the organization of tx; their team memberships there go with it and their
// sessions lose access at once (authentication checks membership on every request). caller is the member
// asking: themselves (leaving), or someone allowed to manage the team. Only an owner removes another owner, and
// the last owner cannot leave.
func RemoveMember(ctx context.Context, tx pgx.Tx, caller *auth.Principal, target uuid.UUID) error {
	org, _ := db.OrgID(ctx)
	m, err := lockedMember(ctx, tx, org, target)
	if err != nil {
		return err
	}
	if m.Role == auth.RoleOwner {
		if target != caller.UserID && caller.Role != auth.RoleOwner {
			return errOwnerRequired
		}
		if err := keepAnOwner(ctx, tx, org); err != nil {
			return err
		}
	}
	if _, err := dbq.New().MemberDelete(ctx, tx, dbq.MemberDeleteParams{OrganizationID: org, UserID: target}); err != nil {
		return err
	}
	return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "member.removed", EntityType: audit.EntityMember, EntityID: target.String(),
		Metadata: map[string]any{"email": m.Email, "role": m.Role, "left": target == caller.UserID}})
}

// lockedMember takes the organization's membership lock, so concurrent changes cannot each count the other's
// owner, and reads target's membership.
func lockedMember(ctx context.Context, tx pgx.Tx, org, target uuid.UUID) (dbq.MemberGetRow, error) {
	q := dbq.New()
	if err := q.OrganizationLockMembers(ctx, tx, org); err != nil {
		return dbq.MemberGetRow{}, err
	}
	m, err := q.MemberGet(ctx, tx, dbq.MemberGetParams{OrganizationID: org, UserID: target})
	if errors.Is(err, pgx.ErrNoRows) {
		return dbq.MemberGetRow{}, errMemberNotFound
	}
	return m, err
}

// keepAnOwner refuses a change that takes away one owner when no other would remain.
func keepAnOwner(ctx context.Context, tx pgx.Tx, org uuid.UUID) error {
	owners, err := dbq.New().MemberOwnerCount(ctx, tx, org)
	if err != nil {
		return err
	}
	if owners < 2 {
		return errLastOwner
	}
	return nil
}
