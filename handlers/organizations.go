package handlers

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/identity/orgs"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/pagination"
	"github.com/outflowhq/outflow/internal/platform/sysmail"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// Organizations implements organization governance: the caller's organizations and switching between them,
// the current organization, its members, invitations, custom roles and teams. Everything but teams is for
// signed-in people only; teams are also open to API keys and OAuth tokens (CRM tasks are assigned to them).
type Organizations struct {
	pool        *pgxpool.Pool
	sessions    *accounts.Sessions
	invitations *orgs.Invitations
	outbox      *events.Outbox
	cursors     *pagination.Cursors
	queries     *dbq.Queries
}

// NewOrganizations builds the organization handlers. Invitations are emailed through sender with links to
// appURL; team, role and settings events go through outbox; list cursors are signed with a key derived from
// secret.
func NewOrganizations(pool *pgxpool.Pool, sessions *accounts.Sessions, sender sysmail.Sender, outbox *events.Outbox, secret []byte, appURL string) *Organizations {
	return &Organizations{pool: pool, sessions: sessions, outbox: outbox, invitations: orgs.NewInvitations(pool, sender, appURL),
		cursors: pagination.NewCursors(secret), queries: dbq.New()}
}

// List sort orders, named in cursors so a cursor is only accepted by the list that issued it.
const (
	sortOrganizations = "organizations:joined_at:asc"
	sortMembers       = "members:joined_at:asc"
	sortInvitations   = "invitations:created_at:desc"
	sortCustomRoles   = "roles:name:asc"
)

// orgListLimit resolves a governance list's page size: 50 unless asked, 1 to 100.
func orgListLimit(limit api.OptInt) (int, error) {
	return pagination.Limit(limit.Value, limit.Set, 50, 100, true)
}

// orgPageInfo maps a built page onto the list envelope's pagination object.
func orgPageInfo[T any](p pagination.Page[T]) api.Pagination {
	out := api.Pagination{HasMore: p.HasMore}
	out.NextCursor.SetToNull()
	if p.NextCursor != nil {
		out.NextCursor.SetTo(*p.NextCursor)
	}
	return out
}

// organizationOf maps an organization as one member sees it; current is the organization the session selects.
func organizationOf(r dbq.OrganizationForMemberRow, current uuid.UUID) api.Organization {
	role, _ := orgs.ParseRole(r.Role)
	return api.Organization{
		ID: r.OrganizationID, Name: r.Name, Role: api.OrganizationRole(role.Builtin), CustomRoleID: orgNilUUID(role.Custom),
		Permissions: orgPermissionsOf(role.Permissions(r.CustomRolePermissions.Int64)),
		Current:     r.OrganizationID == current, MemberCount: int(r.MemberCount), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

// orgNilUUID maps uuid.Nil to null.
func orgNilUUID(id uuid.UUID) api.NilUUID {
	if id == uuid.Nil {
		return api.NilUUID{Null: true}
	}
	return api.NewNilUUID(id)
}

// orgPermissionsOf lists a permission set by catalog name.
func orgPermissionsOf(set auth.OrgPermission) []api.OrganizationPermission {
	names := orgs.PermissionNames(set)
	out := make([]api.OrganizationPermission, len(names))
	for i, n := range names {
		out[i] = api.OrganizationPermission(n)
	}
	return out
}

// orgPermissionsFrom reads a permission set sent by catalog name.
func orgPermissionsFrom(in []api.OrganizationPermission) (auth.OrgPermission, error) {
	names := make([]string, len(in))
	for i, p := range in {
		names[i] = string(p)
	}
	return orgs.PermissionsNamed(names)
}

// orgName trims an organization, role or team name and checks it is 1 to 255 characters: the schema counts the
// raw value, and a name of spaces only would pass it.
func orgName(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" || len([]rune(v)) > 255 {
		return "", apierror.BadRequest("invalid_name", "name must be 1 to 255 characters.")
	}
	return v, nil
}

// OrganizationsList lists every organization the caller belongs to, oldest membership first. The memberships
// come from the one cross-organization read; each organization is then read inside its own scope.
func (h *Organizations) OrganizationsList(ctx context.Context, params api.OrganizationsListParams) (*api.OrganizationList, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := orgListLimit(params.Limit)
	if err != nil {
		return nil, err
	}
	// Not keysetPage: the memberships are read across organizations, then each organization in its own scope.
	after, err := keysetAfter[timeKey](h.cursors, sortOrganizations, params.Cursor)
	if err != nil {
		return nil, err
	}
	args := dbq.MembershipPageForUserParams{UserID: p.UserID, RowLimit: int32(limit + 1)}
	args.AfterCreatedAt, args.AfterOrganizationID = after.bounds()
	var rows []dbq.OrganizationForMemberRow
	err = db.WithTx(ctx, h.pool, func(ctx context.Context, tx pgx.Tx) error {
		memberships, err := h.queries.MembershipPageForUser(ctx, tx, args)
		if err != nil {
			return err
		}
		for _, m := range memberships {
			err := db.WithOrgTx(ctx, tx, m.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
				r, err := h.queries.OrganizationForMember(ctx, tx, dbq.OrganizationForMemberParams{UserID: p.UserID, OrganizationID: m.OrganizationID})
				if err != nil {
					return err
				}
				rows = append(rows, r)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	page, err := pagination.Build(h.cursors, sortOrganizations, rows, limit, func(r dbq.OrganizationForMemberRow) any {
		return timeKey{At: r.JoinedAt, ID: r.OrganizationID}
	})
	if err != nil {
		return nil, err
	}
	out := &api.OrganizationList{Data: make([]api.Organization, len(page.Data)), Pagination: orgPageInfo(page)}
	for i, r := range page.Data {
		out.Data[i] = organizationOf(r, p.OrganizationID)
	}
	return out, nil
}

// currentOrganization reads the organization of tx as the caller sees it.
func (h *Organizations) currentOrganization(ctx context.Context, tx pgx.Tx, p *auth.Principal, org uuid.UUID) (*api.Organization, error) {
	r, err := h.queries.OrganizationForMember(ctx, tx, dbq.OrganizationForMemberParams{UserID: p.UserID, OrganizationID: org})
	if err != nil {
		return nil, db.Classify(err, "Organization")
	}
	out := organizationOf(r, p.OrganizationID)
	return &out, nil
}

// OrganizationsGetCurrent returns the organization the session selects.
func (h *Organizations) OrganizationsGetCurrent(ctx context.Context) (*api.Organization, error) {
	p, org, err := memberCaller(ctx)
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

// OrganizationsUpdateCurrent renames the current organization.
func (h *Organizations) OrganizationsUpdateCurrent(ctx context.Context, req *api.OrganizationUpdate, _ api.OrganizationsUpdateCurrentParams) (*api.Organization, error) {
	p, org, err := managerCaller(ctx, auth.ManageSettings)
	if err != nil {
		return nil, err
	}
	var out *api.Organization
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if v, ok := req.Name.Get(); ok {
			name, err := orgName(v)
			if err != nil {
				return err
			}
			if err := h.queries.OrganizationRename(ctx, tx, dbq.OrganizationRenameParams{OrganizationID: org, Name: name}); err != nil {
				return err
			}
			if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "organization.updated", EntityType: audit.EntityOrganization,
				EntityID: org.String(), Metadata: map[string]any{"name": name}}); err != nil {
				return err
			}
			if _, err := h.outbox.Emit(ctx, tx, events.SettingsUpdated, map[string]any{"fields": []string{"name"}, "name": name}); err != nil {
				return err
			}
		}
		out, err = h.currentOrganization(ctx, tx, p, org)
		return err
	})
	return out, err
}

// OrganizationsSwitch reissues the session's tokens scoped to another organization of the caller's and
// remembers it for their next sign-in. The session's earlier refresh tokens count as rotated: presenting one
// again is reuse, as after POST /auth/refresh.
func (h *Organizations) OrganizationsSwitch(ctx context.Context, req *api.OrganizationSwitchRequest, _ api.OrganizationsSwitchParams) (*api.TokenPair, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	var pair accounts.TokenPair
	err = db.WithTx(ctx, h.pool, func(ctx context.Context, tx pgx.Tx) error {
		memberships, err := h.queries.UserMemberships(ctx, tx, p.UserID)
		if err != nil {
			return err
		}
		member := false
		for _, m := range memberships {
			member = member || m.OrganizationID == req.OrganizationID
		}
		if !member {
			return apierror.NotFound("not_found", "Organization not found.")
		}
		if err := h.queries.SessionRetireRefreshTokens(ctx, tx, p.CredentialID); err != nil {
			return err
		}
		if pair, err = h.sessions.SwitchOrganization(ctx, tx, p.CredentialID, p.UserID, req.OrganizationID); err != nil {
			return err
		}
		return h.queries.UserSetLastOrganization(ctx, tx, dbq.UserSetLastOrganizationParams{ID: p.UserID, OrganizationID: req.OrganizationID})
	})
	if err != nil {
		return nil, err
	}
	return TokenPairOf(pair), nil
}

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

// OrganizationsListRolePermissions lists the organization permissions a custom role can grant.
func (h *Organizations) OrganizationsListRolePermissions(ctx context.Context) (*api.OrganizationPermissionCatalog, error) {
	if _, err := sessionCaller(ctx); err != nil {
		return nil, err
	}
	catalog := orgs.Catalog()
	out := &api.OrganizationPermissionCatalog{Permissions: make([]api.OrganizationPermissionInfo, len(catalog))}
	for i, c := range catalog {
		out.Permissions[i] = api.OrganizationPermissionInfo{Name: api.OrganizationPermission(c.Name), Description: c.Description}
	}
	return out, nil
}

// customRoleOf maps a custom role row; the get and list queries select the same columns.
func customRoleOf(r dbq.CustomRoleGetRow) api.CustomRole {
	return api.CustomRole{ID: r.ID, OrganizationID: r.OrganizationID, Name: r.Name, Description: r.Description,
		Permissions: orgPermissionsOf(auth.OrgPermission(r.Permissions)), MemberCount: int(r.MemberCount),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// customRoleGet reads one custom role; an unknown id (or another organization's) is a 404.
func (h *Organizations) customRoleGet(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (*api.CustomRole, error) {
	r, err := h.queries.CustomRoleGet(ctx, tx, dbq.CustomRoleGetParams{OrganizationID: org, ID: id})
	if err != nil {
		return nil, db.Classify(err, "Role")
	}
	out := customRoleOf(r)
	return &out, nil
}

// orgWriteError maps a failed write: a unique violation of constraint is a 409 with code and message, any other
// database error is classified once as what.
func orgWriteError(err error, what, constraint, code, message string) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "23505" && pg.ConstraintName == constraint {
		return apierror.Conflict(code, message).WithCause(err)
	}
	return db.Classify(err, what)
}

// roleWriteError maps a failed custom role write; the name is unique per organization, whatever its case.
func roleWriteError(err error) error {
	return orgWriteError(err, "Role", "custom_roles_name", "role_name_taken", "A role with this name already exists.")
}

// OrganizationsListRoles lists the current organization's custom roles, sorted by name.
func (h *Organizations) OrganizationsListRoles(ctx context.Context, params api.OrganizationsListRolesParams) (*api.CustomRoleList, error) {
	_, org, err := memberCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := orgListLimit(params.Limit)
	if err != nil {
		return nil, err
	}
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortCustomRoles, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *nameKey, rowLimit int32) ([]dbq.CustomRoleListRow, error) {
			args := dbq.CustomRoleListParams{OrganizationID: org, RowLimit: rowLimit}
			args.AfterName, args.AfterID = after.bounds()
			return h.queries.CustomRoleList(ctx, tx, args)
		},
		func(r dbq.CustomRoleListRow) nameKey { return nameKey{Name: r.Name, ID: r.ID} })
	if err != nil {
		return nil, err
	}
	out := &api.CustomRoleList{Data: make([]api.CustomRole, len(page.Data)), Pagination: orgPageInfo(page)}
	for i, r := range page.Data {
		out.Data[i] = customRoleOf(dbq.CustomRoleGetRow(r))
	}
	return out, nil
}

// OrganizationsGetRole returns one custom role.
func (h *Organizations) OrganizationsGetRole(ctx context.Context, params api.OrganizationsGetRoleParams) (*api.CustomRole, error) {
	_, org, err := memberCaller(ctx)
	if err != nil {
		return nil, err
	}
	var out *api.CustomRole
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		out, err = h.customRoleGet(ctx, tx, org, params.ID)
		return err
	})
	return out, err
}

// OrganizationsCreateRole creates a custom role.
func (h *Organizations) OrganizationsCreateRole(ctx context.Context, req *api.CustomRoleCreate, _ api.OrganizationsCreateRoleParams) (*api.CustomRole, error) {
	_, org, err := managerCaller(ctx, auth.ManageTeam)
	if err != nil {
		return nil, err
	}
	name, err := orgName(req.Name)
	if err != nil {
		return nil, err
	}
	perms, err := orgPermissionsFrom(req.Permissions)
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var out *api.CustomRole
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.queries.CustomRoleCreate(ctx, tx, dbq.CustomRoleCreateParams{OrganizationID: org, ID: id, Name: name,
			Description: strings.TrimSpace(req.Description.Or("")), Permissions: int64(perms)}); err != nil {
			return roleWriteError(err)
		}
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "role.created", EntityType: audit.EntityRole, EntityID: id.String(),
			Metadata: map[string]any{"name": name, "permissions": orgs.PermissionNames(perms)}}); err != nil {
			return err
		}
		if _, err := h.outbox.Emit(ctx, tx, events.RoleCreated, map[string]any{"role_id": id, "name": name,
			"permissions": orgs.PermissionNames(perms)}); err != nil {
			return err
		}
		out, err = h.customRoleGet(ctx, tx, org, id)
		return err
	})
	return out, err
}

// OrganizationsUpdateRole changes a custom role; a new permission set applies at once to every holder.
func (h *Organizations) OrganizationsUpdateRole(ctx context.Context, req *api.CustomRoleUpdate, params api.OrganizationsUpdateRoleParams) (*api.CustomRole, error) {
	_, org, err := managerCaller(ctx, auth.ManageTeam)
	if err != nil {
		return nil, err
	}
	args := dbq.CustomRoleUpdateParams{OrganizationID: org, ID: params.ID}
	changes := map[string]any{}
	if v, ok := req.Name.Get(); ok {
		name, err := orgName(v)
		if err != nil {
			return nil, err
		}
		args.Name, changes["name"] = &name, name
	}
	if v, ok := req.Description.Get(); ok {
		v = strings.TrimSpace(v)
		args.Description, changes["description"] = &v, v
	}
	if req.Permissions != nil {
		perms, err := orgPermissionsFrom(req.Permissions)
		if err != nil {
			return nil, err
		}
		args.Permissions, changes["permissions"] = pgtype.Int8{Int64: int64(perms), Valid: true}, orgs.PermissionNames(perms)
	}
	var out *api.CustomRole
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if len(changes) > 0 {
			n, err := h.queries.CustomRoleUpdate(ctx, tx, args)
			if err != nil {
				return roleWriteError(err)
			}
			if n == 0 {
				return apierror.NotFound("not_found", "Role not found.")
			}
			if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "role.updated", EntityType: audit.EntityRole, EntityID: params.ID.String(),
				Metadata: changes}); err != nil {
				return err
			}
			if _, err := h.outbox.Emit(ctx, tx, events.RoleUpdated, map[string]any{"role_id": params.ID, "changes": changes}); err != nil {
				return err
			}
		}
		out, err = h.customRoleGet(ctx, tx, org, params.ID)
		return err
	})
	return out, err
}

// OrganizationsDeleteRole deletes a custom role nobody holds and no pending invitation carries.
func (h *Organizations) OrganizationsDeleteRole(ctx context.Context, params api.OrganizationsDeleteRoleParams) error {
	_, org, err := managerCaller(ctx, auth.ManageTeam)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		role, err := h.customRoleGet(ctx, tx, org, params.ID)
		if err != nil {
			return err
		}
		holders, err := h.queries.CustomRoleHolders(ctx, tx, dbq.CustomRoleHoldersParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return err
		}
		if holders.Members > 0 || holders.Invitations > 0 {
			return apierror.Conflict("role_in_use", "Members or pending invitations still hold this role: give them another role first.")
		}
		if _, err := h.queries.CustomRoleDelete(ctx, tx, dbq.CustomRoleDeleteParams{OrganizationID: org, ID: params.ID}); err != nil {
			return db.Classify(err, "Role")
		}
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "role.deleted", EntityType: audit.EntityRole, EntityID: params.ID.String(),
			Metadata: map[string]any{"name": role.Name}}); err != nil {
			return err
		}
		_, err = h.outbox.Emit(ctx, tx, events.RoleDeleted, map[string]any{"role_id": params.ID, "name": role.Name})
		return err
	})
}

// defaultTeamColor is the colour of a team created without one.
const defaultTeamColor = "#6b7280"

var teamColorRe = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// teamColor checks a colour is a #rrggbb hex value and lowercases it.
func teamColor(v string) (string, error) {
	if !teamColorRe.MatchString(v) {
		return "", apierror.BadRequest("invalid_color", "color must be a hex colour such as #3b82f6.")
	}
	return strings.ToLower(v), nil
}

// teamsOf maps teams with their members (rows of TeamMemberList, oldest addition first).
func teamsOf(teams []dbq.Team, members []dbq.TeamMemberListRow) []api.Team {
	byTeam := map[uuid.UUID][]api.TeamMember{}
	for _, m := range members {
		name := strings.TrimSpace(m.FirstName + " " + m.LastName)
		byTeam[m.TeamID] = append(byTeam[m.TeamID], api.TeamMember{UserID: m.UserID, Email: m.Email, Name: name, AddedAt: m.AddedAt})
	}
	out := make([]api.Team, len(teams))
	for i, t := range teams {
		ms := byTeam[t.ID]
		if ms == nil {
			ms = []api.TeamMember{}
		}
		out[i] = api.Team{ID: t.ID, OrganizationID: t.OrganizationID, Name: t.Name, Color: t.Color, Members: ms,
			CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	}
	return out
}

// teamGet reads one team with its members; an unknown id (or another organization's) is a 404.
func (h *Organizations) teamGet(ctx context.Context, tx pgx.Tx, org, id uuid.UUID) (*api.Team, error) {
	t, err := h.queries.TeamGet(ctx, tx, dbq.TeamGetParams{OrganizationID: org, ID: id})
	if err != nil {
		return nil, db.Classify(err, "Team")
	}
	members, err := h.queries.TeamMemberList(ctx, tx, dbq.TeamMemberListParams{OrganizationID: org, TeamID: uuid.NullUUID{UUID: id, Valid: true}})
	if err != nil {
		return nil, err
	}
	return &teamsOf([]dbq.Team{t}, members)[0], nil
}

// teamWriteError maps a failed team write; the name is unique per organization, whatever its case.
func teamWriteError(err error) error {
	return orgWriteError(err, "Team", "teams_name", "team_name_taken", "A team with this name already exists.")
}

// OrganizationsListTeams lists every team with its members, sorted by name.
func (h *Organizations) OrganizationsListTeams(ctx context.Context) (*api.TeamCollection, error) {
	org, err := teamCaller(ctx, auth.ReadCRM, "READ_CRM", 0)
	if err != nil {
		return nil, err
	}
	var out *api.TeamCollection
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		teams, err := h.queries.TeamList(ctx, tx, org)
		if err != nil {
			return err
		}
		members, err := h.queries.TeamMemberList(ctx, tx, dbq.TeamMemberListParams{OrganizationID: org})
		if err != nil {
			return err
		}
		out = &api.TeamCollection{Data: teamsOf(teams, members)}
		return nil
	})
	return out, err
}

// OrganizationsGetTeam returns one team with its members.
func (h *Organizations) OrganizationsGetTeam(ctx context.Context, params api.OrganizationsGetTeamParams) (*api.Team, error) {
	org, err := teamCaller(ctx, auth.ReadCRM, "READ_CRM", 0)
	if err != nil {
		return nil, err
	}
	var out *api.Team
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		out, err = h.teamGet(ctx, tx, org, params.ID)
		return err
	})
	return out, err
}

// OrganizationsCreateTeam creates a team without members.
func (h *Organizations) OrganizationsCreateTeam(ctx context.Context, req *api.TeamCreate, _ api.OrganizationsCreateTeamParams) (*api.Team, error) {
	org, err := teamCaller(ctx, auth.WriteCRM, "WRITE_CRM", auth.ManageTeam)
	if err != nil {
		return nil, err
	}
	name, err := orgName(req.Name)
	if err != nil {
		return nil, err
	}
	color, err := teamColor(req.Color.Or(defaultTeamColor))
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, err
	}
	var out *api.Team
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		t, err := h.queries.TeamCreate(ctx, tx, dbq.TeamCreateParams{OrganizationID: org, ID: id, Name: name, Color: color})
		if err != nil {
			return teamWriteError(err)
		}
		out = &teamsOf([]dbq.Team{t}, nil)[0]
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "team.created", EntityType: audit.EntityTeam, EntityID: id.String(),
			Metadata: map[string]any{"name": name, "color": color}})
	})
	return out, err
}

// OrganizationsUpdateTeam renames or recolours a team.
func (h *Organizations) OrganizationsUpdateTeam(ctx context.Context, req *api.TeamUpdate, params api.OrganizationsUpdateTeamParams) (*api.Team, error) {
	org, err := teamCaller(ctx, auth.WriteCRM, "WRITE_CRM", auth.ManageTeam)
	if err != nil {
		return nil, err
	}
	args := dbq.TeamUpdateParams{OrganizationID: org, ID: params.ID}
	changes := map[string]any{}
	if v, ok := req.Name.Get(); ok {
		name, err := orgName(v)
		if err != nil {
			return nil, err
		}
		args.Name, changes["name"] = &name, name
	}
	if v, ok := req.Color.Get(); ok {
		color, err := teamColor(v)
		if err != nil {
			return nil, err
		}
		args.Color, changes["color"] = &color, color
	}
	var out *api.Team
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if len(changes) > 0 {
			if _, err := h.queries.TeamUpdate(ctx, tx, args); err != nil {
				return teamWriteError(err)
			}
			if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "team.updated", EntityType: audit.EntityTeam, EntityID: params.ID.String(),
				Metadata: changes}); err != nil {
				return err
			}
		}
		out, err = h.teamGet(ctx, tx, org, params.ID)
		return err
	})
	return out, err
}

// OrganizationsDeleteTeam deletes a team and its memberships.
func (h *Organizations) OrganizationsDeleteTeam(ctx context.Context, params api.OrganizationsDeleteTeamParams) error {
	org, err := teamCaller(ctx, auth.WriteCRM, "WRITE_CRM", auth.ManageTeam)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		n, err := h.queries.TeamDelete(ctx, tx, dbq.TeamDeleteParams{OrganizationID: org, ID: params.ID})
		if err != nil {
			return err
		}
		if n == 0 {
			return apierror.NotFound("not_found", "Team not found.")
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "team.deleted", EntityType: audit.EntityTeam, EntityID: params.ID.String()})
	})
}

// OrganizationsAddTeamMember adds a member of the organization to a team.
func (h *Organizations) OrganizationsAddTeamMember(ctx context.Context, req *api.TeamAddMember, params api.OrganizationsAddTeamMemberParams) (*api.Team, error) {
	org, err := teamCaller(ctx, auth.WriteCRM, "WRITE_CRM", auth.ManageTeam)
	if err != nil {
		return nil, err
	}
	var out *api.Team
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := h.queries.TeamGet(ctx, tx, dbq.TeamGetParams{OrganizationID: org, ID: params.ID}); err != nil {
			return db.Classify(err, "Team")
		}
		_, err := h.queries.MemberGet(ctx, tx, dbq.MemberGetParams{OrganizationID: org, UserID: req.UserID})
		if errors.Is(err, pgx.ErrNoRows) {
			return apierror.BadRequest("not_a_member", "That user is not a member of this organization.")
		}
		if err != nil {
			return err
		}
		if err := h.queries.TeamMemberAdd(ctx, tx, dbq.TeamMemberAddParams{OrganizationID: org, TeamID: params.ID, UserID: req.UserID}); err != nil {
			return orgWriteError(err, "Team member", "team_members_pkey", "already_in_team", "That user is already in the team.")
		}
		if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "team_member.added", EntityType: audit.EntityTeam, EntityID: params.ID.String(),
			Metadata: map[string]any{"user_id": req.UserID.String()}}); err != nil {
			return err
		}
		out, err = h.teamGet(ctx, tx, org, params.ID)
		return err
	})
	return out, err
}

// OrganizationsRemoveTeamMember takes a user out of a team; they stay in the organization.
func (h *Organizations) OrganizationsRemoveTeamMember(ctx context.Context, params api.OrganizationsRemoveTeamMemberParams) error {
	org, err := teamCaller(ctx, auth.WriteCRM, "WRITE_CRM", auth.ManageTeam)
	if err != nil {
		return err
	}
	return db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		n, err := h.queries.TeamMemberRemove(ctx, tx, dbq.TeamMemberRemoveParams{OrganizationID: org, TeamID: params.ID, UserID: params.UserId})
		if err != nil {
			return err
		}
		if n == 0 {
			return apierror.NotFound("not_found", "Team or team member not found.")
		}
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionDelete, Event: "team_member.removed", EntityType: audit.EntityTeam, EntityID: params.ID.String(),
			Metadata: map[string]any{"user_id": params.UserId.String()}})
	})
}
