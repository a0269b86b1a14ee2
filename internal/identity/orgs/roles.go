package orgs

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Role is a member's role: a built-in one, or a custom role of the organization. memberships.role stores the
// built-in name or the custom role's id.
type Role struct {
	// Builtin is owner, admin or member; the holder of a custom role is a member with that role on top.
	Builtin string
	// Custom is the custom role, or uuid.Nil for a built-in role.
	Custom uuid.UUID
}

var errUnknownRole = apierror.BadRequest("unknown_role",
	"role must be owner, admin, member or the id of a custom role of this organization.")

// ParseRole reads a role as requests and memberships.role spell it: owner, admin, member or a custom role id.
func ParseRole(s string) (Role, error) {
	if _, ok := auth.BuiltinRolePermissions[s]; ok {
		return Role{Builtin: s}, nil
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return Role{}, errUnknownRole
	}
	return Role{Builtin: auth.RoleMember, Custom: id}, nil
}

// Stored is the value memberships.role keeps for r.
func (r Role) Stored() string {
	if r.Custom != uuid.Nil {
		return r.Custom.String()
	}
	return r.Builtin
}

// IsOwner reports whether r is the owner role, the one only owners may grant or take away.
func (r Role) IsOwner() bool { return r.Custom == uuid.Nil && r.Builtin == auth.RoleOwner }

// Permissions is what a holder of r may do; custom is the custom role's stored permission set (ignored for a
// built-in role).
func (r Role) Permissions(custom int64) auth.OrgPermission {
	if r.Custom != uuid.Nil {
		return auth.OrgPermission(custom) & auth.AllOrgPermissions
	}
	return auth.BuiltinRolePermissions[r.Builtin]
}

// customRoleName checks that r's custom role exists in the organization of tx and returns its name ("" for a
// built-in role): an unknown id is the caller's mistake, a 400.
func customRoleName(ctx context.Context, tx pgx.Tx, org uuid.UUID, r Role) (string, error) {
	if r.Custom == uuid.Nil {
		return "", nil
	}
	role, err := dbq.New().CustomRoleGet(ctx, tx, dbq.CustomRoleGetParams{OrganizationID: org, ID: r.Custom})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", errUnknownRole
	}
	return role.Name, err
}

// PermissionInfo describes one organization permission for the role editor.
type PermissionInfo struct {
	Permission  auth.OrgPermission
	Name        string
	Description string
}

// permissionDescriptions says what each permission lets a member do.
var permissionDescriptions = map[auth.OrgPermission]string{
	auth.ManageAPIKeys:   "Create, change and revoke the organization's API keys.",
	auth.ManageSettings:  "Change the organization's name and settings.",
	auth.UseIntegrations: "Connect and use integrations.",
	auth.ViewContacts:    "See contacts, lists and segments.",
	auth.ManageContacts:  "Create, import, change and delete contacts.",
	auth.ViewCampaigns:   "See campaigns and their results.",
	auth.ManageCampaigns: "Create, change, launch and pause campaigns.",
	auth.ManageEmails:    "Connect, configure and remove sender mailboxes.",
	auth.AccessUnibox:    "Read and answer replies in the unified inbox.",
	auth.ViewAnalytics:   "See analytics and reports.",
	auth.ManageTeam:      "Invite and remove members, change their roles, and manage custom roles and teams.",
}

// Catalog lists every organization permission a custom role can grant, in catalog order.
func Catalog() []PermissionInfo {
	out := make([]PermissionInfo, 0, len(auth.OrgPermissionNames))
	for _, p := range auth.OrgPermissionNames {
		out = append(out, PermissionInfo{Permission: p.Permission, Name: p.Name, Description: permissionDescriptions[p.Permission]})
	}
	return out
}

// PermissionNames lists the catalog names of the permissions in set, in catalog order.
func PermissionNames(set auth.OrgPermission) []string {
	out := []string{}
	for _, p := range auth.OrgPermissionNames {
		if set.Has(p.Permission) {
			out = append(out, p.Name)
		}
	}
	return out
}

// PermissionsNamed is the set of the named permissions; a name outside the catalog is a 400.
func PermissionsNamed(names []string) (auth.OrgPermission, error) {
	var set auth.OrgPermission
	for _, n := range names {
		found := false
		for _, p := range auth.OrgPermissionNames {
			if p.Name == n {
				set |= p.Permission
				found = true
			}
		}
		if !found {
			return 0, apierror.BadRequest("unknown_permission", "Unknown organization permission "+n+"; GET /roles/permissions lists them.")
		}
	}
	return set, nil
}
