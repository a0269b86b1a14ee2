package notify

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/sysmail"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

func TestSendTimeAllowsOneMessagePerWindow(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	w := 5 * time.Minute
	for _, tc := range []struct {
		name      string
		last, now time.Time
		want      time.Time
	}{
		{"never sent: at once", time.Unix(0, 0).UTC(), t0, t0},
		{"quiet for exactly a window: at once", t0, t0.Add(w), t0.Add(w)},
		{"quiet for longer: at once", t0, t0.Add(time.Hour), t0.Add(time.Hour)},
		{"same instant as the last send: the summary at the window's end", t0, t0, t0.Add(w)},
		{"inside the window: the summary at its end", t0, t0.Add(time.Minute), t0.Add(w)},
		{"a summary is already scheduled: join it", t0.Add(w), t0.Add(2 * time.Minute), t0.Add(w)},
		{"just after a summary went out: the next summary", t0.Add(w), t0.Add(w + time.Second), t0.Add(2 * w)},
	} {
		require.Equal(t, tc.want, sendTime(tc.last, tc.now, w), tc.name)
	}
}

type recordedMail []sysmail.Message

func (r *recordedMail) Send(_ context.Context, m sysmail.Message) error {
	*r = append(*r, m)
	return nil
}

type recordedPush struct {
	sent []PushMessage
	to   [][]Device
	fail error
}

func (r *recordedPush) Push(_ context.Context, devices []Device, m PushMessage) error {
	if r.fail != nil {
		return r.fail
	}
	r.sent = append(r.sent, m)
	r.to = append(r.to, devices)
	return nil
}

type bundle struct {
	d         *dbtest.DB
	user, org uuid.UUID
	notifier  *Notifier
	deliverer *Deliverer
	mail      *recordedMail
	push      *recordedPush
	clock     time.Time
}

func setup(t *testing.T) *bundle {
	t.Helper()
	d := dbtest.New(t)
	res, err := accounts.Bootstrap(context.Background(), d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	inserter, err := river.NewClient(riverpgxv5.New(d.Pool), &river.Config{})
	require.NoError(t, err)
	b := &bundle{d: d, user: res.UserID, org: res.OrganizationID, mail: &recordedMail{}, push: &recordedPush{},
		clock: time.Now().UTC().Truncate(time.Second)}
	b.notifier = NewNotifier(inserter)
	b.notifier.now = func() time.Time { return b.clock }
	b.deliverer = NewDeliverer(d.Pool, b.mail, b.push, "https://app.example/")
	b.deliverer.now = func() time.Time { return b.clock }
	return b
}

// notify produces ev in an organization-scoped transaction, as an area's handler would.
func (b *bundle) notify(t *testing.T, ev Event) {
	t.Helper()
	if ev.UserID == uuid.Nil {
		ev.UserID = b.user
	}
	require.NoError(t, db.WithOrgTx(context.Background(), b.d.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
		return b.notifier.NotifyTx(ctx, tx, ev)
	}))
}

func (b *bundle) addDevice(t *testing.T, token string) {
	t.Helper()
	require.NoError(t, dbq.New().DeviceTokenUpsert(context.Background(), b.d.Pool, dbq.DeviceTokenUpsertParams{
		Token: token, UserID: b.user, Platform: "ios", Environment: "production"}))
}

func (b *bundle) feed(t *testing.T) []dbq.Notification {
	t.Helper()
	rows, err := dbq.New().NotificationListByUser(context.Background(), b.d.Pool, dbq.NotificationListByUserParams{
		UserID: b.user, RowLimit: 100})
	require.NoError(t, err)
	return rows
}

type pending struct {
	Channel Channel
	Title   string
	DueAt   time.Time
}

func (b *bundle) pending(t *testing.T) []pending {
	t.Helper()
	rows, err := b.d.Pool.Query(context.Background(),
		`SELECT channel, title, due_at FROM notification_deliveries WHERE user_id = $1 ORDER BY due_at, channel, created_at`, b.user)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pending, error) {
		var p pending
		err := r.Scan(&p.Channel, &p.Title, &p.DueAt)
		p.DueAt = p.DueAt.UTC()
		return p, err
	})
	require.NoError(t, err)
	return out
}

func (b *bundle) jobs(t *testing.T) []DeliverArgs {
	t.Helper()
	rows, err := b.d.Pool.Query(context.Background(),
		`SELECT args, scheduled_at FROM river_job WHERE kind = 'notification_deliver' ORDER BY scheduled_at, id`)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DeliverArgs, error) {
		var (
			raw       []byte
			scheduled time.Time
			a         DeliverArgs
		)
		if err := r.Scan(&raw, &scheduled); err != nil {
			return a, err
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return a, err
		}
		if !a.DueAt.Equal(scheduled) {
			return a, errors.New("job scheduled at another time than its due_at")
		}
		return a, nil
	})
	require.NoError(t, err)
	return out
}

func (b *bundle) deliver(t *testing.T, ch Channel) {
	t.Helper()
	require.NoError(t, b.deliverer.Deliver(context.Background(), DeliverArgs{UserID: b.user, Channel: ch, DueAt: b.clock}))
}

func TestNotifyFollowsPreferenceDefaults(t *testing.T) {
	t.Parallel()
	b := setup(t)

	// Replies are off by default: nothing at all.
	b.notify(t, Event{OrganizationID: b.org, Category: InboundReply, Title: "Reply from Ada"})
	require.Empty(t, b.feed(t))
	require.Empty(t, b.pending(t))

	// Team activity: in-app and push but no email by default; without a device there is no push either.
	b.notify(t, Event{OrganizationID: b.org, Category: TeamActivity, Title: "Bob joined", Body: "Bob accepted the invitation.", Link: "/settings/team"})
	feed := b.feed(t)
	require.Len(t, feed, 1)
	require.Equal(t, "team_activity", feed[0].Category)
	require.Equal(t, "Bob joined", feed[0].Title)
	require.Equal(t, "Bob accepted the invitation.", feed[0].Body)
	require.Equal(t, "/settings/team", feed[0].Link)
	require.Equal(t, uuid.NullUUID{UUID: b.org, Valid: true}, feed[0].OrganizationID)
	require.Nil(t, feed[0].ReadAt)
	require.Empty(t, b.pending(t))

	// Billing alerts email too, and push once a device exists.
	b.addDevice(t, "abcdef01")
	b.notify(t, Event{Category: BillingAlert, Title: "Card declined", Link: "/billing"})
	require.Equal(t, []pending{{ChannelEmail, "Card declined", b.clock}, {ChannelPush, "Card declined", b.clock}}, b.pending(t))
	feed = b.feed(t)
	require.Len(t, feed, 2)
	require.False(t, feed[0].OrganizationID.Valid, "an account-level event has no organization")

	b.deliver(t, ChannelEmail)
	b.deliver(t, ChannelPush)
	require.Len(t, *b.mail, 1)
	require.Equal(t, "owner@acme.example", (*b.mail)[0].To)
	require.Equal(t, "Card declined", (*b.mail)[0].Subject)
	require.Contains(t, (*b.mail)[0].Text, "https://app.example/billing")
	require.Equal(t, []PushMessage{{Title: "Card declined", Count: 1}}, b.push.sent)
	require.Equal(t, []Device{{Token: "abcdef01", Environment: "production"}}, b.push.to[0])
	require.Empty(t, b.pending(t))
}

func TestNotifyBatchesPushAndEmail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDevice(t, "abcdef01")
	b.addDevice(t, "abcdef02")
	t0 := b.clock
	_, err := Save(context.Background(), b.d.Pool, b.user, map[Category]Choice{
		HealthBounce: {Enabled: true, Channels: Channels{InApp: true, Email: true, Push: true}},
	}, 60)
	require.NoError(t, err)

	// The first event of a quiet stretch goes out at once on both channels.
	b.notify(t, Event{OrganizationID: b.org, Category: HealthBounce, Title: "Bounce 1"})
	b.deliver(t, ChannelPush)
	b.deliver(t, ChannelEmail)
	require.Equal(t, []PushMessage{{Title: "Bounce 1", Count: 1}}, b.push.sent)
	require.Len(t, *b.mail, 1)

	// The next ones inside the window wait for one summary at its end: 5 minutes for push, the user's 60 for email.
	b.clock = t0.Add(time.Minute)
	b.notify(t, Event{OrganizationID: b.org, Category: HealthBounce, Title: "Bounce 2", Body: "ada@example.com"})
	b.clock = t0.Add(2 * time.Minute)
	b.notify(t, Event{OrganizationID: b.org, Category: HealthBounce, Title: "Bounce 3", Link: "https://elsewhere.example/x"})
	require.Equal(t, []pending{
		{ChannelPush, "Bounce 2", t0.Add(PushWindow)}, {ChannelPush, "Bounce 3", t0.Add(PushWindow)},
		{ChannelEmail, "Bounce 2", t0.Add(time.Hour)}, {ChannelEmail, "Bounce 3", t0.Add(time.Hour)},
	}, b.pending(t))
	// One job per send time: the third event joined the second's.
	require.Equal(t, []DeliverArgs{
		{b.user, ChannelEmail, t0}, {b.user, ChannelPush, t0},
		{b.user, ChannelPush, t0.Add(PushWindow)}, {b.user, ChannelEmail, t0.Add(time.Hour)},
	}, b.jobs(t))

	// Nothing is sent before its time.
	b.deliver(t, ChannelPush)
	require.Len(t, b.push.sent, 1)

	b.clock = t0.Add(PushWindow)
	b.deliver(t, ChannelPush)
	require.Equal(t, PushMessage{Title: "2 new notifications", Body: "Bounce 2; Bounce 3", Count: 2}, b.push.sent[1])
	require.Len(t, b.push.to[1], 2, "every device of the user")

	// Right after the summary the window is closed again: the next summary comes a window later...
	b.clock = t0.Add(PushWindow + time.Second)
	b.notify(t, Event{OrganizationID: b.org, Category: HealthComplaint, Title: "Complaint"})
	require.Contains(t, b.pending(t), pending{ChannelPush, "Complaint", t0.Add(2 * PushWindow)})

	b.clock = t0.Add(time.Hour)
	b.deliver(t, ChannelEmail)
	require.Len(t, *b.mail, 2)
	summary := (*b.mail)[1]
	require.Equal(t, "2 new notifications", summary.Subject)
	require.Contains(t, summary.Text, "Bounce 2\nada@example.com\n")
	require.Contains(t, summary.Text, "Bounce 3\nhttps://elsewhere.example/x\n")

	// ...and after a whole quiet window the next event goes at once again (the complaint rides along).
	b.deliver(t, ChannelPush)
	b.clock = t0.Add(3 * time.Hour)
	b.notify(t, Event{OrganizationID: b.org, Category: HealthBounce, Title: "Bounce 4"})
	require.Equal(t, []pending{{ChannelEmail, "Bounce 4", b.clock}, {ChannelPush, "Bounce 4", b.clock}}, b.pending(t))
}

func TestNotifyHonoursChosenChannels(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDevice(t, "abcdef01")
	_, err := Save(context.Background(), b.d.Pool, b.user, map[Category]Choice{
		HealthBounce:   {Enabled: true, Channels: Channels{InApp: true}},
		CampaignPaused: {Enabled: false, Channels: Channels{InApp: true, Email: true, Push: true}},
		InboundReply:   {Enabled: true, Channels: Channels{Push: true}},
	}, 0)
	require.NoError(t, err)

	b.notify(t, Event{OrganizationID: b.org, Category: HealthBounce, Title: "Bounce"})
	b.notify(t, Event{OrganizationID: b.org, Category: CampaignPaused, Title: "Paused"})
	b.notify(t, Event{OrganizationID: b.org, Category: InboundReply, Title: "Reply"})
	feed := b.feed(t)
	require.Len(t, feed, 1)
	require.Equal(t, "Bounce", feed[0].Title)
	require.Equal(t, []pending{{ChannelPush, "Reply", b.clock}}, b.pending(t))
}

func TestNotifyRefusesMalformedEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, ev := range []Event{
		{UserID: b.user, Category: "campaign_exploded", Title: "x"},
		{UserID: b.user, Category: BillingAlert},
		{UserID: b.user, Category: BillingAlert, Title: string(make([]byte, maxTitle+1))},
		{Category: BillingAlert, Title: "x"},
	} {
		err := db.WithTx(ctx, b.d.Pool, func(ctx context.Context, tx pgx.Tx) error { return b.notifier.NotifyTx(ctx, tx, ev) })
		require.Error(t, err, "%+v", ev)
	}
	require.Empty(t, b.feed(t))
}

func TestDeliverKeepsWhatFailedToSend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.addDevice(t, "abcdef01")
	b.notify(t, Event{OrganizationID: b.org, Category: HealthBounce, Title: "Bounce"})
	b.push.fail = errors.New("push service down")
	require.Error(t, b.deliverer.Deliver(context.Background(), DeliverArgs{UserID: b.user, Channel: ChannelPush, DueAt: b.clock}))
	require.Len(t, b.pending(t), 1, "kept for the retry")

	b.push.fail = nil
	b.deliver(t, ChannelPush)
	require.Equal(t, []PushMessage{{Title: "Bounce", Count: 1}}, b.push.sent)
	require.Empty(t, b.pending(t))

	// A device unregistered before the send drops the push rather than failing forever.
	b.clock = b.clock.Add(time.Hour)
	b.notify(t, Event{OrganizationID: b.org, Category: HealthBounce, Title: "Bounce again"})
	require.NoError(t, dbq.New().DeviceTokenDelete(context.Background(), b.d.Pool, dbq.DeviceTokenDeleteParams{Token: "abcdef01", UserID: b.user}))
	b.deliver(t, ChannelPush)
	require.Len(t, b.push.sent, 1)
	require.Empty(t, b.pending(t))
}

func TestPreferencesMergeOverDefaults(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	p, err := Load(ctx, b.d.Pool, b.user)
	require.NoError(t, err)
	require.Equal(t, DefaultEmailDigestMinutes, p.EmailDigestMinutes)
	require.Len(t, p.Categories, 10)
	for _, c := range Categories {
		require.Equal(t, Default(c), p.Categories[c])
	}

	off := Choice{Enabled: false, Channels: Channels{Slack: true}}
	saved, err := Save(ctx, b.d.Pool, b.user, map[Category]Choice{TeamActivity: off, "not_a_category": off}, 90)
	require.NoError(t, err)
	loaded, err := Load(ctx, b.d.Pool, b.user)
	require.NoError(t, err)
	require.Equal(t, saved, loaded)
	require.Equal(t, 90, loaded.EmailDigestMinutes)
	require.Equal(t, off, loaded.Categories[TeamActivity])
	require.Equal(t, Default(BillingAlert), loaded.Categories[BillingAlert])
	require.Len(t, loaded.Categories, 10)
}

func TestSummaries(t *testing.T) {
	t.Parallel()
	one := []dbq.NotificationDelivery{{Title: "Paused", Body: "Campaign Q3 paused.", Link: "/campaigns/1"}}
	m := emailOf(one, "https://app.example")
	require.Equal(t, "Paused", m.Subject)
	require.Contains(t, m.Text, "Campaign Q3 paused.\nhttps://app.example/campaigns/1\n")

	var many []dbq.NotificationDelivery
	for _, title := range []string{"a", "b", "c", "d", "e"} {
		many = append(many, dbq.NotificationDelivery{Title: title})
	}
	require.Equal(t, PushMessage{Title: "5 new notifications", Body: "a; b; c and 2 more", Count: 5}, pushOf(many))
	require.Equal(t, "5 new notifications", emailOf(many, "").Subject)
}
