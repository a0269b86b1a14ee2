package handlers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
)

func TestOrganizationTeams(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	owner := env.SignIn(t, "owner@acme.example", apitest.Password)
	ada := orgPerson{email: "owner@acme.example", pair: owner, client: env.Client(t, owner.AccessToken), id: boot.UserID, home: boot.OrganizationID}
	bob := orgJoin(t, env, ada, orgSignUp(t, env, "bob@example.com"), "member")
	outsider := orgSignUp(t, env, "carol@example.com")

	sales, err := ada.client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Sales"}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)
	require.Equal(t, "#6b7280", sales.Color)
	require.Empty(t, sales.Members)
	require.Equal(t, boot.OrganizationID, sales.OrganizationID)
	_, err = ada.client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "SALES"}, api.OrganizationsCreateTeamParams{})
	requireAPIError(t, err, 409, "team_name_taken")
	_, err = ada.client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Ops", Color: api.NewOptString("blue")}, api.OrganizationsCreateTeamParams{})
	requireAPIError(t, err, 400, "invalid_color")
	_, err = ada.client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: " "}, api.OrganizationsCreateTeamParams{})
	requireAPIError(t, err, 400, "invalid_name")
	_, err = bob.client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Bob's"}, api.OrganizationsCreateTeamParams{})
	requireAPIError(t, err, 403, "permission_denied")

	// API keys use the team routes with READ_CRM / WRITE_CRM.
	full := env.Client(t, boot.APIKey)
	ops, err := full.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Ops", Color: api.NewOptString("#3B82F6")}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)
	require.Equal(t, "#3b82f6", ops.Color)

	withBob, err := ada.client.OrganizationsAddTeamMember(ctx, &api.TeamAddMember{UserID: bob.id}, api.OrganizationsAddTeamMemberParams{ID: sales.ID})
	require.NoError(t, err)
	require.Len(t, withBob.Members, 1)
	require.Equal(t, bob.id, withBob.Members[0].UserID)
	require.Equal(t, "bob@example.com", withBob.Members[0].Email)
	_, err = full.OrganizationsAddTeamMember(ctx, &api.TeamAddMember{UserID: ada.id}, api.OrganizationsAddTeamMemberParams{ID: sales.ID})
	require.NoError(t, err)
	_, err = ada.client.OrganizationsAddTeamMember(ctx, &api.TeamAddMember{UserID: bob.id}, api.OrganizationsAddTeamMemberParams{ID: sales.ID})
	requireAPIError(t, err, 409, "already_in_team")
	_, err = ada.client.OrganizationsAddTeamMember(ctx, &api.TeamAddMember{UserID: outsider.id}, api.OrganizationsAddTeamMemberParams{ID: sales.ID})
	requireAPIError(t, err, 400, "not_a_member")
	_, err = ada.client.OrganizationsAddTeamMember(ctx, &api.TeamAddMember{UserID: bob.id}, api.OrganizationsAddTeamMemberParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
	_, err = bob.client.OrganizationsAddTeamMember(ctx, &api.TeamAddMember{UserID: bob.id}, api.OrganizationsAddTeamMemberParams{ID: ops.ID})
	requireAPIError(t, err, 403, "permission_denied")

	// Any member reads them, sorted by name, with their members.
	teams, err := bob.client.OrganizationsListTeams(ctx)
	require.NoError(t, err)
	require.Len(t, teams.Data, 2)
	require.Equal(t, []string{"Ops", "Sales"}, []string{teams.Data[0].Name, teams.Data[1].Name})
	require.Empty(t, teams.Data[0].Members)
	require.Equal(t, []uuid.UUID{bob.id, ada.id}, []uuid.UUID{teams.Data[1].Members[0].UserID, teams.Data[1].Members[1].UserID})
	got, err := full.OrganizationsGetTeam(ctx, api.OrganizationsGetTeamParams{ID: sales.ID})
	require.NoError(t, err)
	require.Len(t, got.Members, 2)
	_, err = bob.client.OrganizationsGetTeam(ctx, api.OrganizationsGetTeamParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")

	renamed, err := ada.client.OrganizationsUpdateTeam(ctx, &api.TeamUpdate{Name: api.NewOptString("Field sales")}, api.OrganizationsUpdateTeamParams{ID: sales.ID})
	require.NoError(t, err)
	require.Equal(t, "Field sales", renamed.Name)
	require.Equal(t, "#6b7280", renamed.Color, "only the fields sent change")
	require.Len(t, renamed.Members, 2)
	_, err = full.OrganizationsUpdateTeam(ctx, &api.TeamUpdate{Color: api.NewOptString("#000000")}, api.OrganizationsUpdateTeamParams{ID: sales.ID})
	require.NoError(t, err)
	_, err = ada.client.OrganizationsUpdateTeam(ctx, &api.TeamUpdate{Name: api.NewOptString("ops")}, api.OrganizationsUpdateTeamParams{ID: sales.ID})
	requireAPIError(t, err, 409, "team_name_taken")
	_, err = ada.client.OrganizationsUpdateTeam(ctx, &api.TeamUpdate{Color: api.NewOptString("#12")}, api.OrganizationsUpdateTeamParams{ID: sales.ID})
	requireAPIError(t, err, 400, "invalid_color")
	_, err = ada.client.OrganizationsUpdateTeam(ctx, &api.TeamUpdate{Name: api.NewOptString("Ghost")}, api.OrganizationsUpdateTeamParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
	_, err = ada.client.OrganizationsUpdateTeam(ctx, &api.TeamUpdate{}, api.OrganizationsUpdateTeamParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
	unchanged, err := ada.client.OrganizationsUpdateTeam(ctx, &api.TeamUpdate{}, api.OrganizationsUpdateTeamParams{ID: sales.ID})
	require.NoError(t, err)
	require.Equal(t, "#000000", unchanged.Color)
	_, err = bob.client.OrganizationsUpdateTeam(ctx, &api.TeamUpdate{}, api.OrganizationsUpdateTeamParams{ID: sales.ID})
	requireAPIError(t, err, 403, "permission_denied")

	requireAPIError(t, bob.client.OrganizationsRemoveTeamMember(ctx, api.OrganizationsRemoveTeamMemberParams{ID: sales.ID, UserId: bob.id}), 403, "permission_denied")
	require.NoError(t, ada.client.OrganizationsRemoveTeamMember(ctx, api.OrganizationsRemoveTeamMemberParams{ID: sales.ID, UserId: bob.id}))
	requireAPIError(t, ada.client.OrganizationsRemoveTeamMember(ctx, api.OrganizationsRemoveTeamMemberParams{ID: sales.ID, UserId: bob.id}), 404, "not_found")
	members, err := bob.client.OrganizationsListMembers(ctx, api.OrganizationsListMembersParams{})
	require.NoError(t, err)
	require.Len(t, members.Data, 2, "bob stays a member of the organization")
	require.NoError(t, full.OrganizationsRemoveTeamMember(ctx, api.OrganizationsRemoveTeamMemberParams{ID: sales.ID, UserId: ada.id}))

	requireAPIError(t, bob.client.OrganizationsDeleteTeam(ctx, api.OrganizationsDeleteTeamParams{ID: sales.ID}), 403, "permission_denied")
	require.NoError(t, ada.client.OrganizationsDeleteTeam(ctx, api.OrganizationsDeleteTeamParams{ID: sales.ID}))
	requireAPIError(t, ada.client.OrganizationsDeleteTeam(ctx, api.OrganizationsDeleteTeamParams{ID: sales.ID}), 404, "not_found")
	require.NoError(t, full.OrganizationsDeleteTeam(ctx, api.OrganizationsDeleteTeamParams{ID: ops.ID}))

	// Scopes: READ_CRM reads, WRITE_CRM writes.
	reader := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadCRM))
	_, err = reader.OrganizationsListTeams(ctx)
	require.NoError(t, err)
	_, err = reader.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Nope"}, api.OrganizationsCreateTeamParams{})
	requireAPIError(t, err, 403, "missing_scope")
	requireAPIError(t, reader.OrganizationsDeleteTeam(ctx, api.OrganizationsDeleteTeamParams{ID: ops.ID}), 403, "missing_scope")
	writer := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.WriteCRM))
	_, err = writer.OrganizationsListTeams(ctx)
	requireAPIError(t, err, 403, "missing_scope")
	_, err = writer.OrganizationsGetTeam(ctx, api.OrganizationsGetTeamParams{ID: ops.ID})
	requireAPIError(t, err, 403, "missing_scope")
	team, err := writer.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Writers"}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)
	_, err = writer.OrganizationsUpdateTeam(ctx, &api.TeamUpdate{Name: api.NewOptString("Authors")}, api.OrganizationsUpdateTeamParams{ID: team.ID})
	require.NoError(t, err)
	_, err = writer.OrganizationsAddTeamMember(ctx, &api.TeamAddMember{UserID: bob.id}, api.OrganizationsAddTeamMemberParams{ID: team.ID})
	require.NoError(t, err)
	_, err = env.Client(t, "").OrganizationsListTeams(ctx)
	requireAPIError(t, err, 401, "missing_credential")

	actions := strings.Join(orgAuditActions(t, env, boot.OrganizationID), " ")
	for _, a := range []string{"team.created", "team.updated", "team.deleted", "team_member.added", "team_member.removed"} {
		require.Contains(t, actions, a)
	}
}
