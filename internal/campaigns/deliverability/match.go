package deliverability

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/suppression"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/mail/dsn"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// Inbound records what a synced report says (m.Report: a bounce or a complaint) about the campaign send it
// returns, in the transaction that stores the message. A delay report, a report that matches no send of the
// organization, and a report that does not name the send's recipient as failed record nothing (see the package
// doc); a message without a report is not this function's.
func (r *Recorder) Inbound(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, m mailsync.Inbound) error {
	rep := m.Report
	if rep == nil || rep.Kind == dsn.KindDelay {
		return nil
	}
	match, rc, ok, err := MatchReport(ctx, tx, m.OrganizationID, *rep)
	if err != nil || !ok {
		return err
	}
	ev := Event{OrganizationID: m.OrganizationID, Kind: KindBounce, Source: SourceDSN, Recipient: match.Task.ToEmail,
		At: m.ReceivedAt, Provider: string(rep.Shape), InboundMessageID: uuid.NullUUID{UUID: m.ID, Valid: m.ID != uuid.Nil},
		Metadata: map[string]any{"report_from": rep.From, "report_subject": rep.Subject, "structured": rep.Structured}}
	if rep.Kind == dsn.KindComplaint {
		ev.Kind, ev.Source = KindComplaint, SourceARF
		if f := rep.Feedback; f != nil {
			ev.FeedbackType = f.Type
			ev.Metadata["user_agent"], ev.Metadata["source_ip"], ev.Metadata["reported_domain"] = f.UserAgent, f.SourceIP, f.ReportedDomain
			ev.Metadata["arrival_date"] = f.ArrivalDate
		}
	} else {
		ev.Bounce, ev.StatusCode, ev.SMTPCode, ev.Diagnostic, ev.Reason = rc.Severity, rc.Status, rc.SMTPCode, rc.Diagnostic, rc.Reason
		ev.Metadata["rule"], ev.Metadata["action"], ev.Metadata["remote_mta"] = rc.Rule, rc.Action, rc.RemoteMTA
	}
	_, err = r.Record(ctx, tx, outbox, match, ev)
	return err
}

// MatchReport finds the campaign send a report returns, in the organization: the send whose Message-ID the
// returned message carries (MatchedMessageID) or, when it carries none, the send its In-Reply-To and then its
// References name, newest first (MatchedOriginalHeaders). The send must have been handed over and the report
// must name its recipient; rc is what the report says of that recipient (for a complaint, only its address).
// ok is false when no send matches, or when a bounce report's entry for the recipient is a delay.
func MatchReport(ctx context.Context, tx pgx.Tx, org uuid.UUID, rep dsn.Report) (m Match, rc dsn.Recipient, ok bool, err error) {
	o := rep.Original
	ids, by := []string{o.MessageID}, MatchedMessageID
	if o.MessageID == "" {
		ids, by = []string{o.InReplyTo}, MatchedOriginalHeaders
		for i := len(o.References) - 1; i >= 0; i-- {
			ids = append(ids, o.References[i])
		}
	}
	for _, id := range ids {
		task, found, err := sendOf(ctx, tx, org, id)
		if err != nil || !found {
			if err != nil {
				return Match{}, dsn.Recipient{}, false, err
			}
			continue
		}
		if rc, named := recipientOf(rep, task.ToEmail); named {
			return MatchSend(task, by), rc, rep.Kind == dsn.KindComplaint || rc.Action == "failed", nil
		}
	}
	return Match{}, dsn.Recipient{}, false, nil
}

// sendOf reads the handed-over campaign send a Message-ID (without angle brackets) names, when it is one of
// the organization's: its local part is the send's id (sending.MessageID).
func sendOf(ctx context.Context, tx pgx.Tx, org uuid.UUID, messageID string) (dbq.SendTask, bool, error) {
	local, _, _ := strings.Cut(strings.Trim(messageID, "<> "), "@")
	id, err := uuid.Parse(local)
	if err != nil || len(local) != 36 {
		return dbq.SendTask{}, false, nil
	}
	t, err := queries.DeliverabilitySend(ctx, tx, dbq.DeliverabilitySendParams{OrganizationID: org, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return dbq.SendTask{}, false, nil
	}
	if err != nil {
		return dbq.SendTask{}, false, err
	}
	return t, t.Status == "sent" || t.Status == "ambiguous", nil
}

// recipientOf finds the report's entry for address: a recipient it names (final or original), or, when it
// names none, the returned message's To.
func recipientOf(rep dsn.Report, address string) (dsn.Recipient, bool) {
	address = strings.ToLower(address)
	for _, rc := range rep.Recipients {
		if strings.EqualFold(rc.Address, address) || strings.EqualFold(rc.OriginalAddress, address) {
			return rc, true
		}
	}
	if len(rep.Recipients) == 0 && slices.Contains(rep.Original.To, address) {
		return dsn.Recipient{Address: address}, true
	}
	return dsn.Recipient{}, false
}

// Hint is what an ingested event says about the mail it is about: the recipient, and optionally the send, the
// campaign and the contact (POST /v1/deliverability/events' recipient_email, task_id, campaign_id, contact_id).
type Hint struct {
	Email                         string
	TaskID, CampaignID, ContactID uuid.NullUUID
}

// MatchRecipient matches an ingested event to what it is about: the send it names (which must have been
// attempted, to the recipient, in the campaign and to the contact it names if any), else the contact's newest send of the campaign it names, else
// only the recipient's contact and the campaign (no lead moves; the address is still suppressed). Without a
// send or a campaign the event is about the address alone. An id that is not the organization's is 404 and a
// send or contact of another address is 400, each naming the field.
func MatchRecipient(ctx context.Context, tx pgx.Tx, org uuid.UUID, h Hint) (Match, error) {
	kind, email, ok := suppression.Normalize(h.Email)
	if !ok || kind != suppression.KindEmail {
		return Match{}, apierror.BadRequest("invalid_recipient_email", "recipient_email must be one email address.")
	}
	if h.TaskID.Valid {
		t, err := queries.DeliverabilitySend(ctx, tx, dbq.DeliverabilitySendParams{OrganizationID: org, ID: h.TaskID.UUID})
		if errors.Is(err, pgx.ErrNoRows) {
			return Match{}, apierror.NotFound("task_not_found", "task_id names no campaign send of this organization.")
		}
		if err != nil {
			return Match{}, err
		}
		switch {
		case t.Status != "sent" && t.Status != "ambiguous" && t.Status != "failed":
			return Match{}, apierror.BadRequest("task_not_sent", "task_id names a send that has not been attempted yet.")
		case !strings.EqualFold(t.ToEmail, email):
			return Match{}, apierror.BadRequest("task_recipient_mismatch", "task_id names a send to another address than recipient_email.")
		case h.CampaignID.Valid && t.CampaignID != h.CampaignID:
			return Match{}, apierror.BadRequest("task_campaign_mismatch", "task_id names a send of another campaign than campaign_id.")
		case h.ContactID.Valid && t.ContactID != h.ContactID:
			return Match{}, apierror.BadRequest("task_contact_mismatch", "task_id names a send to another contact than contact_id.")
		}
		return MatchSend(t, MatchedIngest), nil
	}
	m := Match{By: MatchedIngest}
	if h.CampaignID.Valid {
		if _, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: org, ID: h.CampaignID.UUID}); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return Match{}, campaign.NotFound()
			}
			return Match{}, err
		}
		m.CampaignID = h.CampaignID
	}
	switch {
	case h.ContactID.Valid:
		stored, err := queries.DeliverabilityContactEmail(ctx, tx, dbq.DeliverabilityContactEmailParams{OrganizationID: org, ID: h.ContactID.UUID})
		if errors.Is(err, pgx.ErrNoRows) {
			return Match{}, apierror.NotFound("contact_not_found", "contact_id names no contact of this organization.")
		}
		if err != nil {
			return Match{}, err
		}
		if !strings.EqualFold(stored, email) {
			return Match{}, apierror.BadRequest("contact_recipient_mismatch", "contact_id names a contact with another address than recipient_email.")
		}
		m.ContactID = h.ContactID
	default:
		id, err := queries.ContactIDByEmail(ctx, tx, dbq.ContactIDByEmailParams{OrganizationID: org, Email: email})
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return Match{}, err
		}
		m.ContactID = uuid.NullUUID{UUID: id, Valid: err == nil}
	}
	if !m.CampaignID.Valid || !m.ContactID.Valid {
		return m, nil
	}
	t, err := queries.DeliverabilityLatestSend(ctx, tx, dbq.DeliverabilityLatestSendParams{OrganizationID: org,
		ContactID: m.ContactID.UUID, Email: email, CampaignID: m.CampaignID.UUID})
	if errors.Is(err, pgx.ErrNoRows) {
		return m, nil
	}
	if err != nil {
		return Match{}, err
	}
	return MatchSend(t, MatchedIngest), nil
}
