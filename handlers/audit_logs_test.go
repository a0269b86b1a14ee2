package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

// auditOwnerCount counts org's audit entries as the schema owner sees them: what really is in the table.
func auditOwnerCount(t *testing.T, env *apitest.Env, org uuid.UUID) int {
	t.Helper()
	var n int
	require.NoError(t, env.DB.OwnerPool(t).QueryRow(context.Background(),
		"SELECT count(*) FROM audit_log WHERE organization_id = $1", org).Scan(&n))
	return n
}

// auditInsert writes an entry dated at through the application role, as audit.Record would have at that time.
func auditInsert(t *testing.T, env *apitest.Env, org uuid.UUID, action, event, targetType, targetID string, at time.Time) uuid.UUID {
	t.Helper()
	id := uuid.New()
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO audit_log (organization_id, id, actor_type, action, event, target_type, target_id, created_at)
			VALUES ($1, $2, 'system', $3, $4, $5, $6, $7)`, org, id, action, event, targetType, targetID, at)
		return err
	}))
	return id
}

// auditActions lists the precise happening of each entry (metadata.event, "team.created"), in list order.
func auditActions(list *api.AuditLogList) []string {
	out := []string{}
	for _, e := range list.Data {
		out = append(out, auditEvent(e))
	}
	return out
}

// auditEvent is an entry's metadata.event; "" when it has none.
func auditEvent(e api.AuditLog) string {
	var s string
	if raw, ok := e.Metadata.Value["event"]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// auditRawStatus sends GET /v1/audit-logs with query q, which the SDK would refuse to build, and returns the
// status and error code.
func auditRawStatus(t *testing.T, env *apitest.Env, token string, q url.Values) (int, string) {
	t.Helper()
	resp := env.Do(t, http.MethodGet, "/v1/audit-logs?"+q.Encode(), token, nil, nil)
	var body struct {
		Code string `json:"code"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body.Code
}

func TestAuditLogFiltersAndPages(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	client := env.Client(t, boot.APIKey)

	// Bootstrap recorded organization.created and api_key.created; the key now creates teams and changes them.
	var teams []uuid.UUID
	for _, name := range []string{"Sales", "Support", "Success"} {
		team, err := client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: name}, api.OrganizationsCreateTeamParams{})
		require.NoError(t, err)
		teams = append(teams, team.ID)
	}
	_, err := client.OrganizationsUpdateTeam(ctx, &api.TeamUpdate{Name: api.NewOptString("Sales EMEA")}, api.OrganizationsUpdateTeamParams{ID: teams[0]})
	require.NoError(t, err)
	require.NoError(t, client.OrganizationsDeleteTeam(ctx, api.OrganizationsDeleteTeamParams{ID: teams[2]}))
	// Older history, on two known days.
	day1 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	day2 := time.Date(2025, 3, 2, 23, 30, 0, 0, time.UTC)
	oldA := auditInsert(t, env, org, audit.ActionCreate, "webhook.created", "webhook", uuid.NewString(), day1)
	oldB := auditInsert(t, env, org, audit.ActionDelete, "webhook.deleted", "webhook", uuid.NewString(), day2)

	all, err := client.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{})
	require.NoError(t, err)
	require.Equal(t, []string{"team.deleted", "team.updated", "team.created", "team.created", "team.created",
		"api_key.created", "organization.created", "webhook.deleted", "webhook.created"}, auditActions(all), "newest first")
	require.False(t, all.Pagination.HasMore)
	require.True(t, all.Pagination.NextCursor.Null)

	updated := all.Data[1]
	require.Equal(t, org, updated.OrgID)
	require.Equal(t, "update", updated.Action, "the action is part 3's verb; the precise event is in metadata")
	require.Equal(t, "team", updated.EntityType)
	require.Equal(t, api.NewOptUUID(teams[0]), updated.EntityID)
	require.Equal(t, updated.ActionDate, updated.Timestamp.Value)
	require.JSONEq(t, `"Sales EMEA"`, string(updated.Changes.Value["name"]))
	require.JSONEq(t, `"api_key"`, string(updated.Metadata.Value["actor_type"]))
	require.NotEmpty(t, updated.Metadata.Value["request_id"])
	require.Equal(t, "127.0.0.1", updated.IPAddress.Value)
	require.Equal(t, boot.UserID, updated.UserID.Value, "a key's entries are attributed to its owner")
	require.Equal(t, boot.UserID, updated.Actor.Value.ID.Value)
	require.Equal(t, "owner@acme.example", updated.Actor.Value.Email.Value)
	system := all.Data[len(all.Data)-1]
	require.True(t, system.UserID.Null, "nobody acted for a system entry")
	require.True(t, system.Actor.Null)

	list := func(p api.AnalyticsAuditLogsListParams) []string {
		t.Helper()
		l, err := client.AnalyticsAuditLogsList(ctx, p)
		require.NoError(t, err)
		return auditActions(l)
	}
	require.Equal(t, []string{"team.deleted", "team.updated", "team.created", "team.created", "team.created"},
		list(api.AnalyticsAuditLogsListParams{EntityType: api.NewOptString("team")}))
	require.Equal(t, []string{"team.updated", "team.created"}, list(api.AnalyticsAuditLogsListParams{EntityID: api.NewOptUUID(teams[0])}))
	require.Equal(t, []string{"team.created", "team.created", "team.created", "api_key.created", "organization.created", "webhook.created"},
		list(api.AnalyticsAuditLogsListParams{Action: api.NewOptString("create")}), "a verb matches every entry of that verb")
	require.Equal(t, []string{"team.deleted", "webhook.deleted"}, list(api.AnalyticsAuditLogsListParams{Action: api.NewOptString("delete")}))
	require.Equal(t, []string{"team.deleted"}, list(api.AnalyticsAuditLogsListParams{Action: api.NewOptString("team.deleted")}), "a full action matches itself")
	require.Equal(t, []string{"team.created", "team.created", "team.created"},
		list(api.AnalyticsAuditLogsListParams{Action: api.NewOptString("create"), EntityType: api.NewOptString("team")}), "filters combine")
	keyActions := list(api.AnalyticsAuditLogsListParams{ActorID: api.NewOptUUID(boot.UserID)})
	require.Len(t, keyActions, 5, "the owner's key made the team changes; bootstrap itself was the system")
	require.Equal(t, []string{"webhook.created"}, list(api.AnalyticsAuditLogsListParams{Date: api.NewOptDate(day1)}))
	require.Equal(t, []string{"webhook.deleted", "webhook.created"}, list(api.AnalyticsAuditLogsListParams{
		StartDate: api.NewOptString("2025-03-01"), EndDate: api.NewOptString("2025-03-02")}), "end_date includes its whole day")
	require.Equal(t, []string{"webhook.created"}, list(api.AnalyticsAuditLogsListParams{
		Date: api.NewOptDate(day2), StartDate: api.NewOptString("2025-02-01T00:00:00Z"), EndDate: api.NewOptString(day1.Format(time.RFC3339))}),
		"start_date and end_date override date; an RFC 3339 end is inclusive")
	require.Len(t, list(api.AnalyticsAuditLogsListParams{StartDate: api.NewOptString("2025-03-02T00:00:00Z")}), 8)
	require.Empty(t, list(api.AnalyticsAuditLogsListParams{ActorID: api.NewOptUUID(uuid.New())}))

	// Pages of 10 over 12 entries (three more teams), cursor = the last entry's id.
	for _, name := range []string{"A", "B", "C"} {
		_, err := client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: name}, api.OrganizationsCreateTeamParams{})
		require.NoError(t, err)
	}
	first, err := client.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{Limit: api.NewOptInt(10)})
	require.NoError(t, err)
	require.Len(t, first.Data, 10)
	require.True(t, first.Pagination.HasMore)
	require.Equal(t, first.Data[9].ID.String(), first.Pagination.NextCursor.Value)
	cursor, err := uuid.Parse(first.Pagination.NextCursor.Value)
	require.NoError(t, err)
	second, err := client.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{Limit: api.NewOptInt(10), Cursor: api.NewOptUUID(cursor)})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{oldB, oldA}, []uuid.UUID{second.Data[0].ID, second.Data[1].ID})
	require.False(t, second.Pagination.HasMore)
	require.True(t, second.Pagination.NextCursor.Null)
	filtered, err := client.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{Limit: api.NewOptInt(10), Cursor: api.NewOptUUID(first.Data[2].ID),
		EntityType: api.NewOptString("team")})
	require.NoError(t, err)
	require.Len(t, filtered.Data, 5, "a cursor combines with filters: the team entries after the third newest")

	// Out-of-range limits, malformed cursors and dates are refused.
	for _, tc := range []struct {
		query url.Values
		code  string
	}{
		{url.Values{"limit": {"9"}}, "invalid_parameter"},
		{url.Values{"limit": {"201"}}, "invalid_parameter"},
		{url.Values{"cursor": {"not-a-uuid"}}, "invalid_parameter"},
		{url.Values{"cursor": {uuid.NewString()}}, "invalid_cursor"},
		{url.Values{"date": {"yesterday"}}, "invalid_parameter"},
		{url.Values{"start_date": {"March 1"}}, "invalid_date"},
		{url.Values{"start_date": {"2025-03-02"}, "end_date": {"2025-03-01"}}, "invalid_date_range"},
	} {
		status, code := auditRawStatus(t, env, boot.APIKey, tc.query)
		require.Equal(t, http.StatusBadRequest, status, tc.query.Encode())
		require.Equal(t, tc.code, code, tc.query.Encode())
	}
	for _, limit := range []int{10, 200} {
		_, err := client.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{Limit: api.NewOptInt(limit)})
		require.NoError(t, err, "limit %d is in range", limit)
	}
}

func TestAuditLogActorNullOnceTheUserIsDeleted(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := orgSignUp(t, env, "ada@example.com")
	bob := orgJoin(t, env, ada, orgSignUp(t, env, "bob@example.com"), "admin")
	require.NoError(t, ada.client.AuthUpdateMe(ctx, &api.UpdateProfileRequest{FirstName: "Ada", LastName: "Lovelace"}, api.AuthUpdateMeParams{}))

	_, err := ada.client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Ada's"}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)
	_, err = bob.client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Bob's"}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)

	byActor := func() map[string]api.AuditLog {
		t.Helper()
		l, err := ada.client.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{Action: api.NewOptString("team.created")})
		require.NoError(t, err)
		out := map[string]api.AuditLog{}
		for _, e := range l.Data {
			var name string
			require.NoError(t, json.Unmarshal(e.Changes.Value["name"], &name))
			out[name] = e
		}
		return out
	}
	entries := byActor()
	require.Equal(t, api.AuditActor{ID: api.NewOptUUID(ada.id), FirstName: api.NewOptString("Ada"), LastName: api.NewOptString("Lovelace"),
		Email: api.NewOptString("ada@example.com")}, entries["Ada's"].Actor.Value)
	require.Equal(t, ada.id, entries["Ada's"].UserID.Value)
	require.JSONEq(t, `"user"`, string(entries["Ada's"].Metadata.Value["actor_type"]))
	require.Equal(t, bob.id, entries["Bob's"].Actor.Value.ID.Value)
	bobs, err := ada.client.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{ActorID: api.NewOptUUID(bob.id)})
	require.NoError(t, err)
	require.Equal(t, []string{"team.created", "invitation.accepted"}, auditActions(bobs))

	// Bob's account goes; his entries stay, attributed to his id, without an actor.
	_, err = env.DB.OwnerPool(t).Exec(ctx, "DELETE FROM users WHERE id = $1", bob.id)
	require.NoError(t, err)
	entries = byActor()
	require.True(t, entries["Bob's"].Actor.Null)
	require.Equal(t, bob.id, entries["Bob's"].UserID.Value)
	require.Equal(t, ada.id, entries["Ada's"].Actor.Value.ID.Value)
}

func TestAuditLogIsolatedPerOrganization(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	acme := env.Bootstrap(t, "acme")
	globex := env.Bootstrap(t, "globex")
	acmeClient, globexClient := env.Client(t, acme.APIKey), env.Client(t, globex.APIKey)
	team, err := acmeClient.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Sales"}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)

	acmeLog, err := acmeClient.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{})
	require.NoError(t, err)
	globexLog, err := globexClient.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{})
	require.NoError(t, err)
	require.Len(t, acmeLog.Data, 3)
	require.Len(t, globexLog.Data, 2)
	for _, e := range globexLog.Data {
		require.Equal(t, globex.OrganizationID, e.OrgID)
	}
	empty, err := globexClient.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{EntityID: api.NewOptUUID(team.ID)})
	require.NoError(t, err)
	require.Empty(t, empty.Data, "another organization's resource matches nothing")
	_, err = globexClient.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{Cursor: api.NewOptUUID(acmeLog.Data[0].ID)})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_cursor")

	// READ_AUDIT_LOGS for keys, view_analytics for sessions.
	_, err = env.Client(t, scopedKey(t, env, acme.OrganizationID, auth.FullAccess&^auth.ReadAuditLogs)).
		AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{})
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")
	reader, err := env.Client(t, scopedKey(t, env, acme.OrganizationID, auth.ReadAuditLogs)).AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{})
	require.NoError(t, err)
	require.Len(t, reader.Data, 3)
	_, err = env.Client(t, "").AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{})
	requireAPIError(t, err, http.StatusUnauthorized, "missing_credential")
}

func TestAuditLogIsAppendOnlyForTheApplication(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	boot := env.Bootstrap(t, "acme")
	org := boot.OrganizationID
	require.Equal(t, 2, auditOwnerCount(t, env, org))

	// The application pool runs as outflow_app: it may read and add entries, never change or remove them.
	for _, stmt := range []string{
		"UPDATE audit_log SET event = 'nothing.happened' WHERE organization_id = $1",
		"DELETE FROM audit_log WHERE organization_id = $1",
		"TRUNCATE audit_log",
	} {
		err := db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
			var role string
			require.NoError(t, tx.QueryRow(ctx, "SELECT current_user").Scan(&role))
			require.Equal(t, db.AppRole, role)
			args := []any{org}
			if stmt == "TRUNCATE audit_log" {
				args = nil
			}
			_, err := tx.Exec(ctx, stmt, args...)
			return err
		})
		var pgErr *pgconn.PgError
		require.ErrorAs(t, err, &pgErr, stmt)
		require.Equal(t, "42501", pgErr.Code, "%s: insufficient privilege expected", stmt)
	}
	var canInsert, canSelect, canUpdate, canDelete bool
	require.NoError(t, env.DB.Pool.QueryRow(ctx, `SELECT has_table_privilege('audit_log', 'INSERT'), has_table_privilege('audit_log', 'SELECT'),
		has_table_privilege('audit_log', 'UPDATE'), has_table_privilege('audit_log', 'DELETE')`).Scan(&canInsert, &canSelect, &canUpdate, &canDelete))
	require.Equal(t, []bool{true, true, false, false}, []bool{canInsert, canSelect, canUpdate, canDelete})
	require.Equal(t, 2, auditOwnerCount(t, env, org))

	// Deleting the organization still takes its entries with it: the cascade runs as the table's owner.
	other := env.Bootstrap(t, "globex")
	require.NoError(t, db.WithOrgTx(ctx, env.DB.Pool, org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM organizations WHERE id = $1", org)
		return err
	}))
	require.Zero(t, auditOwnerCount(t, env, org))
	require.Equal(t, 2, auditOwnerCount(t, env, other.OrganizationID))
}

// TestEveryMutationWritesOneAuditEntry runs a representative mutation of every handler area that records
// audit entries and checks each adds exactly one, with its action; a refused mutation adds none, because the
// entry is written in the mutation's own transaction.
func TestEveryMutationWritesOneAuditEntry(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := orgSignUp(t, env, "ada@example.com")
	bob := orgJoin(t, env, ada, orgSignUp(t, env, "bob@example.com"), "member")
	carol := orgSignUp(t, env, "carol@example.com")
	org := ada.home

	var (
		teamID, roleID, inviteID, keyID uuid.UUID
		inviteToken                     string
	)
	steps := []struct {
		action string
		// prepare sets the step up; what it writes is not counted.
		prepare func() error
		run     func() error
	}{
		// handlers/organizations.go
		{action: "organization.updated", run: func() error {
			_, err := ada.client.OrganizationsUpdateCurrent(ctx, &api.OrganizationUpdate{Name: api.NewOptString("Acme")}, api.OrganizationsUpdateCurrentParams{})
			return err
		}},
		{action: "team.created", run: func() error {
			team, err := ada.client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Sales"}, api.OrganizationsCreateTeamParams{})
			if err == nil {
				teamID = team.ID
			}
			return err
		}},
		{action: "team.updated", run: func() error {
			_, err := ada.client.OrganizationsUpdateTeam(ctx, &api.TeamUpdate{Color: api.NewOptString("#112233")}, api.OrganizationsUpdateTeamParams{ID: teamID})
			return err
		}},
		{action: "team_member.added", run: func() error {
			_, err := ada.client.OrganizationsAddTeamMember(ctx, &api.TeamAddMember{UserID: bob.id}, api.OrganizationsAddTeamMemberParams{ID: teamID})
			return err
		}},
		{action: "team_member.removed", run: func() error {
			return ada.client.OrganizationsRemoveTeamMember(ctx, api.OrganizationsRemoveTeamMemberParams{ID: teamID, UserId: bob.id})
		}},
		{action: "team.deleted", run: func() error {
			return ada.client.OrganizationsDeleteTeam(ctx, api.OrganizationsDeleteTeamParams{ID: teamID})
		}},
		{action: "role.created", run: func() error {
			role, err := ada.client.OrganizationsCreateRole(ctx, &api.CustomRoleCreate{Name: "Recruiter",
				Permissions: []api.OrganizationPermission{api.OrganizationPermissionViewContacts}}, api.OrganizationsCreateRoleParams{})
			if err == nil {
				roleID = role.ID
			}
			return err
		}},
		{action: "role.updated", run: func() error {
			_, err := ada.client.OrganizationsUpdateRole(ctx, &api.CustomRoleUpdate{Name: api.NewOptString("Talent")}, api.OrganizationsUpdateRoleParams{ID: roleID})
			return err
		}},
		{action: "role.deleted", run: func() error {
			return ada.client.OrganizationsDeleteRole(ctx, api.OrganizationsDeleteRoleParams{ID: roleID})
		}},
		// orgs/invitations.go and orgs/members.go, through handlers/organizations.go
		{action: "invitation.created", run: func() error {
			inv, err := ada.client.OrganizationsCreateInvitation(ctx, &api.OrganizationInvitationCreate{Email: carol.email},
				api.OrganizationsCreateInvitationParams{})
			if err == nil {
				inviteID, inviteToken = inv.ID, lastInvitationToken(t, env, carol.email)
			}
			return err
		}},
		{action: "invitation.accepted", run: func() error {
			_, err := carol.client.OrganizationsAcceptInvitation(ctx, api.OrganizationsAcceptInvitationParams{Token: inviteToken})
			return err
		}},
		{action: "member.role_changed", run: func() error {
			_, err := ada.client.OrganizationsUpdateMember(ctx, &api.OrganizationMemberUpdate{Role: "admin"}, api.OrganizationsUpdateMemberParams{UserId: carol.id})
			return err
		}},
		{action: "member.removed", run: func() error {
			return ada.client.OrganizationsRemoveMember(ctx, api.OrganizationsRemoveMemberParams{UserId: carol.id})
		}},
		{action: "invitation.revoked", prepare: func() error {
			inv, err := ada.client.OrganizationsCreateInvitation(ctx, &api.OrganizationInvitationCreate{Email: "dave@example.com"},
				api.OrganizationsCreateInvitationParams{})
			if err == nil {
				inviteID = inv.ID
			}
			return err
		}, run: func() error {
			return ada.client.OrganizationsRevokeInvitation(ctx, api.OrganizationsRevokeInvitationParams{ID: inviteID})
		}},
		// handlers/apikeys.go
		{action: "api_key.created", run: func() error {
			key, err := ada.client.APIKeysCreate(ctx, &api.CreateAPIKey{Name: "ci", Permissions: int64(auth.ReadAuditLogs)}, api.APIKeysCreateParams{})
			if err == nil {
				keyID = key.ID
			}
			return err
		}},
		{action: "api_key.revoked", run: func() error {
			_, err := ada.client.APIKeysRevoke(ctx, api.APIKeysRevokeParams{ID: keyID})
			return err
		}},
	}
	for _, step := range steps {
		if step.prepare != nil {
			require.NoError(t, step.prepare(), step.action)
		}
		before := auditOwnerCount(t, env, org)
		require.NoError(t, step.run(), step.action)
		require.Equal(t, before+1, auditOwnerCount(t, env, org), "%s writes exactly one entry", step.action)
		newest, err := ada.client.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{Limit: api.NewOptInt(10)})
		require.NoError(t, err)
		require.Equal(t, step.action, auditEvent(newest.Data[0]))
	}

	// A refused mutation leaves no entry: the entry commits or rolls back with the change.
	_, err := ada.client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Ops"}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)
	before := auditOwnerCount(t, env, org)
	_, err = ada.client.OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "Ops"}, api.OrganizationsCreateTeamParams{})
	requireAPIError(t, err, http.StatusConflict, "team_name_taken")
	_, err = bob.client.OrganizationsCreateRole(ctx, &api.CustomRoleCreate{Name: "Nope",
		Permissions: []api.OrganizationPermission{api.OrganizationPermissionViewContacts}}, api.OrganizationsCreateRoleParams{})
	requireAPIError(t, err, http.StatusForbidden, "permission_denied")
	require.Equal(t, before, auditOwnerCount(t, env, org))
}

// TestAuditLogNamesThePersonBehindEveryCredential: entries made with an API key name its owner, and keep naming
// them after the key is deleted; entries made with an OAuth token name the person who approved the grant.
func TestAuditLogNamesThePersonBehindEveryCredential(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := orgSignUp(t, env, "ada@example.com")
	key, err := ada.client.APIKeysCreate(ctx, &api.CreateAPIKey{Name: "teams", Permissions: int64(auth.FullAccess)}, api.APIKeysCreateParams{})
	require.NoError(t, err)
	_, err = env.Client(t, key.Secret).OrganizationsCreateTeam(ctx, &api.TeamCreate{Name: "By key"}, api.OrganizationsCreateTeamParams{})
	require.NoError(t, err)
	_, err = ada.client.APIKeysRevoke(ctx, api.APIKeysRevokeParams{ID: key.ID})
	require.NoError(t, err)
	_, err = ada.client.APIKeysDelete(ctx, api.APIKeysDeleteParams{ID: key.ID})
	require.NoError(t, err)

	// An OAuth token's principal: the grant acts, the approving person is named.
	grant := uuid.New()
	oauthCtx := auth.WithPrincipal(ctx, &auth.Principal{Kind: auth.KindOAuth, CredentialID: grant, OrganizationID: ada.home, UserID: ada.id})
	require.NoError(t, db.WithOrgTx(oauthCtx, env.DB.Pool, ada.home, func(ctx context.Context, tx pgx.Tx) error {
		return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "team.created", EntityType: "team", EntityID: uuid.NewString(),
			Metadata: map[string]any{"name": "By app"}})
	}))

	l, err := ada.client.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{Action: api.NewOptString("team.created")})
	require.NoError(t, err)
	require.Len(t, l.Data, 2)
	for _, e := range l.Data {
		require.Equal(t, ada.id, e.UserID.Value, string(e.Metadata.Value["actor_type"]))
		require.Equal(t, ada.id, e.Actor.Value.ID.Value)
	}
	byGrant, err := ada.client.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{ActorID: api.NewOptUUID(grant)})
	require.NoError(t, err)
	require.Len(t, byGrant.Data, 1)
	require.JSONEq(t, `"oauth_app"`, string(byGrant.Data[0].Metadata.Value["actor_type"]))
}
