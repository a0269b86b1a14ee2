package notify

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/sysmail"
)

// Device is one registered push target of a user.
type Device struct {
	// Token is the hex device token the push service issued.
	Token string
	// Environment is the push service environment the token belongs to (production or development).
	Environment string
}

// PushMessage is what one push shows: a single event, or the summary of a window's events.
type PushMessage struct {
	Title string
	Body  string
	// Count is how many events the message stands for (the badge).
	Count int
}

// Pusher delivers pushes to devices; the push service (APNs) sits behind it.
type Pusher interface {
	Push(ctx context.Context, devices []Device, m PushMessage) error
}

// LogPusher stands in for a push service this deployment has no credentials for: it logs each push it would
// have sent, so batching can be watched working without one.
type LogPusher struct {
	Logger *slog.Logger
}

// Push logs m and its device count at INFO.
func (l LogPusher) Push(ctx context.Context, devices []Device, m PushMessage) error {
	l.Logger.InfoContext(ctx, "push not sent (no push service configured); logged instead",
		slog.Int("devices", len(devices)), slog.String("title", m.Title), slog.String("body", m.Body),
		slog.Int("count", m.Count))
	return nil
}

// Deliverer sends the email and push messages the producer scheduled; the delivery job calls it.
type Deliverer struct {
	pool    *pgxpool.Pool
	mail    sysmail.Sender
	push    Pusher
	appURL  string
	queries *dbq.Queries
	now     func() time.Time
}

// NewDeliverer builds the sender side: emails go through sender, pushes through push, and relative links are
// made absolute under appURL (the web app) so they work from a mail client.
func NewDeliverer(pool *pgxpool.Pool, sender sysmail.Sender, push Pusher, appURL string) *Deliverer {
	return &Deliverer{pool: pool, mail: sender, push: push, appURL: strings.TrimRight(appURL, "/"),
		queries: dbq.New(), now: time.Now}
}

// Deliver sends everything due on one user's channel as one message (a single event as itself, several as a
// summary) and forgets it. A failed send leaves it queued for the job's retry. Anything that became due
// earlier and whose own job gave up rides along.
func (d *Deliverer) Deliver(ctx context.Context, args DeliverArgs) error {
	until := d.now()
	// The job runs at or after DueAt by River's clock; trusting that keeps a skewed local clock from leaving
	// the batch behind.
	if args.DueAt.After(until) {
		until = args.DueAt
	}
	return db.WithTx(ctx, d.pool, func(ctx context.Context, tx pgx.Tx) error {
		due, err := d.queries.NotificationDeliveryListDue(ctx, tx, dbq.NotificationDeliveryListDueParams{
			UserID: args.UserID, Channel: string(args.Channel), Until: until,
		})
		if err != nil {
			return fmt.Errorf("notify: load due %s: %w", args.Channel, err)
		}
		if len(due) == 0 {
			return nil
		}
		switch args.Channel {
		case ChannelEmail:
			err = d.sendEmail(ctx, tx, args.UserID, due)
		case ChannelPush:
			err = d.sendPush(ctx, tx, args.UserID, due)
		default:
			err = fmt.Errorf("notify: unknown channel %q", args.Channel)
		}
		if err != nil {
			return err
		}
		ids := make([]uuid.UUID, len(due))
		for i, r := range due {
			ids[i] = r.ID
		}
		return d.queries.NotificationDeliveryDelete(ctx, tx, ids)
	})
}

func (d *Deliverer) sendEmail(ctx context.Context, tx pgx.Tx, userID uuid.UUID, due []dbq.NotificationDelivery) error {
	user, err := d.queries.UserGetByID(ctx, tx, userID)
	if err != nil {
		return fmt.Errorf("notify: load recipient: %w", err)
	}
	m := emailOf(due, d.appURL)
	m.To = user.Email
	if err := d.mail.Send(ctx, m); err != nil {
		return fmt.Errorf("notify: send email: %w", err)
	}
	return nil
}

func (d *Deliverer) sendPush(ctx context.Context, tx pgx.Tx, userID uuid.UUID, due []dbq.NotificationDelivery) error {
	rows, err := d.queries.DeviceTokenListByUser(ctx, tx, userID)
	if err != nil {
		return fmt.Errorf("notify: list devices: %w", err)
	}
	if len(rows) == 0 {
		return nil // every device was unregistered meanwhile: nothing to push to
	}
	devices := make([]Device, len(rows))
	for i, r := range rows {
		devices[i] = Device{Token: r.Token, Environment: r.Environment}
	}
	if err := d.push.Push(ctx, devices, pushOf(due)); err != nil {
		return fmt.Errorf("notify: push: %w", err)
	}
	return nil
}

// summaryTitle heads a message that stands for several events.
func summaryTitle(n int) string { return fmt.Sprintf("%d new notifications", n) }

// emailOf writes the email for a batch (recipient left to the caller).
func emailOf(due []dbq.NotificationDelivery, appURL string) sysmail.Message {
	var b strings.Builder
	subject := due[0].Title
	if len(due) > 1 {
		subject = summaryTitle(len(due))
		fmt.Fprintf(&b, "%s since the last email:\n\n", subject)
	}
	for i, r := range due {
		if i > 0 {
			b.WriteString("\n")
		}
		if len(due) > 1 {
			b.WriteString(r.Title + "\n")
		}
		if r.Body != "" {
			b.WriteString(r.Body + "\n")
		}
		if r.Link != "" {
			b.WriteString(absolute(appURL, r.Link) + "\n")
		}
	}
	b.WriteString("\nYou receive this because of your notification preferences; change them in your account settings.\n")
	return sysmail.Message{Subject: subject, Text: b.String()}
}

// maxPushTitles is how many event titles a summary push lists before "and N more".
const maxPushTitles = 3

// pushOf writes the push for a batch.
func pushOf(due []dbq.NotificationDelivery) PushMessage {
	if len(due) == 1 {
		return PushMessage{Title: due[0].Title, Body: due[0].Body, Count: 1}
	}
	titles := make([]string, 0, maxPushTitles)
	for _, r := range due[:min(len(due), maxPushTitles)] {
		titles = append(titles, r.Title)
	}
	body := strings.Join(titles, "; ")
	if len(due) > maxPushTitles {
		body += fmt.Sprintf(" and %d more", len(due)-maxPushTitles)
	}
	return PushMessage{Title: summaryTitle(len(due)), Body: body, Count: len(due)}
}

// absolute makes an app path a full URL; absolute URLs pass through.
func absolute(appURL, link string) string {
	if strings.HasPrefix(link, "/") {
		return appURL + link
	}
	return link
}
