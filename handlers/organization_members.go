package handlers

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/identity/orgs"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// memberOf maps a member row.
func memberOf(userID uuid.UUID, role, email, first, last, avatarURL string, joined time.Time) api.OrganizationMember {
	r, _ := orgs.ParseRole(role)
	out := api.OrganizationMember{UserID: userID, Email: email, FirstName: first, LastName: last,
		Role: api.OrganizationRole(r.Builtin), CustomRoleID: orgNilUUID(r.Custom), JoinedAt: joined}
	out.AvatarURL.SetToNull()
	if avatarURL != "" {
		out.AvatarURL.SetTo(avatarURL)
	}
	return out
}

// OrganizationsListMembers lists the current organization's members, oldest first.
func (h *Organizations) OrganizationsListMembers(ctx context.Context, params api.OrganizationsListMembersParams) (*api.OrganizationMemberList, error) {
	_, org, err := memberCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := orgListLimit(params.Limit)
	if err != nil {
		return nil, err
	}
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortMembers, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]dbq.MemberListRow, error) {
			args := dbq.MemberListParams{OrganizationID: org, RowLimit: rowLimit}
			args.AfterJoinedAt, args.AfterUserID = after.bounds()
			return h.queries.MemberList(ctx, tx, args)
		},
		func(r dbq.MemberListRow) timeKey { return timeKey{At: r.JoinedAt, ID: r.UserID} })
	if err != nil {
		return nil, err
	}
	out := &api.OrganizationMemberList{Data: make([]api.OrganizationMember, len(page.Data)), Pagination: orgPageInfo(page)}
	for i, r := range page.Data {
		out.Data[i] = memberOf(r.UserID, r.Role, r.Email, r.FirstName, r.LastName, r.AvatarUrl, r.JoinedAt)
	}
	return out, nil
}

// OrganizationsUpdateMember changes a member's role.
func (h *Organizations) OrganizationsUpdateMember(ctx context.Context, req *api.OrganizationMemberUpdate, params api.OrganizationsUpdateMemberParams) (*api.OrganizationMember, error) {
	p, org, err := managerCaller(ctx, auth.ManageTeam)
	if err != nil {
		return nil, err
	}
	role, err := orgs.ParseRole(req.Role)
	if err != nil {
		return nil, err
	}
	var m dbq.MemberGetRow
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		m, err = orgs.ChangeRole(ctx, tx, p, params.UserId, role)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := memberOf(m.UserID, m.Role, m.Email, m.FirstName, m.LastName, m.AvatarUrl, m.JoinedAt)
	return &out, nil
}

// OrganizationsRemoveMember removes a member; any member may remove themselves (leave).
func (h *Organizations) OrganizationsRemoveMember(ctx context.Context, params api.OrganizationsRemoveMemberParams) error {
	p, org, err := memberCaller(ctx)
	if err != nil {
		return err
	}
	if params.UserId != p.UserID {
		if err := requireOrgPermission(p, auth.ManageTeam); err != nil {
			return err
		}
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if err := orgs.RemoveMember(ctx, tx, p, params.UserId); err != nil {
			return err
		}
		_, err := h.outbox.Emit(ctx, tx, events.TeamMemberRemoved, map[string]any{
			"user_id": params.UserId, "removed_by": p.UserID, "left": params.UserId == p.UserID})
		return err
	})
}

// invitationOf maps an invitation row; every invitation query selects the same columns.
func invitationOf(r dbq.InvitationCreateRow) api.OrganizationInvitation {
	out := api.OrganizationInvitation{ID: r.ID, OrganizationID: r.OrganizationID, Email: r.Email,
		Role: api.OrganizationRole(r.Role), CustomRoleID: orgNilUUID(r.CustomRoleID.UUID),
		Status: api.OrganizationInvitationStatus(r.Status), InvitedBy: r.InvitedBy, ExpiresAt: r.ExpiresAt, CreatedAt: r.CreatedAt}
	out.AcceptedAt.SetToNull()
	if r.AcceptedAt != nil {
		out.AcceptedAt.SetTo(*r.AcceptedAt)
	}
	return out
}

// OrganizationsCreateInvitation invites someone by email; the token travels only in the email.
func (h *Organizations) OrganizationsCreateInvitation(ctx context.Context, req *api.OrganizationInvitationCreate, _ api.OrganizationsCreateInvitationParams) (*api.OrganizationInvitation, error) {
	p, org, err := managerCaller(ctx, auth.ManageTeam)
	if err != nil {
		return nil, err
	}
	role, err := orgs.ParseRole(req.Role.Or(auth.RoleMember))
	if err != nil {
		return nil, err
	}
	var inv dbq.InvitationCreateRow
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if inv, err = h.invitations.Invite(ctx, tx, p, req.Email, role); err != nil {
			return err
		}
		_, err = h.outbox.Emit(ctx, tx, events.TeamMemberInvited, map[string]any{
			"invitation_id": inv.ID, "email": inv.Email, "role": inv.Role, "invited_by": p.UserID})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := invitationOf(inv)
	return &out, nil
}

// OrganizationsListInvitations lists the current organization's invitations, newest first.
func (h *Organizations) OrganizationsListInvitations(ctx context.Context, params api.OrganizationsListInvitationsParams) (*api.OrganizationInvitationList, error) {
	_, org, err := managerCaller(ctx, auth.ManageTeam)
	if err != nil {
		return nil, err
	}
	limit, err := orgListLimit(params.Limit)
	if err != nil {
		return nil, err
	}
	var status *string
	if v, ok := params.Status.Get(); ok {
		st := string(v)
		status = &st
	}
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortInvitations, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timeKey, rowLimit int32) ([]dbq.InvitationListRow, error) {
			args := dbq.InvitationListParams{OrganizationID: org, Status: status, RowLimit: rowLimit}
			args.BeforeCreatedAt, args.BeforeID = after.bounds()
			return h.queries.InvitationList(ctx, tx, args)
		},
		func(r dbq.InvitationListRow) timeKey { return timeKey{At: r.CreatedAt, ID: r.ID} })
	if err != nil {
		return nil, err
	}
	out := &api.OrganizationInvitationList{Data: make([]api.OrganizationInvitation, len(page.Data)), Pagination: orgPageInfo(page)}
	for i, r := range page.Data {
		out.Data[i] = invitationOf(dbq.InvitationCreateRow(r))
	}
	return out, nil
}

// OrganizationsRevokeInvitation revokes a pending invitation.
func (h *Organizations) OrganizationsRevokeInvitation(ctx context.Context, params api.OrganizationsRevokeInvitationParams) error {
	_, org, err := managerCaller(ctx, auth.ManageTeam)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		return orgs.Revoke(ctx, tx, params.ID)
	})
}

// OrganizationsAcceptInvitation joins the organization an invitation names and returns it as the new member
// sees it; the session's selection does not change.
func (h *Organizations) OrganizationsAcceptInvitation(ctx context.Context, params api.OrganizationsAcceptInvitationParams) (*api.Organization, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	org, err := h.invitations.Accept(ctx, p, params.Token)
	if err != nil {
		return nil, err
	}
	var out *api.Organization
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		out, err = h.currentOrganization(ctx, tx, p, org)
		return err
	})
	return out, err
}
