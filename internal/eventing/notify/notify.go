package notify

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	dbq "github.com/outflowhq/outflow/gen/db"
)

// PushWindow is how long pushes are bundled: after a push, the events of the next PushWindow arrive as one
// summary when it ends. Short, because a phone is where urgent things should surface; long enough that a burst
// (fifty bounces in a minute) buzzes twice, not fifty times.
const PushWindow = 5 * time.Minute

// Channel is a batched delivery channel (in-app needs no batching: the feed is the batch).
type Channel string

// The batched channels.
const (
	ChannelEmail Channel = "email"
	ChannelPush  Channel = "push"
)

// Event is something one user should hear about.
type Event struct {
	// UserID is who hears about it.
	UserID uuid.UUID
	// OrganizationID is where it happened; uuid.Nil for account-level events such as a new sign-in.
	OrganizationID uuid.UUID
	// Category decides which of the user's preferences apply.
	Category Category
	// Title is the one-line headline (1 to 200 characters): the push text and the email subject.
	Title string
	// Body is the optional detail.
	Body string
	// Link is a path in the web app (/campaigns/<id>) or an absolute URL to open; empty for none.
	Link string
}

// maxTitle is the longest title the feed keeps.
const maxTitle = 200

// Inserter is the part of a River client the producer needs: transactional inserts.
type Inserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Notifier is the producer API: areas call NotifyTx when an event concerns a user.
type Notifier struct {
	jobs    Inserter
	queries *dbq.Queries
	now     func() time.Time
}

// NewNotifier builds the producer; jobs (a River client, insert-only is enough) schedules the sends.
func NewNotifier(jobs Inserter) *Notifier {
	return &Notifier{jobs: jobs, queries: dbq.New(), now: time.Now}
}

// NotifyTx records ev in tx as its user's preferences say: nothing when the category is disabled, otherwise a
// feed row (in-app), an email and a push to the user's devices, each when its channel is on. Email and push
// are scheduled, not sent: the first of a quiet stretch is due at once, later ones join the summary at the end
// of the window. tx may be organization-scoped or not; these tables belong to the user.
func (n *Notifier) NotifyTx(ctx context.Context, tx pgx.Tx, ev Event) error {
	if !ev.Category.Valid() {
		return fmt.Errorf("notify: unknown category %q", ev.Category)
	}
	if ev.Title == "" || utf8.RuneCountInString(ev.Title) > maxTitle {
		return fmt.Errorf("notify: title must be 1 to %d characters", maxTitle)
	}
	if ev.UserID == uuid.Nil {
		return errors.New("notify: event without a user")
	}
	prefs, err := Load(ctx, tx, ev.UserID)
	if err != nil {
		return err
	}
	choice := prefs.Categories[ev.Category]
	if !choice.Enabled {
		return nil
	}
	org := uuid.NullUUID{UUID: ev.OrganizationID, Valid: ev.OrganizationID != uuid.Nil}
	if choice.Channels.InApp {
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		if err := n.queries.NotificationCreate(ctx, tx, dbq.NotificationCreateParams{
			ID: id, UserID: ev.UserID, OrganizationID: org, Category: string(ev.Category),
			Title: ev.Title, Body: ev.Body, Link: ev.Link,
		}); err != nil {
			return fmt.Errorf("notify: record feed item: %w", err)
		}
	}
	if choice.Channels.Email {
		window := time.Duration(prefs.EmailDigestMinutes) * time.Minute
		if err := n.scheduleTx(ctx, tx, ev, org, ChannelEmail, window); err != nil {
			return err
		}
	}
	if choice.Channels.Push {
		devices, err := n.queries.DeviceTokenListByUser(ctx, tx, ev.UserID)
		if err != nil {
			return fmt.Errorf("notify: list devices: %w", err)
		}
		// Without a device there is nobody to push to, and the window stays open for the first one.
		if len(devices) > 0 {
			if err := n.scheduleTx(ctx, tx, ev, org, ChannelPush, PushWindow); err != nil {
				return err
			}
		}
	}
	return nil
}

// scheduleTx queues ev on a batched channel at the time the channel's window allows, and the job that sends it.
func (n *Notifier) scheduleTx(ctx context.Context, tx pgx.Tx, ev Event, org uuid.NullUUID, ch Channel, window time.Duration) error {
	// Postgres keeps microseconds: rounding here keeps the job arguments equal to what the window row reads back.
	now := n.now().UTC().Truncate(time.Microsecond)
	last, err := n.queries.NotificationWindowLock(ctx, tx, dbq.NotificationWindowLockParams{UserID: ev.UserID, Channel: string(ch)})
	if err != nil {
		return fmt.Errorf("notify: lock %s window: %w", ch, err)
	}
	due := sendTime(last.UTC(), now, window)
	if !due.Equal(last) {
		if err := n.queries.NotificationWindowSet(ctx, tx, dbq.NotificationWindowSetParams{
			LastDueAt: due, UserID: ev.UserID, Channel: string(ch),
		}); err != nil {
			return fmt.Errorf("notify: move %s window: %w", ch, err)
		}
	}
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	if err := n.queries.NotificationDeliveryCreate(ctx, tx, dbq.NotificationDeliveryCreateParams{
		ID: id, UserID: ev.UserID, Channel: string(ch), OrganizationID: org, Category: string(ev.Category),
		Title: ev.Title, Body: ev.Body, Link: ev.Link, DueAt: due,
	}); err != nil {
		return fmt.Errorf("notify: queue %s: %w", ch, err)
	}
	if _, err := n.jobs.InsertTx(ctx, tx, DeliverArgs{UserID: ev.UserID, Channel: ch, DueAt: due},
		&river.InsertOpts{ScheduledAt: due}); err != nil {
		return fmt.Errorf("notify: schedule %s: %w", ch, err)
	}
	return nil
}

// sendTime is the batching decision for an event at now on a channel that last sent (or is set to send) at
// last, allowing one message per window: after a quiet stretch of a whole window the event goes at once; when
// a summary is already scheduled it joins it; otherwise it opens the summary sent when the current window ends.
func sendTime(last, now time.Time, window time.Duration) time.Time {
	switch {
	case !now.Before(last.Add(window)):
		return now
	case last.After(now):
		return last
	default:
		return last.Add(window)
	}
}

// DeliverArgs is the River job that sends what is due on one user's channel. One job exists per scheduled
// send time: events joining a pending summary find its job already there.
type DeliverArgs struct {
	UserID  uuid.UUID `json:"user_id"`
	Channel Channel   `json:"channel"`
	DueAt   time.Time `json:"due_at"`
}

// Kind names the delivery job in River.
func (DeliverArgs) Kind() string { return "notification_deliver" }

// InsertOpts retries a failed send (SMTP relay down) for a while, and makes the job unique per user, channel
// and send time.
func (DeliverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}
