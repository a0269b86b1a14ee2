package unsubscribe

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/rollup"
	"github.com/outflowhq/outflow/internal/audience/suppression"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

var queries = dbq.New()

// Source is how a recipient unsubscribed through the unsubscribe link, as campaign.unsubscribed and the
// deliverability record name it.
type Source string

// The sources this package records.
const (
	// SourceOneClick is a mailbox provider's RFC 8058 request (List-Unsubscribe=One-Click).
	SourceOneClick Source = "one_click"
	// SourceLink is any other POST to the link: the unsubscribe page's confirm form.
	SourceLink Source = "link"
	// SourceAction is an unsubscribe a provider or an integration reported (POST /v1/deliverability/events).
	SourceAction Source = "action"
	// SourceReply is a reply that asked to be unsubscribed (the inbox's classifier read the request), when
	// the campaign's reply_intent block acts on it (auto_suppress_on_unsubscribe_keyword).
	SourceReply Source = "reply"
)

// Recipient is who an unsubscribe link belongs to, as its page names them.
type Recipient struct {
	// Email is the address the message went to.
	Email string
	// Sender is who the message came from: the sending mailbox's name, else its address.
	Sender string
}

// Result is what an unsubscribe request did.
type Result struct {
	Recipient
	// Repeat says the request found its unsubscribe done already and changed nothing.
	Repeat bool
	// Suppressed says the address was suppressed by this request.
	Suppressed bool
	// Cancelled are the queued sends the request cancelled.
	Cancelled []uuid.UUID
}

// Service applies unsubscribe requests for the tracking endpoints.
type Service struct {
	pool   *pgxpool.Pool
	signer *tracking.Signer
	outbox *events.Outbox
	now    func() time.Time
}

// New builds the service over the application pool, verifying tokens with the deployment's signer (the one
// that signed them, so links in mail sent before a key rotation keep working) and emitting events through
// outbox.
func New(pool *pgxpool.Pool, signer *tracking.Signer, outbox *events.Outbox) *Service {
	return &Service{pool: pool, signer: signer, outbox: outbox, now: time.Now}
}

// LinkNotFound is the answer to every token that is not honoured: forged, altered, of another kind, of
// another deployment, or naming no campaign send.
func LinkNotFound() error {
	return apierror.NotFound("unsubscribe_link_not_found",
		"This unsubscribe link is not valid: it may have been cut short or altered. Open it from the original email again.")
}

// Recipient reads who the token's link belongs to, for the unsubscribe page; it changes nothing.
func (s *Service) Recipient(ctx context.Context, token string) (Recipient, error) {
	tok, err := s.signer.Parse(token, tracking.KindUnsubscribe)
	if err != nil {
		return Recipient{}, LinkNotFound()
	}
	var out Recipient
	err = db.WithOrgTx(ctx, s.pool, tok.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		t, err := queries.UnsubscribeTask(ctx, tx, dbq.UnsubscribeTaskParams{OrganizationID: tok.OrganizationID, ID: tok.TaskID})
		if errors.Is(err, pgx.ErrNoRows) {
			return LinkNotFound()
		}
		if err != nil {
			return err
		}
		out = recipientOf(dbq.UnsubscribeTaskLockRow(t))
		return nil
	})
	return out, err
}

// Unsubscribe applies the token's unsubscribe, from source, in one transaction (see the package doc). A
// transaction that lost a deadlock is 503 retry, and changed nothing.
func (s *Service) Unsubscribe(ctx context.Context, token string, source Source) (Result, error) {
	tok, err := s.signer.Parse(token, tracking.KindUnsubscribe)
	if err != nil {
		return Result{}, LinkNotFound()
	}
	var out Result
	err = db.WithOrgTx(ctx, s.pool, tok.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		out, err = s.apply(ctx, tx, tok.OrganizationID, tok.TaskID, request{source: source, matchedBy: MatchedToken})
		return err
	})
	// A deadlock with a concurrent change to the same leads (a reply settling at that moment) is a 503 the
	// caller may retry; providers retry one-click requests.
	return out, db.Classify(err, "The unsubscribe")
}

// How an unsubscribe was matched to its send (the deliverability record's matched_by).
const (
	// MatchedToken: the signed token of the link, or the reply that names the send (In-Reply-To, References).
	MatchedToken = "token"
	// MatchedAddress: a request that answers no send, taken for the newest campaign send to its sender.
	MatchedAddress = "address"
)

// request is how an unsubscribe of one send came: its source, how it was matched to the send, the inbound
// message that asked for it (if any), and whether a contact unsubscribed already makes it a repeat whatever
// send its earlier unsubscribe named (a request that names no send of its own).
type request struct {
	source    Source
	matchedBy string
	inbound   uuid.NullUUID
	anySend   bool
}

// apply is Unsubscribe inside the organization's transaction.
func (s *Service) apply(ctx context.Context, tx pgx.Tx, org, taskID uuid.UUID, req request) (Result, error) {
	source := req.source
	t, err := queries.UnsubscribeTaskLock(ctx, tx, dbq.UnsubscribeTaskLockParams{OrganizationID: org, ID: taskID})
	if errors.Is(err, pgx.ErrNoRows) {
		return Result{}, LinkNotFound()
	}
	if err != nil {
		return Result{}, err
	}
	out := Result{Recipient: recipientOf(t)}
	contact, subscribed := t.ContactID, false
	if contact.Valid {
		subscribed, err = queries.UnsubscribeContact(ctx, tx, dbq.UnsubscribeContactParams{OrganizationID: org, ID: contact.UUID})
		if errors.Is(err, pgx.ErrNoRows) {
			contact = uuid.NullUUID{}
		} else if err != nil {
			return out, err
		}
	}
	recorded, err := queries.UnsubscribeRecorded(ctx, tx, dbq.UnsubscribeRecordedParams{OrganizationID: org,
		CampaignID: t.CampaignID, TaskID: uuid.NullUUID{UUID: t.ID, Valid: true}})
	if err != nil {
		return out, err
	}
	if (recorded || req.anySend && contact.Valid) && !subscribed {
		out.Repeat = true
		return out, nil
	}
	at := s.now()
	if contact.Valid {
		if err := queries.ContactSubscribeMany(ctx, tx, dbq.ContactSubscribeManyParams{OrganizationID: org,
			Ids: []uuid.UUID{contact.UUID}, Subscribed: false}); err != nil {
			return out, err
		}
		stopped, err := engine.Unsubscribed(ctx, tx, s.outbox, engine.Unsubscription{OrganizationID: org,
			ContactID: contact.UUID, Email: t.ToEmail, Source: string(source), At: at})
		if err != nil {
			return out, err
		}
		out.Cancelled = stopped.Cancelled
	}
	if out.Suppressed, err = suppress(ctx, tx, org, t.CampaignID, t.ToEmail); err != nil {
		return out, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return out, err
	}
	if err := queries.UnsubscribeEventInsert(ctx, tx, dbq.UnsubscribeEventInsertParams{OrganizationID: org, ID: id,
		Source: string(source), At: at, RecipientEmail: t.ToEmail, ContactID: contact, CampaignID: t.CampaignID,
		TaskID: uuid.NullUUID{UUID: t.ID, Valid: true}, MailboxID: t.MailboxID, MatchedBy: req.matchedBy,
		Reason: reasons[source], InboundMessageID: req.inbound}); err != nil {
		return out, err
	}
	if err := rollup.Events(ctx, tx, org, id); err != nil {
		return out, err
	}
	data := map[string]any{"campaign_id": t.CampaignID.UUID, "contact_email": t.ToEmail, "source": source}
	if contact.Valid {
		data["contact_id"] = contact.UUID
	}
	_, err = s.outbox.Emit(ctx, tx, events.CampaignUnsubscribed, data)
	return out, err
}

// ByReply applies an unsubscribe a reply to the campaign send taskID asked for, in the caller's transaction
// (the one storing the reply): the same effects as the link's (contact unsubscribed, its leads stopped with
// their queued sends cancelled, the address suppressed as the campaign's bounce_pipeline says, the
// deliverability record), with campaign.unsubscribed saying source reply. A send whose unsubscribe is done
// already changes nothing (Result.Repeat).
func (s *Service) ByReply(ctx context.Context, tx pgx.Tx, org, taskID uuid.UUID) (Result, error) {
	return s.apply(ctx, tx, org, taskID, request{source: SourceReply, matchedBy: MatchedToken})
}

// LatestSend answers the campaign send an unsubscribe request that answers no send is taken for (a mail
// client's message to the mailto of our List-Unsubscribe header, a new email asking to be removed): the
// newest campaign send to a contact of the organization with the sender's address, one from the mailbox the
// request reached first. ok is false when the organization never sent a campaign message to the address.
func (s *Service) LatestSend(ctx context.Context, tx pgx.Tx, org, mailbox uuid.UUID, email string) (task, campaignID uuid.UUID, ok bool, err error) {
	row, err := queries.UnsubscribeLatestSend(ctx, tx, dbq.UnsubscribeLatestSendParams{OrganizationID: org, Email: email,
		MailboxID: mailbox})
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, uuid.Nil, false, nil
	}
	if err != nil {
		return uuid.Nil, uuid.Nil, false, err
	}
	return row.ID, row.CampaignID.UUID, true, nil
}

// ByAddress applies an unsubscribe request that answers no send, taken for the send taskID (see
// LatestSend), in the caller's transaction (the one storing the request, inbound): the effects of ByReply,
// with the deliverability record matched_by address and naming the inbound message. A contact unsubscribed
// already (by any send's link or reply) changes nothing (Result.Repeat): the same request stored again from
// another folder, or a second one, raises nothing.
func (s *Service) ByAddress(ctx context.Context, tx pgx.Tx, org, taskID, inbound uuid.UUID) (Result, error) {
	return s.apply(ctx, tx, org, taskID, request{source: SourceReply, matchedBy: MatchedAddress,
		inbound: uuid.NullUUID{UUID: inbound, Valid: true}, anySend: true})
}

// Reported is an unsubscribe a provider or an integration reported about an address, in the caller's
// transaction (which recorded the report): the contact, when there is one, is unsubscribed and its leads stop
// with their queued sends cancelled; the address is suppressed as the named campaign's bounce_pipeline says
// (the defaults, which do, without one); campaign.unsubscribed says source action. A contact already
// unsubscribed is unsubscribed again all the same: the report is new, and it may name a campaign the earlier
// one did not.
func (s *Service) Reported(ctx context.Context, tx pgx.Tx, org uuid.UUID, contact, campaignID uuid.NullUUID, email string) (Result, error) {
	out := Result{Recipient: Recipient{Email: email}}
	if contact.Valid {
		if err := queries.ContactSubscribeMany(ctx, tx, dbq.ContactSubscribeManyParams{OrganizationID: org,
			Ids: []uuid.UUID{contact.UUID}, Subscribed: false}); err != nil {
			return out, err
		}
		stopped, err := engine.Unsubscribed(ctx, tx, s.outbox, engine.Unsubscription{OrganizationID: org,
			ContactID: contact.UUID, Email: email, Source: string(SourceAction), At: s.now()})
		if err != nil {
			return out, err
		}
		out.Cancelled = stopped.Cancelled
	}
	var err error
	if out.Suppressed, err = suppress(ctx, tx, org, campaignID, email); err != nil {
		return out, err
	}
	data := map[string]any{"campaign_id": nil, "contact_email": email, "source": SourceAction}
	if campaignID.Valid {
		data["campaign_id"] = campaignID.UUID
	}
	if contact.Valid {
		data["contact_id"] = contact.UUID
	}
	_, err = s.outbox.Emit(ctx, tx, events.CampaignUnsubscribed, data)
	return out, err
}

// reasons say how each source unsubscribed, for the deliverability record.
var reasons = map[Source]string{
	SourceOneClick: "The recipient's mailbox provider sent a one-click unsubscribe request (RFC 8058).",
	SourceLink:     "The recipient confirmed on the unsubscribe page.",
	SourceReply:    "The recipient asked to be unsubscribed in a reply.",
}

// suppress suppresses the send's address when its campaign's bounce_pipeline says so (enabled, with
// auto_suppress_on_unsubscribe; a deleted campaign's send takes the defaults, which do) and answers whether
// it wrote the entry (an entry in force for good is kept as it is).
func suppress(ctx context.Context, tx pgx.Tx, org uuid.UUID, campaignID uuid.NullUUID, email string) (bool, error) {
	ov := campaign.DefaultOverrides()
	row, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: org, ID: campaignID.UUID})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return false, err
	default:
		if ov, err = campaign.Advanced(campaign.Campaign{Campaign: row}); err != nil {
			return false, err
		}
	}
	b := ov.BouncePipeline
	kind, value, ok := suppression.Normalize(email)
	if !b.Enabled || !b.AutoSuppressOnUnsubscribe || !ok || kind != suppression.KindEmail {
		return false, nil
	}
	return suppression.Record(ctx, tx, org, value, "unsubscribe", "The recipient unsubscribed.", campaignID)
}

// recipientOf is the page's view of a send.
func recipientOf(t dbq.UnsubscribeTaskLockRow) Recipient {
	sender := t.FromName
	if sender == "" {
		sender = t.FromEmail
	}
	return Recipient{Email: t.ToEmail, Sender: sender}
}
