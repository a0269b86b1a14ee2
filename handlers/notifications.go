package handlers

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// Notifications implements the caller's notification preferences, feed and push devices. What lands in the
// feed comes from the other areas through notify.Notifier.
type Notifications struct {
	pool    *pgxpool.Pool
	queries *dbq.Queries
}

// NewNotifications builds the notification handlers.
func NewNotifications(pool *pgxpool.Pool) *Notifications {
	return &Notifications{pool: pool, queries: dbq.New()}
}

// preferenceFields pairs each category with its field of the API object: the one place the two lists meet.
func preferenceFields(p *api.NotificationPreferences) map[notify.Category]*api.NotificationCategoryPreference {
	return map[notify.Category]*api.NotificationCategoryPreference{
		notify.InboundReply: &p.InboundReply, notify.InboundOutOfOffice: &p.InboundOutOfOffice,
		notify.HealthBounce: &p.HealthBounce, notify.HealthComplaint: &p.HealthComplaint,
		notify.HealthWorkerDowntime: &p.HealthWorkerDowntime, notify.HealthDomainAuth: &p.HealthDomainAuth,
		notify.SecurityNewSignin: &p.SecurityNewSignin, notify.BillingAlert: &p.BillingAlert,
		notify.TeamActivity: &p.TeamActivity, notify.CampaignPaused: &p.CampaignPaused,
	}
}

// preferencesOf maps stored preferences to the API object.
func preferencesOf(p notify.Preferences) *api.NotificationPreferencesResponse {
	out := &api.NotificationPreferencesResponse{Preferences: api.NotificationPreferences{EmailDigestMinutes: p.EmailDigestMinutes}}
	for c, field := range preferenceFields(&out.Preferences) {
		choice := p.Categories[c]
		*field = api.NotificationCategoryPreference{Enabled: choice.Enabled, Channels: api.NotificationChannels{
			InApp: choice.Channels.InApp, Email: choice.Channels.Email, Slack: choice.Channels.Slack, Push: choice.Channels.Push,
		}}
	}
	return out
}

// choicesOf maps the categories present in an update; absent ones are left to their defaults.
func choicesOf(in api.NotificationPreferencesInput) map[notify.Category]notify.Choice {
	fields := map[notify.Category]api.OptNotificationCategoryPreference{
		notify.InboundReply: in.InboundReply, notify.InboundOutOfOffice: in.InboundOutOfOffice,
		notify.HealthBounce: in.HealthBounce, notify.HealthComplaint: in.HealthComplaint,
		notify.HealthWorkerDowntime: in.HealthWorkerDowntime, notify.HealthDomainAuth: in.HealthDomainAuth,
		notify.SecurityNewSignin: in.SecurityNewSignin, notify.BillingAlert: in.BillingAlert,
		notify.TeamActivity: in.TeamActivity, notify.CampaignPaused: in.CampaignPaused,
	}
	out := make(map[notify.Category]notify.Choice, len(fields))
	for c, f := range fields {
		if v, ok := f.Get(); ok {
			out[c] = notify.Choice{Enabled: v.Enabled, Channels: notify.Channels{
				InApp: v.Channels.InApp, Email: v.Channels.Email, Slack: v.Channels.Slack, Push: v.Channels.Push,
			}}
		}
	}
	return out
}

// AuthGetNotificationPreferences returns the caller's preferences merged over the defaults.
func (h *Notifications) AuthGetNotificationPreferences(ctx context.Context) (*api.NotificationPreferencesResponse, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	prefs, err := notify.Load(ctx, h.pool, p.UserID)
	if err != nil {
		return nil, err
	}
	return preferencesOf(prefs), nil
}

// AuthUpdateNotificationPreferences replaces the caller's preferences; categories left out fall back to the
// defaults and the digest window to 30 minutes.
func (h *Notifications) AuthUpdateNotificationPreferences(ctx context.Context, req *api.NotificationPreferencesReplace, _ api.AuthUpdateNotificationPreferencesParams) (*api.NotificationPreferencesResponse, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	prefs, err := notify.Save(ctx, h.pool, p.UserID, choicesOf(req.Preferences), req.Preferences.EmailDigestMinutes.Or(notify.DefaultEmailDigestMinutes))
	if err != nil {
		return nil, err
	}
	return preferencesOf(prefs), nil
}

// defaultFeedLimit is how many notifications the feed shows when the caller does not say.
const defaultFeedLimit = 50

// AuthListNotifications returns the newest notifications of the caller and the count of every unread one,
// read from one snapshot so the two agree.
func (h *Notifications) AuthListNotifications(ctx context.Context, params api.AuthListNotificationsParams) (*api.UserNotificationFeed, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	unread := params.Unread.Or("")
	onlyUnread := unread == api.AuthListNotificationsUnread1 || unread == api.AuthListNotificationsUnreadTrue
	var (
		rows  []dbq.Notification
		count int32
	)
	err = db.WithTx(ctx, snapshot{h.pool}, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		rows, err = h.queries.NotificationListByUser(ctx, tx, dbq.NotificationListByUserParams{
			UserID: p.UserID, OnlyUnread: onlyUnread, RowLimit: int32(params.Limit.Or(defaultFeedLimit)),
		})
		if err != nil {
			return err
		}
		count, err = h.queries.NotificationCountUnread(ctx, tx, p.UserID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.UserNotificationFeed{Notifications: make([]api.UserNotification, len(rows)), Unread: int(count)}
	for i, r := range rows {
		n := api.UserNotification{ID: r.ID, UserID: r.UserID, Category: api.NotificationCategory(r.Category),
			Title: r.Title, Body: r.Body, Link: r.Link, CreatedAt: r.CreatedAt}
		n.OrganizationID.SetToNull()
		if r.OrganizationID.Valid {
			n.OrganizationID.SetTo(r.OrganizationID.UUID)
		}
		n.ReadAt.SetToNull()
		if r.ReadAt != nil {
			n.ReadAt.SetTo(*r.ReadAt)
		}
		out.Notifications[i] = n
	}
	return out, nil
}

// AuthMarkAllNotificationsRead marks every notification of the caller read.
func (h *Notifications) AuthMarkAllNotificationsRead(ctx context.Context, _ api.AuthMarkAllNotificationsReadParams) (*api.OkResponse, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.queries.NotificationMarkAllRead(ctx, h.pool, p.UserID); err != nil {
		return nil, err
	}
	return &api.OkResponse{Ok: true}, nil
}

// AuthMarkNotificationRead marks one of the caller's notifications read; anyone else's is a 404.
func (h *Notifications) AuthMarkNotificationRead(ctx context.Context, params api.AuthMarkNotificationReadParams) (*api.OkResponse, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	n, err := h.queries.NotificationMarkRead(ctx, h.pool, dbq.NotificationMarkReadParams{ID: params.ID, UserID: p.UserID})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, apierror.NotFound("not_found", "Notification not found.")
	}
	return &api.OkResponse{Ok: true}, nil
}

// AuthRegisterDeviceToken registers a push device for the caller, taking it over from any other account
// (the device now belongs to whoever signed in on it last).
func (h *Notifications) AuthRegisterDeviceToken(ctx context.Context, req *api.DeviceTokenRegister, _ api.AuthRegisterDeviceTokenParams) (*api.OkResponse, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.queries.DeviceTokenUpsert(ctx, h.pool, dbq.DeviceTokenUpsertParams{
		Token: strings.ToLower(req.Token), UserID: p.UserID,
		Platform:    string(req.Platform.Or(api.DeviceTokenRegisterPlatformIos)),
		Environment: string(req.Environment.Or(api.DeviceTokenRegisterEnvironmentProduction)),
	}); err != nil {
		return nil, err
	}
	return &api.OkResponse{Ok: true}, nil
}

// AuthDeleteDeviceToken stops pushes to one of the caller's devices; an unknown token is already stopped.
func (h *Notifications) AuthDeleteDeviceToken(ctx context.Context, params api.AuthDeleteDeviceTokenParams) (*api.OkResponse, error) {
	p, err := sessionCaller(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.queries.DeviceTokenDelete(ctx, h.pool, dbq.DeviceTokenDeleteParams{
		Token: strings.ToLower(params.Token), UserID: p.UserID,
	}); err != nil {
		return nil, err
	}
	return &api.OkResponse{Ok: true}, nil
}
