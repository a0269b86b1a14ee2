package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

func TestOrganizationCustomRoles(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := orgSignUp(t, env, "ada@example.com")
	bob := orgJoin(t, env, ada, orgSignUp(t, env, "bob@example.com"), "member")

	catalog, err := bob.client.OrganizationsListRolePermissions(ctx)
	require.NoError(t, err)
	require.Len(t, catalog.Permissions, 11)
	for i, p := range auth.OrgPermissionNames {
		require.Equal(t, p.Name, string(catalog.Permissions[i].Name))
		require.NotEmpty(t, catalog.Permissions[i].Description)
	}

	newRole := func(c *api.Client, name string, perms ...api.OrganizationPermission) (*api.CustomRole, error) {
		perms = append([]api.OrganizationPermission{}, perms...)
		return c.OrganizationsCreateRole(ctx, &api.CustomRoleCreate{Name: name, Description: api.NewOptString("Hires people"), Permissions: perms},
			api.OrganizationsCreateRoleParams{})
	}
	recruiter, err := newRole(ada.client, "Recruiter", api.OrganizationPermissionViewContacts, api.OrganizationPermissionManageTeam)
	require.NoError(t, err)
	require.Equal(t, "Recruiter", recruiter.Name)
	require.Equal(t, "Hires people", recruiter.Description)
	require.Equal(t, ada.home, recruiter.OrganizationID)
	require.Equal(t, []string{"view_contacts", "manage_team"}, permissionNames(recruiter.Permissions))
	require.Zero(t, recruiter.MemberCount)
	analyst, err := newRole(ada.client, "Analyst", api.OrganizationPermissionViewAnalytics)
	require.NoError(t, err)
	_, err = newRole(ada.client, "recruiter")
	requireAPIError(t, err, 409, "role_name_taken")
	_, err = newRole(ada.client, "  ")
	requireAPIError(t, err, 400, "invalid_name")
	require.Equal(t, 400, orgRawStatus(t, env, http.MethodPost, "/v1/roles", ada.pair.AccessToken, `{"name":"Odd","permissions":["fly_planes"]}`), "unknown permission")
	_, err = newRole(bob.client, "Mine")
	requireAPIError(t, err, 403, "permission_denied")

	// Any member reads them, sorted by name.
	roles, err := bob.client.OrganizationsListRoles(ctx, api.OrganizationsListRolesParams{})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{analyst.ID, recruiter.ID}, []uuid.UUID{roles.Data[0].ID, roles.Data[1].ID})
	page, err := bob.client.OrganizationsListRoles(ctx, api.OrganizationsListRolesParams{Limit: api.NewOptInt(1)})
	require.NoError(t, err)
	require.True(t, page.Pagination.HasMore)
	page, err = bob.client.OrganizationsListRoles(ctx, api.OrganizationsListRolesParams{Limit: api.NewOptInt(1), Cursor: api.NewOptString(page.Pagination.NextCursor.Value)})
	require.NoError(t, err)
	require.Equal(t, recruiter.ID, page.Data[0].ID)
	require.False(t, page.Pagination.HasMore)
	got, err := bob.client.OrganizationsGetRole(ctx, api.OrganizationsGetRoleParams{ID: recruiter.ID})
	require.NoError(t, err)
	require.Equal(t, recruiter.Name, got.Name)
	_, err = bob.client.OrganizationsGetRole(ctx, api.OrganizationsGetRoleParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")

	// Holding a custom role: role member plus the role's id, and exactly its permissions, which follow every
	// change of the role at once.
	member, err := ada.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: recruiter.ID.String()}, api.OrganizationsUpdateMemberParams{UserId: bob.id})
	require.NoError(t, err)
	require.Equal(t, api.OrganizationRoleMember, member.Role)
	require.Equal(t, recruiter.ID, member.CustomRoleID.Value)
	cur, err := bob.client.OrganizationsGetCurrent(ctx)
	require.NoError(t, err)
	require.Equal(t, api.OrganizationRoleMember, cur.Role)
	require.Equal(t, recruiter.ID, cur.CustomRoleID.Value)
	require.Equal(t, []string{"view_contacts", "manage_team"}, permissionNames(cur.Permissions))
	me, err := bob.client.AuthGetMe(ctx)
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{recruiter.ID}, me.Roles)
	_, err = bob.client.OrganizationsCreateInvitation(ctx, &api.OrganizationInvitationCreate{Email: "carol@example.com", Role: api.NewOptString(recruiter.ID.String())},
		api.OrganizationsCreateInvitationParams{})
	require.NoError(t, err, "manage_team comes from the custom role")
	got, err = ada.client.OrganizationsGetRole(ctx, api.OrganizationsGetRoleParams{ID: recruiter.ID})
	require.NoError(t, err)
	require.Equal(t, 1, got.MemberCount)

	updated, err := ada.client.OrganizationsUpdateRole(ctx, &api.CustomRoleUpdate{Name: api.NewOptString("Talent"),
		Permissions: []api.OrganizationPermission{api.OrganizationPermissionViewContacts}}, api.OrganizationsUpdateRoleParams{ID: recruiter.ID})
	require.NoError(t, err)
	require.Equal(t, "Talent", updated.Name)
	require.Equal(t, "Hires people", updated.Description, "only the fields sent change")
	require.Equal(t, []string{"view_contacts"}, permissionNames(updated.Permissions))
	_, err = bob.client.OrganizationsListInvitations(ctx, api.OrganizationsListInvitationsParams{})
	requireAPIError(t, err, 403, "permission_denied")
	_, err = ada.client.OrganizationsUpdateRole(ctx, &api.CustomRoleUpdate{Name: api.NewOptString("ANALYST")}, api.OrganizationsUpdateRoleParams{ID: recruiter.ID})
	requireAPIError(t, err, 409, "role_name_taken")
	_, err = ada.client.OrganizationsUpdateRole(ctx, &api.CustomRoleUpdate{Name: api.NewOptString("Ghost")}, api.OrganizationsUpdateRoleParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
	_, err = ada.client.OrganizationsUpdateRole(ctx, &api.CustomRoleUpdate{}, api.OrganizationsUpdateRoleParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
	_, err = bob.client.OrganizationsUpdateRole(ctx, &api.CustomRoleUpdate{}, api.OrganizationsUpdateRoleParams{ID: recruiter.ID})
	requireAPIError(t, err, 403, "permission_denied")

	// Deleting: refused while a member holds it or a pending invitation carries it.
	requireAPIError(t, ada.client.OrganizationsDeleteRole(ctx, api.OrganizationsDeleteRoleParams{ID: recruiter.ID}), 409, "role_in_use")
	_, err = ada.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "member"}, api.OrganizationsUpdateMemberParams{UserId: bob.id})
	require.NoError(t, err)
	requireAPIError(t, ada.client.OrganizationsDeleteRole(ctx, api.OrganizationsDeleteRoleParams{ID: recruiter.ID}), 409, "role_in_use")
	invs, err := ada.client.OrganizationsListInvitations(ctx, api.OrganizationsListInvitationsParams{})
	require.NoError(t, err)
	require.Equal(t, recruiter.ID, invs.Data[0].CustomRoleID.Value)
	require.Equal(t, api.OrganizationRoleMember, invs.Data[0].Role)
	require.NoError(t, ada.client.OrganizationsRevokeInvitation(ctx, api.OrganizationsRevokeInvitationParams{ID: invs.Data[0].ID}))
	requireAPIError(t, bob.client.OrganizationsDeleteRole(ctx, api.OrganizationsDeleteRoleParams{ID: recruiter.ID}), 403, "permission_denied")
	require.NoError(t, ada.client.OrganizationsDeleteRole(ctx, api.OrganizationsDeleteRoleParams{ID: recruiter.ID}))
	requireAPIError(t, ada.client.OrganizationsDeleteRole(ctx, api.OrganizationsDeleteRoleParams{ID: recruiter.ID}), 404, "not_found")
	_, err = ada.client.OrganizationsGetRole(ctx, api.OrganizationsGetRoleParams{ID: recruiter.ID})
	requireAPIError(t, err, 404, "not_found")

	// Session only.
	key := env.Bootstrap(t, "keys").APIKey
	kc := env.Client(t, key)
	_, err = kc.OrganizationsListRolePermissions(ctx)
	requireAPIError(t, err, 403, "session_required")
	_, err = kc.OrganizationsListRoles(ctx, api.OrganizationsListRolesParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = kc.OrganizationsGetRole(ctx, api.OrganizationsGetRoleParams{ID: analyst.ID})
	requireAPIError(t, err, 403, "session_required")
	_, err = newRole(kc, "Key")
	requireAPIError(t, err, 403, "session_required")
	_, err = kc.OrganizationsUpdateRole(ctx, &api.CustomRoleUpdate{}, api.OrganizationsUpdateRoleParams{ID: analyst.ID})
	requireAPIError(t, err, 403, "session_required")
	requireAPIError(t, kc.OrganizationsDeleteRole(ctx, api.OrganizationsDeleteRoleParams{ID: analyst.ID}), 403, "session_required")
	_, err = env.Client(t, "").OrganizationsListRolePermissions(ctx)
	requireAPIError(t, err, 401, "missing_credential")

	actions := strings.Join(orgAuditActions(t, env, ada.home), " ")
	for _, a := range []string{"role.created", "role.updated", "role.deleted"} {
		require.Contains(t, actions, a)
	}
}
