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
