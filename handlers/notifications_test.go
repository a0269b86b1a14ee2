package handlers_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// member is one signed-up person of a notifications test.
type member struct {
	client *api.Client
	token  string
	userID uuid.UUID
	orgID  uuid.UUID
}

func signUpMember(t *testing.T, env *apitest.Env, email string) member {
	t.Helper()
	pair := env.SignUp(t, email)
	client := env.Client(t, pair.AccessToken)
	me, err := client.AuthGetMe(context.Background())
	require.NoError(t, err)
	m := member{client: client, token: pair.AccessToken, userID: me.ID}
	require.NoError(t, env.DB.Pool.QueryRow(context.Background(),
		`SELECT organization_id FROM auth_user_memberships($1)`, me.ID).Scan(&m.orgID))
	return m
}

// produce notifies through the real producer, as the other areas do.
func produce(t *testing.T, env *apitest.Env, ev notify.Event) {
	t.Helper()
	inserter, err := river.NewClient(riverpgxv5.New(env.DB.Pool), &river.Config{})
	require.NoError(t, err)
	require.NoError(t, db.WithTx(context.Background(), env.DB.Pool, func(ctx context.Context, tx pgx.Tx) error {
		return notify.NewNotifier(inserter).NotifyTx(ctx, tx, ev)
	}))
}

func choice(enabled, inApp, email, slack, push bool) api.NotificationCategoryPreference {
	return api.NotificationCategoryPreference{Enabled: enabled,
		Channels: api.NotificationChannels{InApp: inApp, Email: email, Slack: slack, Push: push}}
}

func TestNotificationPreferences(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := signUpMember(t, env, "ada@example.com")

	// The defaults of the seed, written out.
	defaults := api.NotificationPreferences{
		InboundReply:         choice(false, true, false, false, true),
		InboundOutOfOffice:   choice(false, true, false, false, true),
		HealthBounce:         choice(true, true, false, false, true),
		HealthComplaint:      choice(true, true, false, false, true),
		HealthWorkerDowntime: choice(true, true, false, false, true),
		HealthDomainAuth:     choice(true, true, true, false, true),
		SecurityNewSignin:    choice(true, true, false, false, true),
		BillingAlert:         choice(true, true, true, false, true),
		TeamActivity:         choice(true, true, false, false, true),
		CampaignPaused:       choice(true, true, true, false, true),
		EmailDigestMinutes:   30,
	}
	got, err := ada.client.AuthGetNotificationPreferences(ctx)
	require.NoError(t, err)
	require.Equal(t, defaults, got.Preferences)

	// A replacement echoes the result; categories left out fall back to the defaults.
	want := defaults
	want.InboundReply = choice(true, false, true, true, false)
	want.TeamActivity = choice(false, true, false, false, false)
	want.EmailDigestMinutes = 120
	put, err := ada.client.AuthUpdateNotificationPreferences(ctx, &api.NotificationPreferencesReplace{Preferences: api.NotificationPreferencesInput{
		InboundReply:       api.NewOptNotificationCategoryPreference(want.InboundReply),
		TeamActivity:       api.NewOptNotificationCategoryPreference(want.TeamActivity),
		EmailDigestMinutes: api.NewOptInt(120),
	}}, api.AuthUpdateNotificationPreferencesParams{})
	require.NoError(t, err)
	require.Equal(t, want, put.Preferences)
	got, err = ada.client.AuthGetNotificationPreferences(ctx)
	require.NoError(t, err)
	require.Equal(t, want, got.Preferences)

	// The body is the complete object: what this one leaves out returns to the defaults, the window to 30.
	put, err = ada.client.AuthUpdateNotificationPreferences(ctx, &api.NotificationPreferencesReplace{Preferences: api.NotificationPreferencesInput{
		BillingAlert: api.NewOptNotificationCategoryPreference(choice(true, true, false, false, false)),
	}}, api.AuthUpdateNotificationPreferencesParams{})
	require.NoError(t, err)
	want = defaults
	want.BillingAlert = choice(true, true, false, false, false)
	require.Equal(t, want, put.Preferences)

	// Other users keep their own.
	bob := signUpMember(t, env, "bob@example.com")
	got, err = bob.client.AuthGetNotificationPreferences(ctx)
	require.NoError(t, err)
	require.Equal(t, defaults, got.Preferences)

	// The digest window is 30 to 1440 minutes.
	for _, minutes := range []string{"30", "1440"} {
		status, _ := profileRaw(t, env, http.MethodPut, "/v1/auth/me/notification-preferences", ada.token,
			`{"preferences":{"email_digest_minutes":`+minutes+`}}`)
		require.Equal(t, http.StatusOK, status, minutes)
	}
	for _, body := range []string{
		`{"preferences":{"email_digest_minutes":29}}`,
		`{"preferences":{"email_digest_minutes":1441}}`,
		`{"preferences":{"inbound_reply":{"enabled":true}}}`,
		`{}`,
	} {
		status, _ := profileRaw(t, env, http.MethodPut, "/v1/auth/me/notification-preferences", ada.token, body)
		require.Equal(t, http.StatusBadRequest, status, body)
	}

	key := env.Client(t, env.Bootstrap(t, "acme").APIKey)
	_, err = key.AuthGetNotificationPreferences(ctx)
	requireAPIError(t, err, 403, "session_required")
	_, err = key.AuthUpdateNotificationPreferences(ctx, &api.NotificationPreferencesReplace{}, api.AuthUpdateNotificationPreferencesParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = env.Client(t, "").AuthGetNotificationPreferences(ctx)
	requireAPIError(t, err, 401, "missing_credential")
}

func TestNotificationFeed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := signUpMember(t, env, "ada@example.com")
	bob := signUpMember(t, env, "bob@example.com")

	produce(t, env, notify.Event{UserID: ada.userID, OrganizationID: ada.orgID, Category: notify.TeamActivity,
		Title: "Bob joined", Body: "Bob accepted the invitation.", Link: "/settings/team"})
	produce(t, env, notify.Event{UserID: ada.userID, Category: notify.SecurityNewSignin, Title: "New sign-in"})
	produce(t, env, notify.Event{UserID: ada.userID, OrganizationID: ada.orgID, Category: notify.CampaignPaused, Title: "Q3 paused"})
	produce(t, env, notify.Event{UserID: ada.userID, OrganizationID: ada.orgID, Category: notify.InboundReply, Title: "Off by default"})
	produce(t, env, notify.Event{UserID: bob.userID, OrganizationID: bob.orgID, Category: notify.TeamActivity, Title: "Bob's own"})

	feed, err := ada.client.AuthListNotifications(ctx, api.AuthListNotificationsParams{})
	require.NoError(t, err)
	require.Equal(t, 3, feed.Unread)
	require.Len(t, feed.Notifications, 3)
	titles := func(f *api.UserNotificationFeed) []string {
		var out []string
		for _, n := range f.Notifications {
			out = append(out, n.Title)
		}
		return out
	}
	require.Equal(t, []string{"Q3 paused", "New sign-in", "Bob joined"}, titles(feed), "newest first")
	joined := feed.Notifications[2]
	require.Equal(t, ada.userID, joined.UserID)
	require.Equal(t, api.NewNilUUID(ada.orgID), joined.OrganizationID)
	require.Equal(t, api.NotificationCategoryTeamActivity, joined.Category)
	require.Equal(t, "Bob accepted the invitation.", joined.Body)
	require.Equal(t, "/settings/team", joined.Link)
	require.True(t, joined.ReadAt.IsNull())
	require.True(t, feed.Notifications[1].OrganizationID.IsNull(), "an account-level notification")

	// limit caps the list, not the unread count.
	feed, err = ada.client.AuthListNotifications(ctx, api.AuthListNotificationsParams{Limit: api.NewOptInt(2)})
	require.NoError(t, err)
	require.Equal(t, []string{"Q3 paused", "New sign-in"}, titles(feed))
	require.Equal(t, 3, feed.Unread)

	// Marking one read; again changes nothing.
	ok, err := ada.client.AuthMarkNotificationRead(ctx, api.AuthMarkNotificationReadParams{ID: joined.ID})
	require.NoError(t, err)
	require.True(t, ok.Ok)
	all, err := ada.client.AuthListNotifications(ctx, api.AuthListNotificationsParams{Unread: api.NewOptAuthListNotificationsUnread(api.AuthListNotificationsUnreadFalse)})
	require.NoError(t, err)
	readAt, isSet := all.Notifications[2].ReadAt.Get()
	require.True(t, isSet)
	_, err = ada.client.AuthMarkNotificationRead(ctx, api.AuthMarkNotificationReadParams{ID: joined.ID})
	require.NoError(t, err)
	all, err = ada.client.AuthListNotifications(ctx, api.AuthListNotificationsParams{Unread: api.NewOptAuthListNotificationsUnread(api.AuthListNotificationsUnread0)})
	require.NoError(t, err)
	require.Len(t, all.Notifications, 3)
	require.Equal(t, 2, all.Unread)
	again, _ := all.Notifications[2].ReadAt.Get()
	require.True(t, readAt.Equal(again))

	for _, flag := range []api.AuthListNotificationsUnread{api.AuthListNotificationsUnread1, api.AuthListNotificationsUnreadTrue} {
		unread, err := ada.client.AuthListNotifications(ctx, api.AuthListNotificationsParams{Unread: api.NewOptAuthListNotificationsUnread(flag)})
		require.NoError(t, err)
		require.Equal(t, []string{"Q3 paused", "New sign-in"}, titles(unread), flag)
		require.Equal(t, 2, unread.Unread)
	}

	// Someone else's notification, or an unknown one, is not found; a malformed id is a 400.
	bobs, err := bob.client.AuthListNotifications(ctx, api.AuthListNotificationsParams{})
	require.NoError(t, err)
	require.Equal(t, []string{"Bob's own"}, titles(bobs))
	_, err = ada.client.AuthMarkNotificationRead(ctx, api.AuthMarkNotificationReadParams{ID: bobs.Notifications[0].ID})
	requireAPIError(t, err, 404, "not_found")
	_, err = ada.client.AuthMarkNotificationRead(ctx, api.AuthMarkNotificationReadParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
	status, _ := profileRaw(t, env, http.MethodPost, "/v1/auth/me/notifications/not-a-uuid/read", ada.token, "")
	require.Equal(t, http.StatusNotFound, status, "a malformed id is an unknown one")

	// Mark all read touches only the caller's.
	ok, err = ada.client.AuthMarkAllNotificationsRead(ctx, api.AuthMarkAllNotificationsReadParams{})
	require.NoError(t, err)
	require.True(t, ok.Ok)
	feed, err = ada.client.AuthListNotifications(ctx, api.AuthListNotificationsParams{})
	require.NoError(t, err)
	require.Zero(t, feed.Unread)
	for _, n := range feed.Notifications {
		require.False(t, n.ReadAt.IsNull())
	}
	bobs, err = bob.client.AuthListNotifications(ctx, api.AuthListNotificationsParams{})
	require.NoError(t, err)
	require.Equal(t, 1, bobs.Unread)

	for _, query := range []string{"limit=0", "limit=201", "limit=ten", "unread=yes"} {
		status, _ := profileRaw(t, env, http.MethodGet, "/v1/auth/me/notifications?"+query, ada.token, "")
		require.Equal(t, http.StatusBadRequest, status, query)
	}
	status, _ = profileRaw(t, env, http.MethodGet, "/v1/auth/me/notifications?limit=200", ada.token, "")
	require.Equal(t, http.StatusOK, status)

	key := env.Client(t, env.Bootstrap(t, "acme").APIKey)
	_, err = key.AuthListNotifications(ctx, api.AuthListNotificationsParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = key.AuthMarkAllNotificationsRead(ctx, api.AuthMarkAllNotificationsReadParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = key.AuthMarkNotificationRead(ctx, api.AuthMarkNotificationReadParams{ID: joined.ID})
	requireAPIError(t, err, 403, "session_required")
	_, err = env.Client(t, "").AuthListNotifications(ctx, api.AuthListNotificationsParams{})
	requireAPIError(t, err, 401, "missing_credential")
}

func TestDeviceTokens(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	ada := signUpMember(t, env, "ada@example.com")
	bob := signUpMember(t, env, "bob@example.com")

	type device struct {
		UserID      uuid.UUID
		Platform    string
		Environment string
	}
	devices := func() map[string]device {
		rows, err := env.DB.Pool.Query(ctx, `SELECT token, user_id, platform, environment FROM device_tokens`)
		require.NoError(t, err)
		out := map[string]device{}
		for rows.Next() {
			var (
				token string
				d     device
			)
			require.NoError(t, rows.Scan(&token, &d.UserID, &d.Platform, &d.Environment))
			out[token] = d
		}
		require.NoError(t, rows.Err())
		return out
	}

	ok, err := ada.client.AuthRegisterDeviceToken(ctx, &api.DeviceTokenRegister{Token: "ABCDEF0123"}, api.AuthRegisterDeviceTokenParams{})
	require.NoError(t, err)
	require.True(t, ok.Ok)
	require.Equal(t, map[string]device{"abcdef0123": {ada.userID, "ios", "production"}}, devices())

	// Registering again updates the one row.
	_, err = ada.client.AuthRegisterDeviceToken(ctx, &api.DeviceTokenRegister{Token: "abcdef0123",
		Platform:    api.NewOptDeviceTokenRegisterPlatform(api.DeviceTokenRegisterPlatformIos),
		Environment: api.NewOptDeviceTokenRegisterEnvironment(api.DeviceTokenRegisterEnvironmentDevelopment)}, api.AuthRegisterDeviceTokenParams{})
	require.NoError(t, err)
	require.Equal(t, map[string]device{"abcdef0123": {ada.userID, "ios", "development"}}, devices())

	// The same device signed in to another account moves to it.
	_, err = bob.client.AuthRegisterDeviceToken(ctx, &api.DeviceTokenRegister{Token: "abcdef0123"}, api.AuthRegisterDeviceTokenParams{})
	require.NoError(t, err)
	require.Equal(t, map[string]device{"abcdef0123": {bob.userID, "ios", "production"}}, devices())

	// Pushes now follow Bob's preferences to it, and no longer Ada's.
	produce(t, env, notify.Event{UserID: ada.userID, Category: notify.BillingAlert, Title: "For Ada"})
	produce(t, env, notify.Event{UserID: bob.userID, Category: notify.BillingAlert, Title: "For Bob"})
	rows, err := env.DB.Pool.Query(ctx, `SELECT title FROM notification_deliveries WHERE channel = 'push'`)
	require.NoError(t, err)
	pushes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"For Bob"}, pushes)

	// Only the caller's own token is removed; an unknown one still answers ok.
	ok, err = ada.client.AuthDeleteDeviceToken(ctx, api.AuthDeleteDeviceTokenParams{Token: "abcdef0123"})
	require.NoError(t, err)
	require.True(t, ok.Ok)
	require.Len(t, devices(), 1)
	_, err = bob.client.AuthDeleteDeviceToken(ctx, api.AuthDeleteDeviceTokenParams{Token: "ABCDEF0123"})
	require.NoError(t, err)
	require.Empty(t, devices())
	_, err = bob.client.AuthDeleteDeviceToken(ctx, api.AuthDeleteDeviceTokenParams{Token: "ffff"})
	require.NoError(t, err)

	for _, body := range []string{
		`{"token":"not-hex"}`,
		`{"token":""}`,
		`{"token":"abcd","platform":"android"}`,
		`{"token":"abcd","environment":"staging"}`,
		`{}`,
	} {
		status, _ := profileRaw(t, env, http.MethodPost, "/v1/auth/me/device-tokens", ada.token, body)
		require.Equal(t, http.StatusBadRequest, status, body)
	}
	require.Empty(t, devices())

	key := env.Client(t, env.Bootstrap(t, "acme").APIKey)
	_, err = key.AuthRegisterDeviceToken(ctx, &api.DeviceTokenRegister{Token: "abcd"}, api.AuthRegisterDeviceTokenParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = key.AuthDeleteDeviceToken(ctx, api.AuthDeleteDeviceTokenParams{Token: "abcd"})
	requireAPIError(t, err, 403, "session_required")
	_, err = env.Client(t, "").AuthRegisterDeviceToken(ctx, &api.DeviceTokenRegister{Token: "abcd"}, api.AuthRegisterDeviceTokenParams{})
	requireAPIError(t, err, 401, "missing_credential")
}
