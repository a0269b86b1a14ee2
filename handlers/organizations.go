package handlers

import (
	"context"
	"maps"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
		ReplyUndoSeconds: int(r.ReplyUndoSeconds),
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

// OrganizationsUpdateCurrent changes the current organization's settings that were sent (its name, the undo
// window of instant sends), with one audit entry and one settings.updated event naming the fields changed.
func (h *Organizations) OrganizationsUpdateCurrent(ctx context.Context, req *api.OrganizationUpdate, _ api.OrganizationsUpdateCurrentParams) (*api.Organization, error) {
	p, org, err := managerCaller(ctx, auth.ManageSettings)
	if err != nil {
		return nil, err
	}
	var out *api.Organization
	err = db.WithOrgTx(ctx, h.pool, org, func(ctx context.Context, tx pgx.Tx) error {
		changed := map[string]any{}
		var fields []string
		if v, ok := req.Name.Get(); ok {
			name, err := orgName(v)
			if err != nil {
				return err
			}
			if err := h.queries.OrganizationRename(ctx, tx, dbq.OrganizationRenameParams{OrganizationID: org, Name: name}); err != nil {
				return err
			}
			fields, changed["name"] = append(fields, "name"), name
		}
		if v, ok := req.ReplyUndoSeconds.Get(); ok {
			// The spec bounds it to 5..120 (the generated server refuses other values); the column's CHECK agrees.
			if err := h.queries.OrganizationSetReplyUndo(ctx, tx, dbq.OrganizationSetReplyUndoParams{OrganizationID: org, Seconds: int32(v)}); err != nil {
				return err
			}
			fields, changed["reply_undo_seconds"] = append(fields, "reply_undo_seconds"), v
		}
		if len(fields) > 0 {
			if err := audit.Record(ctx, tx, audit.Entry{Action: audit.ActionUpdate, Event: "organization.updated", EntityType: audit.EntityOrganization,
				EntityID: org.String(), Metadata: changed}); err != nil {
				return err
			}
			event := maps.Clone(changed)
			event["fields"] = fields
			if _, err := h.outbox.Emit(ctx, tx, events.SettingsUpdated, event); err != nil {
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
