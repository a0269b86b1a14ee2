package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
)

func TestOrganizationMembers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := orgSignUp(t, env, "ada@example.com")
	bob := orgJoin(t, env, ada, orgSignUp(t, env, "bob@example.com"), "member")
	carol := orgJoin(t, env, ada, orgSignUp(t, env, "carol@example.com"), "admin")
	_, err := ada.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "member"}, api.OrganizationsUpdateMemberParams{UserId: bob.id})
	require.NoError(t, err, "setting the current role changes nothing")

	// Any member lists them, oldest first, page by page.
	members, err := bob.client.OrganizationsListMembers(ctx, api.OrganizationsListMembersParams{})
	require.NoError(t, err)
	require.Len(t, members.Data, 3)
	require.Equal(t, []uuid.UUID{ada.id, bob.id, carol.id}, []uuid.UUID{members.Data[0].UserID, members.Data[1].UserID, members.Data[2].UserID})
	require.Equal(t, api.OrganizationRoleOwner, members.Data[0].Role)
	require.Equal(t, "ada@example.com", members.Data[0].Email)
	require.True(t, members.Data[0].AvatarURL.Null)
	page, err := bob.client.OrganizationsListMembers(ctx, api.OrganizationsListMembersParams{Limit: api.NewOptInt(2)})
	require.NoError(t, err)
	require.Len(t, page.Data, 2)
	require.True(t, page.Pagination.HasMore)
	page, err = bob.client.OrganizationsListMembers(ctx, api.OrganizationsListMembersParams{Limit: api.NewOptInt(2), Cursor: api.NewOptString(page.Pagination.NextCursor.Value)})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	require.Equal(t, carol.id, page.Data[0].UserID)
	_, err = bob.client.OrganizationsListMembers(ctx, api.OrganizationsListMembersParams{Cursor: api.NewOptString(page.Pagination.NextCursor.Or("x"))})
	requireAPIError(t, err, 400, "invalid_cursor")

	// Role changes need manage_team; only owners touch the owner role.
	_, err = bob.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "admin"}, api.OrganizationsUpdateMemberParams{UserId: bob.id})
	requireAPIError(t, err, 403, "permission_denied")
	_, err = carol.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "owner"}, api.OrganizationsUpdateMemberParams{UserId: bob.id})
	requireAPIError(t, err, 403, "owner_required")
	_, err = carol.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "admin"}, api.OrganizationsUpdateMemberParams{UserId: ada.id})
	requireAPIError(t, err, 403, "owner_required")
	_, err = carol.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: uuid.NewString()}, api.OrganizationsUpdateMemberParams{UserId: bob.id})
	requireAPIError(t, err, 400, "unknown_role")
	require.Equal(t, 400, orgRawStatus(t, env, http.MethodPatch, "/v1/organizations/current/members/"+bob.id.String(), carol.pair.AccessToken, `{"role":"superuser"}`))
	require.Equal(t, 404, orgRawStatus(t, env, http.MethodPatch, "/v1/organizations/current/members/not-an-id", carol.pair.AccessToken, `{"role":"admin"}`), "a malformed id is an unknown one")
	_, err = carol.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "admin"}, api.OrganizationsUpdateMemberParams{UserId: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
	updated, err := carol.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "admin"}, api.OrganizationsUpdateMemberParams{UserId: bob.id})
	require.NoError(t, err)
	require.Equal(t, api.OrganizationRoleAdmin, updated.Role)
	require.Equal(t, "bob@example.com", updated.Email)
	cur, err := bob.client.OrganizationsGetCurrent(ctx)
	require.NoError(t, err)
	require.Equal(t, api.OrganizationRoleAdmin, cur.Role, "the new role applies to the member's live session at once")

	// The last owner can neither step down nor leave.
	_, err = ada.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "admin"}, api.OrganizationsUpdateMemberParams{UserId: ada.id})
	requireAPIError(t, err, 409, "last_owner")
	requireAPIError(t, ada.client.OrganizationsRemoveMember(ctx, api.OrganizationsRemoveMemberParams{UserId: ada.id}), 409, "last_owner")
	requireAPIError(t, carol.client.OrganizationsRemoveMember(ctx, api.OrganizationsRemoveMemberParams{UserId: ada.id}), 403, "owner_required")
	_, err = ada.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "owner"}, api.OrganizationsUpdateMemberParams{UserId: carol.id})
	require.NoError(t, err)
	_, err = ada.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "admin"}, api.OrganizationsUpdateMemberParams{UserId: ada.id})
	require.NoError(t, err, "another owner remains")

	// Removing: manage_team for others, anyone for themselves. Team memberships end with it, and the removed
	// member's session loses the organization at once.
	dave := orgJoin(t, env, carol, orgSignUp(t, env, "dave@example.com"), "member")
	team, err := carol.client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Sales"}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)
	_, err = carol.client.OrganizationsAddTeamMember(ctx, &api.TeamAddMember{UserID: dave.id}, api.OrganizationsAddTeamMemberParams{ID: team.ID})
	require.NoError(t, err)
	requireAPIError(t, dave.client.OrganizationsRemoveMember(ctx, api.OrganizationsRemoveMemberParams{UserId: bob.id}), 403, "permission_denied")
	require.NoError(t, dave.client.OrganizationsRemoveMember(ctx, api.OrganizationsRemoveMemberParams{UserId: dave.id}), "leaving")
	_, err = dave.client.OrganizationsGetCurrent(ctx)
	requireAPIError(t, err, 400, "organization_required")
	team, err = carol.client.OrganizationsGetTeam(ctx, api.OrganizationsGetTeamParams{ID: team.ID})
	require.NoError(t, err)
	require.Empty(t, team.Members)
	require.NoError(t, ada.client.OrganizationsRemoveMember(ctx, api.OrganizationsRemoveMemberParams{UserId: bob.id}))
	requireAPIError(t, ada.client.OrganizationsRemoveMember(ctx, api.OrganizationsRemoveMemberParams{UserId: bob.id}), 404, "not_found")

	// Without a selected organization, every organization-scoped operation is a 400.
	for _, call := range []func() error{
		func() error { _, err := bob.client.OrganizationsGetCurrent(ctx); return err },
		func() error {
			_, err := bob.client.OrganizationsUpdateCurrent(ctx, &api.OrganizationUpdate{}, api.OrganizationsUpdateCurrentParams{})
			return err
		},
		func() error {
			_, err := bob.client.OrganizationsListMembers(ctx, api.OrganizationsListMembersParams{})
			return err
		},
		func() error {
			_, err := bob.client.OrganizationsListRoles(ctx, api.OrganizationsListRolesParams{})
			return err
		},
		func() error { _, err := bob.client.OrganizationsListTeams(ctx); return err },
		func() error {
			_, err := bob.client.OrganizationsListInvitations(ctx, api.OrganizationsListInvitationsParams{})
			return err
		},
	} {
		requireAPIError(t, call(), 400, "organization_required")
	}

	// Session only.
	key := env.Bootstrap(t, "keys").APIKey
	_, err = env.Client(t, key).OrganizationsListMembers(ctx, api.OrganizationsListMembersParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = env.Client(t, key).OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "admin"}, api.OrganizationsUpdateMemberParams{UserId: bob.id})
	requireAPIError(t, err, 403, "session_required")
	requireAPIError(t, env.Client(t, key).OrganizationsRemoveMember(ctx, api.OrganizationsRemoveMemberParams{UserId: bob.id}), 403, "session_required")

	actions := strings.Join(orgAuditActions(t, env, ada.home), " ")
	for _, a := range []string{"invitation.created", "invitation.accepted", "member.role_changed", "member.removed", "team.created", "team_member.added"} {
		require.Contains(t, actions, a)
	}
}

func TestOrganizationInvitations(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.AppURL = "https://app.example" })
	ctx := context.Background()
	ada := orgSignUp(t, env, "ada@example.com")
	bob := orgSignUp(t, env, "bob@example.com")
	carol := orgJoin(t, env, ada, orgSignUp(t, env, "carol@example.com"), "admin")

	// One invitation per Idempotency-Key, however often it is retried; the token only travels by mail.
	create := func(c *api.Client, email, role, key string) (*api.OrganizationInvitation, error) {
		req := &api.OrganizationInvitationCreate{Email: email}
		if role != "" {
			req.Role = api.NewOptString(role)
		}
		params := api.OrganizationsCreateInvitationParams{}
		if key != "" {
			params.IdempotencyKey = api.NewOptString(key)
		}
		return c.OrganizationsCreateInvitation(ctx, req, params)
	}
	inv, err := create(ada.client, "Bob@Example.com", "", "invite-bob")
	require.NoError(t, err)
	require.Equal(t, "bob@example.com", inv.Email)
	require.Equal(t, api.OrganizationRoleMember, inv.Role, "member unless asked")
	require.Equal(t, api.OrganizationInvitationStatusPending, inv.Status)
	require.Equal(t, ada.id, inv.InvitedBy)
	require.Equal(t, ada.home, inv.OrganizationID)
	require.True(t, inv.CustomRoleID.Null)
	require.True(t, inv.AcceptedAt.Null)
	require.WithinDuration(t, time.Now().Add(7*24*time.Hour), inv.ExpiresAt, time.Minute)
	replay, err := create(ada.client, "Bob@Example.com", "", "invite-bob")
	require.NoError(t, err)
	require.Equal(t, inv.ID, replay.ID)
	mails := env.Mail.To("bob@example.com")
	require.Len(t, mails, 4, "sign-up code, sign-in code, sign-in alert and one invitation")
	token := lastInvitationToken(t, env, "bob@example.com")
	require.Contains(t, mails[3].Text, "https://app.example/invitations/accept?token="+token)
	require.Contains(t, mails[3].Subject, "ada@example.com")

	_, err = create(ada.client, "bob@example.com", "admin", "")
	requireAPIError(t, err, 409, "invitation_pending")
	_, err = create(ada.client, "carol@example.com", "", "")
	requireAPIError(t, err, 409, "already_member")
	require.Equal(t, 400, orgRawStatus(t, env, http.MethodPost, "/v1/organizations/current/invitations", ada.pair.AccessToken, `{"email":"not an address"}`))
	_, err = create(ada.client, "dave@example.com", uuid.NewString(), "")
	requireAPIError(t, err, 400, "unknown_role")
	_, err = create(carol.client, "dave@example.com", "owner", "")
	requireAPIError(t, err, 403, "owner_required")
	_, err = create(bob.client, "dave@example.com", "", "")
	require.NoError(t, err, "bob invites to his own organization")

	// Accepting: the invited address only, once.
	_, err = carol.client.OrganizationsAcceptInvitation(ctx, api.OrganizationsAcceptInvitationParams{Token: token})
	requireAPIError(t, err, 403, "invitation_email_mismatch")
	_, err = bob.client.OrganizationsAcceptInvitation(ctx, api.OrganizationsAcceptInvitationParams{Token: "ofinv_unknown"})
	requireAPIError(t, err, 404, "not_found")
	org, err := bob.client.OrganizationsAcceptInvitation(ctx, api.OrganizationsAcceptInvitationParams{Token: token})
	require.NoError(t, err)
	require.Equal(t, ada.home, org.ID)
	require.Equal(t, api.OrganizationRoleMember, org.Role)
	require.Equal(t, 3, org.MemberCount)
	_, err = bob.client.OrganizationsAcceptInvitation(ctx, api.OrganizationsAcceptInvitationParams{Token: token})
	requireAPIError(t, err, 404, "not_found")
	requireAPIError(t, ada.client.OrganizationsRevokeInvitation(ctx, api.OrganizationsRevokeInvitationParams{ID: inv.ID}), 409, "invitation_accepted")

	// Revoking stops the token at once; revoking again changes nothing.
	erin := orgSignUp(t, env, "erin@example.com")
	revoked, err := create(ada.client, erin.email, "", "")
	require.NoError(t, err)
	erinToken := lastInvitationToken(t, env, erin.email)
	require.NoError(t, carol.client.OrganizationsRevokeInvitation(ctx, api.OrganizationsRevokeInvitationParams{ID: revoked.ID}))
	require.NoError(t, carol.client.OrganizationsRevokeInvitation(ctx, api.OrganizationsRevokeInvitationParams{ID: revoked.ID}))
	requireAPIError(t, carol.client.OrganizationsRevokeInvitation(ctx, api.OrganizationsRevokeInvitationParams{ID: uuid.New()}), 404, "not_found")
	_, err = erin.client.OrganizationsAcceptInvitation(ctx, api.OrganizationsAcceptInvitationParams{Token: erinToken})
	requireAPIError(t, err, 404, "not_found")

	// An expired invitation cannot be accepted, lists as expired and does not block a new one.
	expiring, err := create(ada.client, erin.email, "admin", "")
	require.NoError(t, err)
	expiringToken := lastInvitationToken(t, env, erin.email)
	require.NoError(t, db.WithOrgTx(ctx, env.DB.Pool, ada.home, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE organization_invitations SET expires_at = now() - interval '1 second' WHERE organization_id = $1 AND id = $2`, ada.home, expiring.ID)
		return err
	}))
	_, err = erin.client.OrganizationsAcceptInvitation(ctx, api.OrganizationsAcceptInvitationParams{Token: expiringToken})
	requireAPIError(t, err, 404, "not_found")
	expired, err := ada.client.OrganizationsListInvitations(ctx, api.OrganizationsListInvitationsParams{Status: api.NewOptOrganizationInvitationStatus(api.OrganizationInvitationStatusExpired)})
	require.NoError(t, err)
	require.Len(t, expired.Data, 1)
	require.Equal(t, expiring.ID, expired.Data[0].ID)
	fresh, err := create(ada.client, erin.email, "", "")
	require.NoError(t, err)

	// A member of as many organizations as the account allows cannot join another.
	_, err = env.DB.Pool.Exec(ctx, `UPDATE users SET max_organizations = 1 WHERE id = $1`, erin.id)
	require.NoError(t, err)
	_, err = erin.client.OrganizationsAcceptInvitation(ctx, api.OrganizationsAcceptInvitationParams{Token: lastInvitationToken(t, env, erin.email)})
	requireAPIError(t, err, 403, "max_organizations_reached")
	_, err = env.DB.Pool.Exec(ctx, `UPDATE users SET max_organizations = 10 WHERE id = $1`, erin.id)
	require.NoError(t, err)

	// Someone who became a member meanwhile gets a 409.
	require.NoError(t, db.WithOrgTx(ctx, env.DB.Pool, ada.home, func(ctx context.Context, tx pgx.Tx) error {
		return dbq.New().MembershipCreate(ctx, tx, dbq.MembershipCreateParams{OrganizationID: ada.home, UserID: erin.id, Role: "member"})
	}))
	_, err = erin.client.OrganizationsAcceptInvitation(ctx, api.OrganizationsAcceptInvitationParams{Token: lastInvitationToken(t, env, erin.email)})
	requireAPIError(t, err, 409, "already_member")

	// The list: newest first, filtered by status, page by page.
	all, err := ada.client.OrganizationsListInvitations(ctx, api.OrganizationsListInvitationsParams{})
	require.NoError(t, err)
	require.Len(t, all.Data, 5, "carol's, bob's and three of erin's")
	require.Equal(t, []uuid.UUID{fresh.ID, expiring.ID, revoked.ID, inv.ID}, []uuid.UUID{all.Data[0].ID, all.Data[1].ID, all.Data[2].ID, all.Data[3].ID})
	statuses := map[uuid.UUID]api.OrganizationInvitationStatus{}
	for _, i := range all.Data {
		statuses[i.ID] = i.Status
	}
	require.Equal(t, api.OrganizationInvitationStatusAccepted, statuses[inv.ID])
	require.Equal(t, api.OrganizationInvitationStatusRevoked, statuses[revoked.ID])
	require.Equal(t, api.OrganizationInvitationStatusExpired, statuses[expiring.ID])
	require.Equal(t, api.OrganizationInvitationStatusPending, statuses[fresh.ID])
	pending, err := ada.client.OrganizationsListInvitations(ctx, api.OrganizationsListInvitationsParams{Status: api.NewOptOrganizationInvitationStatus(api.OrganizationInvitationStatusPending)})
	require.NoError(t, err)
	require.Len(t, pending.Data, 1)
	require.Equal(t, fresh.ID, pending.Data[0].ID)
	first, err := ada.client.OrganizationsListInvitations(ctx, api.OrganizationsListInvitationsParams{Limit: api.NewOptInt(3)})
	require.NoError(t, err)
	require.True(t, first.Pagination.HasMore)
	rest, err := ada.client.OrganizationsListInvitations(ctx, api.OrganizationsListInvitationsParams{Limit: api.NewOptInt(3), Cursor: api.NewOptString(first.Pagination.NextCursor.Value)})
	require.NoError(t, err)
	require.Len(t, rest.Data, len(all.Data)-3)
	require.False(t, rest.Pagination.HasMore)

	// Managing invitations needs manage_team and a session.
	bobInAda := bob.switchTo(t, env, ada.home)
	_, err = create(bobInAda.client, "frank@example.com", "", "")
	requireAPIError(t, err, 403, "permission_denied")
	_, err = bobInAda.client.OrganizationsListInvitations(ctx, api.OrganizationsListInvitationsParams{})
	requireAPIError(t, err, 403, "permission_denied")
	requireAPIError(t, bobInAda.client.OrganizationsRevokeInvitation(ctx, api.OrganizationsRevokeInvitationParams{ID: fresh.ID}), 403, "permission_denied")
	key := env.Bootstrap(t, "keys").APIKey
	_, err = create(env.Client(t, key), "frank@example.com", "", "")
	requireAPIError(t, err, 403, "session_required")
	_, err = env.Client(t, key).OrganizationsListInvitations(ctx, api.OrganizationsListInvitationsParams{})
	requireAPIError(t, err, 403, "session_required")
	requireAPIError(t, env.Client(t, key).OrganizationsRevokeInvitation(ctx, api.OrganizationsRevokeInvitationParams{ID: fresh.ID}), 403, "session_required")
	_, err = env.Client(t, key).OrganizationsAcceptInvitation(ctx, api.OrganizationsAcceptInvitationParams{Token: "ofinv_x"})
	requireAPIError(t, err, 403, "session_required")

	actions := strings.Join(orgAuditActions(t, env, ada.home), " ")
	for _, a := range []string{"invitation.created", "invitation.accepted", "invitation.revoked"} {
		require.Contains(t, actions, a)
	}
}
