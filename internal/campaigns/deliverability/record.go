package deliverability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/rollup"
	"github.com/outflowhq/outflow/internal/audience/suppression"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/mail/dsn"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

var queries = dbq.New()

// Recorder records bounces and complaints and applies what follows from them; see the package doc. It holds no
// state of its own, so the engine's and a handler's recorders behave as one.
type Recorder struct {
	leads Leads
	now   func() time.Time
}

// New builds a recorder that moves leads through leads (the sequence engine) on the clock now (nil: time.Now;
// the engine gives its own, so simulations judge rates on simulated time).
func New(leads Leads, now func() time.Time) *Recorder {
	if now == nil {
		now = time.Now
	}
	return &Recorder{leads: leads, now: now}
}

// Outcome is what Record did.
type Outcome struct {
	// ID is the recorded event's id; uuid.Nil when Duplicate.
	ID uuid.UUID
	// Duplicate says an event with the same idempotency key was recorded before, so nothing was done.
	Duplicate bool
	// Applied says the event's effects applied: it is the first of its kind recorded about its send (or it is
	// about no send). A later one is kept as evidence only.
	Applied bool
	// Suppressed says the address was suppressed by this event (it was not already).
	Suppressed bool
}

// Record records one bounce or complaint about what m matched, in tx, and applies its effects: the send's
// bounced_at, its lead (Leads), the address's suppression, the events, the notification and the campaign's
// rate judgement (see the package doc). An invalid event is refused with a 400 naming the field.
func (r *Recorder) Record(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, m Match, ev Event) (Outcome, error) {
	if ev.Kind != KindBounce && ev.Kind != KindComplaint {
		return Outcome{}, fmt.Errorf("deliverability: Record takes bounces and complaints, not %q", ev.Kind)
	}
	now := r.now()
	ev, err := ev.checked(m, now)
	if err != nil {
		return Outcome{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Outcome{}, err
	}
	if n, err := insert(ctx, tx, id, m, ev); err != nil || n == 0 {
		return Outcome{Duplicate: n == 0 && err == nil}, err
	}
	out := Outcome{ID: id}
	if out.Applied, err = first(ctx, tx, m, ev); err != nil || !out.Applied {
		return counted(ctx, tx, ev.OrganizationID, id, out, err)
	}
	var row *dbq.Campaign
	if m.CampaignID.Valid {
		c, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: ev.OrganizationID, ID: m.CampaignID.UUID})
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return out, err
		default:
			row = &c
		}
	}
	block := campaign.DefaultOverrides().BouncePipeline
	if row != nil {
		ov, err := campaign.Advanced(campaign.Campaign{Campaign: *row})
		if err != nil {
			return out, err
		}
		block = ov.BouncePipeline
	}
	e := effects{r: r, tx: tx, outbox: outbox, m: m, ev: ev, id: id, row: row, block: block, now: now}
	if ev.Kind == KindBounce {
		out.Suppressed, err = e.bounce(ctx)
	} else {
		out.Suppressed, err = e.complaint(ctx)
	}
	return counted(ctx, tx, ev.OrganizationID, id, out, err)
}

// Note records an ingested event of a kind whose effects belong to another path (KindUnsubscribe, KindOpen,
// KindClick, KindReply): its row, with what the provider said, and nothing else. Duplicate says its
// idempotency key was recorded before, so the caller applies nothing either.
func (r *Recorder) Note(ctx context.Context, tx pgx.Tx, m Match, ev Event) (Outcome, error) {
	if ev.Kind == KindBounce || ev.Kind == KindComplaint {
		return Outcome{}, fmt.Errorf("deliverability: a %s is recorded with its effects (Record)", ev.Kind)
	}
	ev, err := ev.checked(m, r.now())
	if err != nil {
		return Outcome{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Outcome{}, err
	}
	n, err := insert(ctx, tx, id, m, ev)
	if err != nil || n == 0 {
		return Outcome{Duplicate: n == 0 && err == nil}, err
	}
	return counted(ctx, tx, ev.OrganizationID, id, Outcome{ID: id, Applied: true}, nil)
}

// insert writes the event's row; 0 when its idempotency key was recorded before.
func insert(ctx context.Context, tx pgx.Tx, id uuid.UUID, m Match, ev Event) (int64, error) {
	meta, err := json.Marshal(ev.Metadata)
	if err != nil {
		return 0, err
	}
	if ev.Metadata == nil {
		meta = []byte("{}")
	}
	p := dbq.DeliverabilityEventInsertParams{OrganizationID: ev.OrganizationID, ID: id, EventType: string(ev.Kind),
		Source: string(ev.Source), At: ev.At, RecipientEmail: ev.Recipient, ContactID: m.ContactID, CampaignID: m.CampaignID,
		Provider: ev.Provider, Reason: ev.Reason, StatusCode: ev.StatusCode, Diagnostic: ev.Diagnostic,
		FeedbackType: ev.FeedbackType, MatchedBy: m.By, InboundMessageID: ev.InboundMessageID, Metadata: meta}
	if m.Task != nil {
		p.TaskID, p.MailboxID = uuid.NullUUID{UUID: m.Task.ID, Valid: true}, m.Task.MailboxID
	}
	if ev.Bounce != "" {
		b := string(ev.Bounce)
		p.BounceType = &b
	}
	if ev.SMTPCode != 0 {
		c := int32(ev.SMTPCode)
		p.SmtpCode = &c
	}
	if ev.IdempotencyKey != "" {
		p.IdempotencyKey = &ev.IdempotencyKey
	}
	return queries.DeliverabilityEventInsert(ctx, tx, p)
}

// counted adds a recorded event to the analytics rollups: the last write of its transaction, once its effects
// hold the leads and campaigns they lock (as the send pipeline orders them), so the rollup rows shared by the
// organization's day are never held while waiting for those.
func counted(ctx context.Context, tx pgx.Tx, org, id uuid.UUID, out Outcome, err error) (Outcome, error) {
	if err != nil {
		return out, err
	}
	return out, rollup.Events(ctx, tx, org, id)
}

// first reports whether the event just recorded is the first of its kind about its send (always, about none).
func first(ctx context.Context, tx pgx.Tx, m Match, ev Event) (bool, error) {
	if m.Task == nil {
		return true, nil
	}
	var bounce *string
	if ev.Bounce != "" {
		b := string(ev.Bounce)
		bounce = &b
	}
	n, err := queries.DeliverabilityTaskEvents(ctx, tx, dbq.DeliverabilityTaskEventsParams{OrganizationID: ev.OrganizationID,
		ContactID: m.Task.ContactID.UUID, CampaignID: m.Task.CampaignID.UUID, TaskID: m.Task.ID, EventType: string(ev.Kind),
		BounceType: bounce})
	return n == 1, err
}

// effects is one recorded event's effects being applied.
type effects struct {
	r      *Recorder
	tx     pgx.Tx
	outbox *events.Outbox
	m      Match
	ev     Event
	id     uuid.UUID
	// row is the campaign the event is about, when it names one that still exists; block is its bounce_pipeline
	// block (the defaults without a campaign).
	row   *dbq.Campaign
	block campaign.BouncePipeline
	now   time.Time
}

// bounce applies a bounce; see the package doc. It answers whether the address was suppressed.
func (e *effects) bounce(ctx context.Context) (bool, error) {
	hard := e.ev.Bounce == dsn.Hard
	t := e.m.Task
	if hard && t != nil {
		if err := queries.DeliverabilityTaskBounced(ctx, e.tx, dbq.DeliverabilityTaskBouncedParams{OrganizationID: t.OrganizationID,
			ID: t.ID, At: e.ev.At}); err != nil {
			return false, err
		}
	}
	if t != nil && e.row != nil && e.ev.Source != SourcePipeline {
		if err := e.r.leads.Bounced(ctx, e.tx, e.outbox, *t, e.ev); err != nil {
			return false, err
		}
	}
	suppressed := false
	if hard && e.block.Enabled && e.block.AutoSuppressOnBounce {
		var err error
		if suppressed, err = e.suppress(ctx, "bounce", "Hard bounce: "+e.ev.Evidence()); err != nil {
			return false, err
		}
	}
	data := e.payload()
	data["bounce_type"], data["status_code"], data["smtp_code"], data["diagnostic"] = e.ev.Bounce, e.ev.StatusCode, e.smtp(), e.ev.Diagnostic
	if _, err := e.outbox.Emit(ctx, e.tx, events.DeliverabilityBounce, data); err != nil {
		return false, err
	}
	if t != nil && e.row != nil {
		code := "bounced"
		if e.ev.Source == SourcePipeline {
			code = "recipient_rejected"
		}
		if _, err := e.outbox.Emit(ctx, e.tx, events.CampaignEmailBounced, e.sendPayload(map[string]any{
			"bounce_type": e.ev.Bounce, "error_code": code, "error_message": e.ev.Evidence(), "status_code": e.ev.StatusCode,
			"diagnostic": e.ev.Diagnostic, "reason": e.ev.Reason, "source": e.ev.Source})); err != nil {
			return false, err
		}
	}
	if !hard {
		return suppressed, nil
	}
	if err := e.notify(ctx, notify.HealthBounce, "Hard bounce: "+e.ev.Recipient, e.story("bounced", suppressed)); err != nil {
		return false, err
	}
	return suppressed, e.judge(ctx, bounceRate)
}

// complaint applies a complaint; see the package doc. It answers whether the address was suppressed.
func (e *effects) complaint(ctx context.Context) (bool, error) {
	if t := e.m.Task; t != nil && e.row != nil {
		if err := e.r.leads.Complained(ctx, e.tx, e.outbox, *t, e.ev); err != nil {
			return false, err
		}
	}
	suppressed := false
	if e.block.Enabled && e.block.AutoSuppressOnComplaint {
		var err error
		if suppressed, err = e.suppress(ctx, "complaint", "Spam complaint: "+e.ev.Evidence()); err != nil {
			return false, err
		}
	}
	data := e.payload()
	data["feedback_type"] = e.ev.FeedbackType
	if _, err := e.outbox.Emit(ctx, e.tx, events.DeliverabilityComplaint, data); err != nil {
		return false, err
	}
	if err := e.notify(ctx, notify.HealthComplaint, "Spam complaint: "+e.ev.Recipient, e.story("was reported as spam", suppressed)); err != nil {
		return false, err
	}
	return suppressed, e.judge(ctx, complaintRate)
}

// suppress suppresses the address with source (bounce or complaint); false when it was suppressed already.
func (e *effects) suppress(ctx context.Context, source, reason string) (bool, error) {
	return suppression.Record(ctx, e.tx, e.ev.OrganizationID, e.ev.Recipient, source, truncate.Chars(reason, 500), e.m.CampaignID)
}

// payload is the data of deliverability.bounce and deliverability.complaint.
func (e *effects) payload() map[string]any {
	out := map[string]any{"event_id": e.id, "email": e.ev.Recipient, "source": e.ev.Source, "matched_by": e.m.By,
		"provider": e.ev.Provider, "reason": e.ev.Reason, "at": e.ev.At, "task_id": nil, "campaign_id": nil,
		"contact_id": nil, "mailbox_id": nil}
	if e.m.CampaignID.Valid {
		out["campaign_id"] = e.m.CampaignID.UUID
	}
	if e.m.ContactID.Valid {
		out["contact_id"] = e.m.ContactID.UUID
	}
	if t := e.m.Task; t != nil {
		out["task_id"] = t.ID
		if t.MailboxID.Valid {
			out["mailbox_id"] = t.MailboxID.UUID
		}
	}
	return out
}

// sendPayload is the data of a campaign send's event (the shape campaign.email_sent has) with extra.
func (e *effects) sendPayload(extra map[string]any) map[string]any {
	return campaign.SendEventData(*e.row, *e.m.Task, extra)
}

// smtp is the SMTP code for an event's data: null when none was given.
func (e *effects) smtp() any {
	if e.ev.SMTPCode == 0 {
		return nil
	}
	return e.ev.SMTPCode
}

// story is a notification's body: which mail, what happened to it, what the server or provider said, and
// whether the address is suppressed now.
func (e *effects) story(what string, suppressed bool) string {
	s := "Mail to " + e.ev.Recipient
	if e.row != nil {
		s = fmt.Sprintf("A message of the campaign %q to %s", e.row.Name, e.ev.Recipient)
	}
	s += " " + what + ": " + e.ev.Evidence() + "."
	if suppressed {
		s += " The address is suppressed."
	}
	return s
}

// notify tells the campaign's owners (the organization's owners and admins without a campaign) of the event.
func (e *effects) notify(ctx context.Context, category notify.Category, title, body string) error {
	owner, link := uuid.NullUUID{}, ""
	if e.row != nil {
		owner, link = e.row.UserID, "/campaigns/"+e.row.ID.String()
	} else if e.m.ContactID.Valid {
		link = "/contacts/" + e.m.ContactID.UUID.String()
	}
	users, err := campaign.Owners(ctx, e.tx, e.ev.OrganizationID, owner)
	if err != nil {
		return err
	}
	n := notify.NewNotifier(e.outbox.Jobs())
	for _, u := range users {
		if err := n.NotifyTx(ctx, e.tx, notify.Event{UserID: u, OrganizationID: e.ev.OrganizationID, Category: category,
			Title: truncate.Chars(title, 200), Body: truncate.Chars(body, 2000), Link: link}); err != nil {
			return err
		}
	}
	return nil
}
