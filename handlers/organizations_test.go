package handlers_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// orgPerson is one signed-up person of an organization test, acting in the organization their session selects.
type orgPerson struct {
	email  string
	pair   *api.TokenPair
	client *api.Client
	id     uuid.UUID
	// home is the organization created with the account.
	home uuid.UUID
}

func orgSignUp(t *testing.T, env *apitest.Env, email string) orgPerson {
	t.Helper()
	pair := env.SignUp(t, email)
	client := env.Client(t, pair.AccessToken)
	me, err := client.AuthGetMe(context.Background())
	require.NoError(t, err)
	cur, err := client.OrganizationsGetCurrent(context.Background())
	require.NoError(t, err)
	return orgPerson{email: email, pair: pair, client: client, id: me.ID, home: cur.ID}
}

// switchTo selects org for p's session and returns p acting there.
func (p orgPerson) switchTo(t *testing.T, env *apitest.Env, org uuid.UUID) orgPerson {
	t.Helper()
	pair, err := p.client.OrganizationsSwitch(context.Background(), &api.OrganizationSwitchRequest{OrganizationID: org}, api.OrganizationsSwitchParams{})
	require.NoError(t, err)
	p.pair, p.client = pair, env.Client(t, pair.AccessToken)
	return p
}

var invitationTokenRe = regexp.MustCompile(`ofinv_[A-Za-z0-9_-]+`)

// lastInvitationToken returns the token of the newest invitation mailed to address.
func lastInvitationToken(t *testing.T, env *apitest.Env, address string) string {
	t.Helper()
	msgs := env.Mail.To(address)
	for i := len(msgs) - 1; i >= 0; i-- {
		if tok := invitationTokenRe.FindString(msgs[i].Text); tok != "" {
			return tok
		}
	}
	t.Fatalf("no invitation mailed to %s", address)
	return ""
}

// orgJoin has inviter invite invitee with role and invitee accept, then switches invitee into the organization.
func orgJoin(t *testing.T, env *apitest.Env, inviter, invitee orgPerson, role string) orgPerson {
	t.Helper()
	ctx := context.Background()
	_, err := inviter.client.OrganizationsCreateInvitation(ctx, &api.OrganizationInvitationCreate{Email: invitee.email, Role: api.NewOptString(role)},
		api.OrganizationsCreateInvitationParams{})
	require.NoError(t, err)
	org, err := invitee.client.OrganizationsAcceptInvitation(ctx, api.OrganizationsAcceptInvitationParams{Token: lastInvitationToken(t, env, invitee.email)})
	require.NoError(t, err)
	return invitee.switchTo(t, env, org.ID)
}

// orgAuditActions lists the audit log actions of org, oldest first.
func orgAuditActions(t *testing.T, env *apitest.Env, org uuid.UUID) []string {
	t.Helper()
	var out []string
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT event FROM audit_log WHERE organization_id = $1 ORDER BY created_at, id`, org)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	return out
}

// scopedKey issues a fresh API key of org holding only perms, limited to mailboxes when any are given. Each
// call makes its own key, so per-key rate limits never couple the tests that use them.
func scopedKey(t *testing.T, env *apitest.Env, org uuid.UUID, perms auth.Permission, mailboxes ...uuid.UUID) string {
	t.Helper()
	key := auth.MintAPIKey()
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := dbq.New().APIKeyCreate(ctx, tx, dbq.APIKeyCreateParams{OrganizationID: org, ID: uuid.New(), Name: "scoped",
			KeyHash: key.Hash, KeyPrefix: key.Prefix, KeySuffix: key.Suffix, Permissions: int64(perms),
			AllowedEmailAccounts: mailboxes})
		return err
	}))
	return key.Secret
}

// orgRawStatus sends a request the SDK would refuse to build (it validates before sending) and returns the
// answer's status.
func orgRawStatus(t *testing.T, env *apitest.Env, method, path, token, body string) int {
	t.Helper()
	return env.Do(t, method, path, token, strings.NewReader(body), http.Header{"Content-Type": {"application/json"}}).StatusCode
}

func permissionNames(ps []api.OrganizationPermission) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

func TestOrganizationCurrentAndList(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := orgSignUp(t, env, "ada@example.com")

	cur, err := ada.client.OrganizationsGetCurrent(ctx)
	require.NoError(t, err)
	require.Equal(t, api.OrganizationRoleOwner, cur.Role)
	require.True(t, cur.CustomRoleID.Null)
	require.True(t, cur.Current)
	require.Equal(t, 1, cur.MemberCount)
	require.Len(t, cur.Permissions, len(auth.OrgPermissionNames), "owners hold every permission")

	renamed, err := ada.client.OrganizationsUpdateCurrent(ctx, &api.OrganizationUpdate{Name: api.NewOptString("  Acme  ")}, api.OrganizationsUpdateCurrentParams{})
	require.NoError(t, err)
	require.Equal(t, "Acme", renamed.Name)
	require.True(t, renamed.UpdatedAt.After(cur.UpdatedAt) || renamed.UpdatedAt.Equal(cur.UpdatedAt))
	_, err = ada.client.OrganizationsUpdateCurrent(ctx, &api.OrganizationUpdate{Name: api.NewOptString("   ")}, api.OrganizationsUpdateCurrentParams{})
	requireAPIError(t, err, 400, "invalid_name")
	same, err := ada.client.OrganizationsUpdateCurrent(ctx, &api.OrganizationUpdate{}, api.OrganizationsUpdateCurrentParams{})
	require.NoError(t, err, "only the fields sent change")
	require.Equal(t, "Acme", same.Name)
	require.Equal(t, []string{"organization.updated"}, orgAuditActions(t, env, ada.home), "one entry per change")

	// A member without manage_settings cannot rename it.
	bob := orgJoin(t, env, ada, orgSignUp(t, env, "bob@example.com"), "member")
	_, err = bob.client.OrganizationsUpdateCurrent(ctx, &api.OrganizationUpdate{Name: api.NewOptString("Bob's")}, api.OrganizationsUpdateCurrentParams{})
	requireAPIError(t, err, 403, "permission_denied")
	bobCur, err := bob.client.OrganizationsGetCurrent(ctx)
	require.NoError(t, err, "any member reads it")
	require.Equal(t, api.OrganizationRoleMember, bobCur.Role)
	require.NotContains(t, permissionNames(bobCur.Permissions), "manage_team")
	require.Equal(t, 2, bobCur.MemberCount)

	// Bob's organizations: his own first (oldest membership), then Acme, which his session selects.
	list, err := bob.client.OrganizationsList(ctx, api.OrganizationsListParams{})
	require.NoError(t, err)
	require.Len(t, list.Data, 2)
	require.False(t, list.Pagination.HasMore)
	require.Equal(t, bob.home, list.Data[0].ID)
	require.Equal(t, api.OrganizationRoleOwner, list.Data[0].Role)
	require.False(t, list.Data[0].Current)
	require.Equal(t, ada.home, list.Data[1].ID)
	require.Equal(t, api.OrganizationRoleMember, list.Data[1].Role)
	require.True(t, list.Data[1].Current)
	require.Equal(t, 2, list.Data[1].MemberCount)

	first, err := bob.client.OrganizationsList(ctx, api.OrganizationsListParams{Limit: api.NewOptInt(1)})
	require.NoError(t, err)
	require.Len(t, first.Data, 1)
	require.True(t, first.Pagination.HasMore)
	second, err := bob.client.OrganizationsList(ctx, api.OrganizationsListParams{Limit: api.NewOptInt(1), Cursor: api.NewOptString(first.Pagination.NextCursor.Value)})
	require.NoError(t, err)
	require.Len(t, second.Data, 1)
	require.Equal(t, ada.home, second.Data[0].ID)
	require.False(t, second.Pagination.HasMore)
	require.True(t, second.Pagination.NextCursor.Null)
	_, err = bob.client.OrganizationsList(ctx, api.OrganizationsListParams{Cursor: api.NewOptString("forged")})
	requireAPIError(t, err, 400, "invalid_cursor")
	require.Equal(t, 400, orgRawStatus(t, env, http.MethodGet, "/v1/organizations?limit=0", bob.pair.AccessToken, ""))

	// Session only.
	key := env.Bootstrap(t, "keys").APIKey
	_, err = env.Client(t, key).OrganizationsGetCurrent(ctx)
	requireAPIError(t, err, 403, "session_required")
	_, err = env.Client(t, key).OrganizationsList(ctx, api.OrganizationsListParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = env.Client(t, key).OrganizationsUpdateCurrent(ctx, &api.OrganizationUpdate{}, api.OrganizationsUpdateCurrentParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = env.Client(t, "").OrganizationsGetCurrent(ctx)
	requireAPIError(t, err, 401, "missing_credential")
}

func TestOrganizationSwitch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := orgSignUp(t, env, "ada@example.com")
	bob := orgSignUp(t, env, "bob@example.com")
	carol := orgSignUp(t, env, "carol@example.com")
	_, err := ada.client.OrganizationsCreateInvitation(ctx, &api.OrganizationInvitationCreate{Email: bob.email, Role: api.NewOptString("admin")},
		api.OrganizationsCreateInvitationParams{})
	require.NoError(t, err)
	joined, err := bob.client.OrganizationsAcceptInvitation(ctx, api.OrganizationsAcceptInvitationParams{Token: lastInvitationToken(t, env, bob.email)})
	require.NoError(t, err)
	require.Equal(t, ada.home, joined.ID)
	require.False(t, joined.Current, "accepting does not change the session's selection")

	pair, err := bob.client.OrganizationsSwitch(ctx, &api.OrganizationSwitchRequest{OrganizationID: ada.home}, api.OrganizationsSwitchParams{})
	require.NoError(t, err)
	cur, err := env.Client(t, pair.AccessToken).OrganizationsGetCurrent(ctx)
	require.NoError(t, err)
	require.Equal(t, ada.home, cur.ID)
	require.Equal(t, api.OrganizationRoleAdmin, cur.Role)
	require.Contains(t, permissionNames(cur.Permissions), "manage_team")

	// The new refresh token keeps the organization.
	public := env.Client(t, "")
	next, err := public.AuthRefresh(ctx, &api.RefreshRequest{RefreshToken: pair.RefreshToken})
	require.NoError(t, err)
	cur, err = env.Client(t, next.AccessToken).OrganizationsGetCurrent(ctx)
	require.NoError(t, err)
	require.Equal(t, ada.home, cur.ID)

	// Not a member, or no such organization: 404.
	_, err = bob.client.OrganizationsSwitch(ctx, &api.OrganizationSwitchRequest{OrganizationID: carol.home}, api.OrganizationsSwitchParams{})
	requireAPIError(t, err, 404, "not_found")
	_, err = bob.client.OrganizationsSwitch(ctx, &api.OrganizationSwitchRequest{OrganizationID: uuid.New()}, api.OrganizationsSwitchParams{})
	requireAPIError(t, err, 404, "not_found")
	key := env.Bootstrap(t, "keys").APIKey
	_, err = env.Client(t, key).OrganizationsSwitch(ctx, &api.OrganizationSwitchRequest{OrganizationID: ada.home}, api.OrganizationsSwitchParams{})
	requireAPIError(t, err, 403, "session_required")

	// The next sign-in starts in the organization switched to last.
	again := env.SignIn(t, bob.email, apitest.Password)
	cur, err = env.Client(t, again.AccessToken).OrganizationsGetCurrent(ctx)
	require.NoError(t, err)
	require.Equal(t, ada.home, cur.ID)

	// The refresh token from before the switch was rotated by it: presenting it is reuse and ends the session.
	_, err = public.AuthRefresh(ctx, &api.RefreshRequest{RefreshToken: bob.pair.RefreshToken})
	requireAPIError(t, err, 401, "refresh_token_reused")
	_, err = env.Client(t, next.AccessToken).OrganizationsGetCurrent(ctx)
	requireAPIError(t, err, 401, "invalid_credential")
}

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

// TestOrganizationForeignIDsAre404 checks a member of another organization, with every permission there, can
// neither see nor change anything of this one.
func TestOrganizationForeignIDsAre404(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := orgSignUp(t, env, "ada@example.com")
	role, err := ada.client.OrganizationsCreateRole(ctx, &api.CustomRoleCreate{Name: "Private", Permissions: []api.OrganizationPermission{}}, api.OrganizationsCreateRoleParams{})
	require.NoError(t, err)
	team, err := ada.client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Private"}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)
	_, err = ada.client.OrganizationsAddTeamMember(ctx, &api.TeamAddMember{UserID: ada.id}, api.OrganizationsAddTeamMemberParams{ID: team.ID})
	require.NoError(t, err)
	inv, err := ada.client.OrganizationsCreateInvitation(ctx, &api.OrganizationInvitationCreate{Email: "bob@example.com"}, api.OrganizationsCreateInvitationParams{})
	require.NoError(t, err)

	mallory := orgSignUp(t, env, "mallory@example.com")
	m := mallory.client
	notFound := func(err error) { t.Helper(); requireAPIError(t, err, 404, "not_found") }
	_, err = m.OrganizationsGetRole(ctx, api.OrganizationsGetRoleParams{ID: role.ID})
	notFound(err)
	_, err = m.OrganizationsUpdateRole(ctx, &api.CustomRoleUpdate{Name: api.NewOptString("Mine")}, api.OrganizationsUpdateRoleParams{ID: role.ID})
	notFound(err)
	notFound(m.OrganizationsDeleteRole(ctx, api.OrganizationsDeleteRoleParams{ID: role.ID}))
	_, err = m.OrganizationsGetTeam(ctx, api.OrganizationsGetTeamParams{ID: team.ID})
	notFound(err)
	_, err = m.OrganizationsUpdateTeam(ctx, &api.TeamUpdate{Name: api.NewOptString("Mine")}, api.OrganizationsUpdateTeamParams{ID: team.ID})
	notFound(err)
	notFound(m.OrganizationsDeleteTeam(ctx, api.OrganizationsDeleteTeamParams{ID: team.ID}))
	_, err = m.OrganizationsAddTeamMember(ctx, &api.TeamAddMember{UserID: mallory.id}, api.OrganizationsAddTeamMemberParams{ID: team.ID})
	notFound(err)
	notFound(m.OrganizationsRemoveTeamMember(ctx, api.OrganizationsRemoveTeamMemberParams{ID: team.ID, UserId: ada.id}))
	notFound(m.OrganizationsRevokeInvitation(ctx, api.OrganizationsRevokeInvitationParams{ID: inv.ID}))
	_, err = m.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "member"}, api.OrganizationsUpdateMemberParams{UserId: ada.id})
	notFound(err)
	notFound(m.OrganizationsRemoveMember(ctx, api.OrganizationsRemoveMemberParams{UserId: ada.id}))
	_, err = m.OrganizationsSwitch(ctx, &api.OrganizationSwitchRequest{OrganizationID: ada.home}, api.OrganizationsSwitchParams{})
	notFound(err)
	_, err = m.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: role.ID.String()}, api.OrganizationsUpdateMemberParams{UserId: mallory.id})
	requireAPIError(t, err, 400, "unknown_role")
	_, err = m.OrganizationsCreateInvitation(ctx, &api.OrganizationInvitationCreate{Email: "eve@example.com", Role: api.NewOptString(role.ID.String())},
		api.OrganizationsCreateInvitationParams{})
	requireAPIError(t, err, 400, "unknown_role")
	key := env.Client(t, scopedKey(t, env, mallory.home, auth.FullAccess))
	_, err = key.OrganizationsGetTeam(ctx, api.OrganizationsGetTeamParams{ID: team.ID})
	notFound(err)
	notFound(key.OrganizationsDeleteTeam(ctx, api.OrganizationsDeleteTeamParams{ID: team.ID}))

	// Her own lists do not show any of it, and selecting the organization by header is refused.
	roles, err := m.OrganizationsListRoles(ctx, api.OrganizationsListRolesParams{})
	require.NoError(t, err)
	require.Empty(t, roles.Data)
	teams, err := m.OrganizationsListTeams(ctx)
	require.NoError(t, err)
	require.Empty(t, teams.Data)
	invs, err := m.OrganizationsListInvitations(ctx, api.OrganizationsListInvitationsParams{})
	require.NoError(t, err)
	require.Empty(t, invs.Data)
	resp := env.Do(t, http.MethodGet, "/v1/organizations/current/members", mallory.pair.AccessToken, nil, http.Header{"X-Organization-Id": {ada.home.String()}})
	require.Equal(t, 403, resp.StatusCode)

	// Nothing of Ada's changed.
	got, err := ada.client.OrganizationsGetTeam(ctx, api.OrganizationsGetTeamParams{ID: team.ID})
	require.NoError(t, err)
	require.Equal(t, "Private", got.Name)
	require.Len(t, got.Members, 1)
	pending, err := ada.client.OrganizationsListInvitations(ctx, api.OrganizationsListInvitationsParams{})
	require.NoError(t, err)
	require.Equal(t, api.OrganizationInvitationStatusPending, pending.Data[0].Status)
}

// orgEventTypes lists the outbox event types of org, oldest first.
func orgEventTypes(t *testing.T, env *apitest.Env, org uuid.UUID) []string {
	t.Helper()
	var out []string
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT event_type FROM event_outbox WHERE organization_id = $1 ORDER BY id`, org)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	return out
}

// TestOrganizationChangesRaiseEvents: invitations, removals, custom roles and renames raise the team, role and
// settings events of the catalog in the same transaction as the change.
func TestOrganizationChangesRaiseEvents(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := orgSignUp(t, env, "ada@example.com")
	bob := orgJoin(t, env, ada, orgSignUp(t, env, "bob@example.com"), "member")
	role, err := ada.client.OrganizationsCreateRole(ctx, &api.CustomRoleCreate{Name: "Readers",
		Permissions: []api.OrganizationPermission{api.OrganizationPermissionViewContacts}}, api.OrganizationsCreateRoleParams{})
	require.NoError(t, err)
	_, err = ada.client.OrganizationsUpdateRole(ctx, &api.CustomRoleUpdate{Name: api.NewOptString("Viewers")}, api.OrganizationsUpdateRoleParams{ID: role.ID})
	require.NoError(t, err)
	require.NoError(t, ada.client.OrganizationsDeleteRole(ctx, api.OrganizationsDeleteRoleParams{ID: role.ID}))
	_, err = ada.client.OrganizationsUpdateCurrent(ctx, &api.OrganizationUpdate{Name: api.NewOptString("Ada & Co")}, api.OrganizationsUpdateCurrentParams{})
	require.NoError(t, err)
	require.NoError(t, ada.client.OrganizationsRemoveMember(ctx, api.OrganizationsRemoveMemberParams{UserId: bob.id}))
	// A refused change raises nothing.
	_, err = ada.client.OrganizationsUpdateRole(ctx, &api.CustomRoleUpdate{Name: api.NewOptString("x")}, api.OrganizationsUpdateRoleParams{ID: uuid.New()})
	require.Error(t, err)
	require.Equal(t, []string{"team.member_invited", "role.created", "role.updated", "role.deleted", "settings.updated", "team.member_removed"},
		orgEventTypes(t, env, ada.home))

	// A worker process dispatches them.
	env.StartWorkers(t)
	owner := env.DB.OwnerPool(t)
	require.Eventually(t, func() bool {
		var pending int
		_ = owner.QueryRow(ctx, `SELECT count(*) FROM event_outbox WHERE dispatched_at IS NULL`).Scan(&pending)
		return pending == 0
	}, 15*time.Second, 50*time.Millisecond)
}
