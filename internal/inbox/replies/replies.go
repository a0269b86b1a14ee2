package replies

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/analytics/rollup"
	"github.com/outflowhq/outflow/internal/campaigns/campaign"
	"github.com/outflowhq/outflow/internal/campaigns/engine"
	"github.com/outflowhq/outflow/internal/campaigns/unsubscribe"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/notify"
	"github.com/outflowhq/outflow/internal/inbox/classify"
	"github.com/outflowhq/outflow/internal/mail/mailsync"
	"github.com/outflowhq/outflow/internal/platform/truncate"
)

var queries = dbq.New()

// Task is a reply a CRM task is asked for: the campaign send it answers and what it means.
type Task struct {
	OrganizationID, CampaignID, ContactID, SendTaskID uuid.UUID
	// MessageID is the stored reply (inbox_messages.id).
	MessageID       uuid.UUID
	FromEmail       string
	Subject, Intent string
}

// CRMTasks creates a CRM task for a reply (reply_intent auto_create_crm_task, for its crm_task_intents) in the
// transaction that stores it. No CRM exists yet: a nil CRMTasks means the CRM is off.
type CRMTasks interface {
	CreateForReply(ctx context.Context, tx pgx.Tx, t Task) error
}

// Hook applies inbound messages; see the package doc.
type Hook struct {
	engine     *engine.Engine
	unsub      *unsubscribe.Service
	classifier classify.Classifier
	crm        CRMTasks
	now        func() time.Time
}

// New builds the hook over the campaign engine and the unsubscribe service, judging with classifier and
// creating CRM tasks through crm (nil: CRM off).
func New(e *engine.Engine, unsub *unsubscribe.Service, classifier classify.Classifier, crm CRMTasks) *Hook {
	return &Hook{engine: e, unsub: unsub, classifier: classifier, crm: crm, now: time.Now}
}

// Inbound is the mailsync.InboundHook.
func (h *Hook) Inbound(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, m mailsync.Inbound) error {
	now := h.now()
	msg := classify.Message{Headers: m.Headers, From: m.FromEmail, FromName: m.FromName, Subject: m.Subject,
		Text: m.Text, HTML: m.HTML, Report: m.Report, Received: m.ReceivedAt}
	base := h.classifier.Classify(msg, classify.Keywords{}, now)
	judge := func(ri campaign.ReplyIntent) engine.Verdict {
		v := base
		if ri.Enabled && len(ri.PositiveKeywords)+len(ri.NegativeKeywords)+len(ri.OutOfOfficeKeywords)+len(ri.QuestionKeywords) > 0 {
			v = h.classifier.Classify(msg, classify.Keywords{Positive: ri.PositiveKeywords, Negative: ri.NegativeKeywords,
				OutOfOffice: ri.OutOfOfficeKeywords, Question: ri.QuestionKeywords}, now)
		}
		return engine.Verdict{Intent: string(v.Intent), Confidence: v.Confidence, Evidence: v.Evidence,
			ReturnDate: v.ReturnDate, Unsubscribe: v.Unsubscribe}
	}
	matches, err := h.engine.Answered(ctx, tx, outbox, m, judge)
	if err != nil {
		return err
	}
	final := judge(campaign.ReplyIntent{})
	var match *engine.Match
	if len(matches) > 0 {
		match = &matches[0]
		final = match.Verdict
	}
	if err := store(ctx, tx, m, final, base.Engine, now, match); err != nil {
		return err
	}
	for _, x := range matches {
		if err := h.effects(ctx, tx, m, x); err != nil {
			return err
		}
	}
	if len(matches) == 0 && m.Report == nil && base.Unsubscribe {
		if err := h.unmatched(ctx, tx, m); err != nil {
			return err
		}
	}
	if m.Report == nil {
		if err := h.announce(ctx, tx, outbox, m, final, match); err != nil {
			return err
		}
	}
	// The intent is counted last, once the leads and campaigns its effects touch are locked (as the send
	// pipeline orders them), so the rollup rows are never held while waiting for those.
	return rollup.Intents(ctx, tx, m.OrganizationID, m.ID)
}

// store writes the verdict and the match onto the message's row.
func store(ctx context.Context, tx pgx.Tx, m mailsync.Inbound, v engine.Verdict, classifier string, now time.Time, match *engine.Match) error {
	ev, err := json.Marshal(v.Evidence)
	if err != nil {
		return err
	}
	p := dbq.InboxMessageVerdictSetParams{OrganizationID: m.OrganizationID, ID: m.ID, Intent: v.Intent,
		Confidence: float32(v.Confidence), Evidence: ev, Unsubscribe: v.Unsubscribe, ReturnDate: v.ReturnDate,
		Classifier: classifier, ClassifiedAt: &now}
	if match != nil {
		p.SendTaskID = uuid.NullUUID{UUID: match.Task.ID, Valid: true}
		p.CampaignID, p.ContactID = match.Task.CampaignID, match.Task.ContactID
	}
	return queries.InboxMessageVerdictSet(ctx, tx, p)
}

// effects applies what the campaign's reply_intent block asks beyond the lead's flow: an unsubscribe by reply
// (auto_suppress_on_unsubscribe_keyword) and a CRM task (auto_create_crm_task for crm_task_intents). A
// disabled block asks neither.
func (h *Hook) effects(ctx context.Context, tx pgx.Tx, m mailsync.Inbound, x engine.Match) error {
	ri := x.ReplyIntent
	if !ri.Enabled {
		return nil
	}
	if x.Verdict.Unsubscribe && ri.AutoSuppressOnUnsubscribeKeyword {
		if _, err := h.unsub.ByReply(ctx, tx, m.OrganizationID, x.Task.ID); err != nil {
			return err
		}
	}
	if h.crm != nil && ri.AutoCreateCRMTask && slices.Contains(ri.CRMTaskIntents, x.Verdict.Intent) {
		return h.crm.CreateForReply(ctx, tx, Task{OrganizationID: m.OrganizationID, CampaignID: x.Campaign.ID,
			ContactID: x.Task.ContactID.UUID, SendTaskID: x.Task.ID, MessageID: m.ID, FromEmail: m.FromEmail,
			Subject: m.Subject, Intent: x.Verdict.Intent})
	}
	return nil
}

// unmatched applies an unsubscribe request that answers no campaign send (a mail client's message to the
// mailto of our List-Unsubscribe header names no Message-ID): taken for the newest campaign send to its
// sender (unsubscribe.LatestSend), it unsubscribes as a reply to that send would (unsubscribe.ByAddress) when
// that send's campaign acts on unsubscribe requests by reply (reply_intent enabled with
// auto_suppress_on_unsubscribe_keyword; a deleted campaign's send takes the defaults, which do). An address
// the organization never sent a campaign message to is left alone.
func (h *Hook) unmatched(ctx context.Context, tx pgx.Tx, m mailsync.Inbound) error {
	if m.FromEmail == "" {
		return nil
	}
	task, campaignID, ok, err := h.unsub.LatestSend(ctx, tx, m.OrganizationID, m.MailboxID, m.FromEmail)
	if err != nil || !ok {
		return err
	}
	ri := campaign.DefaultOverrides().ReplyIntent
	row, err := queries.CampaignGet(ctx, tx, dbq.CampaignGetParams{OrganizationID: m.OrganizationID, ID: campaignID})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return err
	default:
		ov, err := campaign.Advanced(campaign.Campaign{Campaign: row})
		if err != nil {
			return err
		}
		ri = ov.ReplyIntent
	}
	if !ri.Enabled || !ri.AutoSuppressOnUnsubscribeKeyword {
		return nil
	}
	_, err = h.unsub.ByAddress(ctx, tx, m.OrganizationID, task, m.ID)
	return err
}

// announce raises inbox.reply_received for an answer in a conversation the organization took part in (it
// answers a campaign send, or names a message the organization sent), and tells the campaign's owners (else
// the organization's owners and admins) about a person's reply (inbound_reply) or an out-of-office one
// (inbound_out_of_office).
func (h *Hook) announce(ctx context.Context, tx pgx.Tx, outbox *events.Outbox, m mailsync.Inbound, v engine.Verdict, match *engine.Match) error {
	if match == nil {
		ids := slices.DeleteFunc(append(slices.Clone(m.References), m.InReplyTo), func(s string) bool { return s == "" })
		if len(ids) == 0 {
			return nil
		}
		joined, err := queries.InboxConversationJoined(ctx, tx, dbq.InboxConversationJoinedParams{OrganizationID: m.OrganizationID, MessageIds: ids})
		if err != nil || !joined.Bool {
			return err
		}
	}
	data := map[string]any{"email_id": m.ID, "email_account_id": m.MailboxID, "thread_id": m.ThreadID.String(),
		"from": m.FromEmail, "subject": m.Subject, "intent": v.Intent}
	owner := uuid.NullUUID{}
	if match != nil {
		data["campaign_id"], data["contact_id"] = match.Campaign.ID, match.Task.ContactID.UUID
		owner = match.Campaign.UserID
	}
	if _, err := outbox.Emit(ctx, tx, events.InboxReplyReceived, data); err != nil {
		return err
	}
	category, title := notify.InboundReply, "Reply from "
	switch {
	case v.Intent == string(classify.OutOfOffice):
		category, title = notify.InboundOutOfOffice, "Out of office: "
	case !classify.Intent(v.Intent).Human():
		return nil
	}
	users, err := campaign.Owners(ctx, tx, m.OrganizationID, owner)
	if err != nil {
		return err
	}
	who := m.FromName
	if who == "" {
		who = m.FromEmail
	}
	n := notify.NewNotifier(outbox.Jobs())
	for _, u := range users {
		if err := n.NotifyTx(ctx, tx, notify.Event{UserID: u, OrganizationID: m.OrganizationID, Category: category,
			Title: truncate.Chars(title+who, 200), Body: truncate.Chars(m.Subject, 500),
			Link: "/unibox/thread?thread_id=" + m.ThreadID.String()}); err != nil {
			return err
		}
	}
	return nil
}
