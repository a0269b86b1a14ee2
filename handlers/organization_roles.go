package handlers

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/identity/orgs"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

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
