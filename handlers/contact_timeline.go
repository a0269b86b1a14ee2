package handlers

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/audience/activity"
	"github.com/outflowhq/outflow/internal/platform/pagination"
)

// timelineKey is the keyset position of the timeline: an entry's time, the rank of its source at that
// instant, and the id of the row it comes from (see ContactTimelineList).
type timelineKey struct {
	At   time.Time `json:"t"`
	Rank int32     `json:"r"`
	ID   uuid.UUID `json:"i"`
}

// Ranks of the timeline's sources; see ContactTimelineList.
const (
	timelineRankContact  = 0
	timelineRankActivity = 1
)

// ContactsTimelineList merges the contact's recorded activities, its own creation and the events of the mail
// sent to it into one feed, newest first.
func (h *ContactFeeds) ContactsTimelineList(ctx context.Context, params api.ContactsTimelineListParams) (*api.ContactTimelineResult, error) {
	org, err := tenantCaller(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := pagination.Limit(params.Limit.Value, params.Limit.Set, defaultFeedPage, maxTimelinePage, true)
	if err != nil {
		return nil, err
	}
	var contact dbq.ContactFeedSubjectRow
	page, err := keysetPage(ctx, h.pool, h.cursors, org, sortContactTimeline, params.Cursor, limit,
		func(ctx context.Context, tx pgx.Tx, after *timelineKey, rowLimit int32) ([]dbq.ContactTimelineListRow, error) {
			var err error
			if contact, err = h.subject(ctx, tx, org, params.ID); err != nil {
				return nil, err
			}
			args := dbq.ContactTimelineListParams{OrganizationID: org, ContactID: params.ID, RowLimit: rowLimit}
			//lint:ignore SA1019 before is deprecated in the contract but clients of the reference still send it
			if b, ok := params.Before.Get(); ok {
				args.Before = &b
			}
			if after != nil {
				args.AfterAt, args.AfterRank, args.AfterID = &after.At, &after.Rank, uuid.NullUUID{UUID: after.ID, Valid: true}
			}
			return h.queries.ContactTimelineList(ctx, tx, args)
		},
		func(e dbq.ContactTimelineListRow) timelineKey { return timelineKey{At: e.At, Rank: e.Rank, ID: e.ID} })
	if err != nil {
		return nil, err
	}
	out := &api.ContactTimelineResult{Data: make([]api.ContactTimelineEvent, len(page.Data)), HasMore: page.HasMore,
		Pagination: feedPagination(page.HasMore, page.NextCursor)}
	for i, e := range page.Data {
		if out.Data[i], err = timelineEventOf(contact, e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// timelineTypes maps the rows' event types onto the timeline's.
var timelineTypes = map[string]api.ContactTimelineEventType{
	activity.EmailSent:       api.ContactTimelineEventTypeEmailSent,
	activity.EmailOpened:     api.ContactTimelineEventTypeEmailOpened,
	activity.EmailClicked:    api.ContactTimelineEventTypeEmailClicked,
	activity.EmailReplied:    api.ContactTimelineEventTypeEmailReplied,
	activity.EmailBounced:    api.ContactTimelineEventTypeEmailBounced,
	activity.NoteAdded:       api.ContactTimelineEventTypeNote,
	activity.ContactCreated:  api.ContactTimelineEventTypeContactCreated,
	activity.CampaignAdded:   api.ContactTimelineEventTypeCampaignAdded,
	activity.CampaignRemoved: api.ContactTimelineEventTypeCampaignRemoved,
	activity.CategoryAdded:   api.ContactTimelineEventTypeCategoryAdded,
	activity.CategoryRemoved: api.ContactTimelineEventTypeCategoryRemoved,
	"deliverability":         api.ContactTimelineEventTypeDeliverability,
	"suppressed":             api.ContactTimelineEventTypeSuppressed,
}

// timelineEventOf maps one timeline row. Activity rows carry what their metadata names (see activity.Entry), a
// note its current content, a contact creation its source; the other rows carry their send's columns and
// their own evidence (mailTimeline).
func timelineEventOf(contact dbq.ContactFeedSubjectRow, e dbq.ContactTimelineListRow) (api.ContactTimelineEvent, error) {
	typ, ok := timelineTypes[e.EventType]
	if !ok {
		return api.ContactTimelineEvent{}, fmt.Errorf("timeline row of unknown type %q", e.EventType)
	}
	out := api.ContactTimelineEvent{Type: typ, At: e.At}
	switch e.Rank {
	case timelineRankContact:
		out.Source = optString(e.Source)
	case timelineRankActivity:
		var meta map[string]any
		if err := json.Unmarshal(e.Metadata, &meta); err != nil {
			return out, fmt.Errorf("decode activity %s metadata: %w", e.ID, err)
		}
		out.TaskID, out.Subject = metaUUID(meta, "task_id"), metaString(meta, "subject")
		out.CampaignID, out.CampaignName = metaUUID(meta, "campaign_id"), metaString(meta, "campaign_name")
		out.StepID, out.StepName = metaUUID(meta, "step_id"), metaString(meta, "step_name")
		out.EmailAccountID = metaUUID(meta, "email_account_id")
		out.EmailAccountEmail, out.EmailAccountName = metaString(meta, "email_account_email"), metaString(meta, "email_account_name")
		out.Reason = metaString(meta, "reason")
		if id := metaUUID(meta, "category_id"); id.Set {
			out.CategoryID = api.NewOptNilUUID(id.Value)
		}
		if title := metaString(meta, "category_title"); title.Set {
			out.CategoryTitle = api.NewOptNilString(title.Value)
		}
		if e.UserID.Valid {
			out.UserID = api.NewOptUUID(e.UserID.UUID)
		}
		switch typ {
		case api.ContactTimelineEventTypeNote:
			out.Content = api.NewOptString(e.Content)
		case api.ContactTimelineEventTypeContactCreated:
			out.Source = optString(cmp.Or(e.Source, contact.Source))
		}
	default: // the mail sent to the contact and what came back
		mailTimeline(&out, e)
	}
	return out, nil
}

// metaString reads a non-empty string from activity metadata.
func metaString(meta map[string]any, key string) api.OptString {
	s, _ := meta[key].(string)
	return optString(s)
}

// metaUUID reads an id from activity metadata; anything that is not one is left out.
func metaUUID(meta map[string]any, key string) api.OptUUID {
	s, _ := meta[key].(string)
	id, err := uuid.Parse(s)
	if err != nil {
		return api.OptUUID{}
	}
	return api.NewOptUUID(id)
}

// Ranks of the rows mailTimeline maps; see ContactTimelineList.
const (
	timelineRankOpen           = 3
	timelineRankClick          = 4
	timelineRankBounce         = 6
	timelineRankDeliverability = 7
	timelineRankSuppressed     = 8
)

// mailTimeline fills in a row about the mail sent to the contact: the send (its mailbox, campaign, step and
// subject as they were written), then the row's own evidence. An open or click says whether a machine made
// it and the rule that decided (machine is absent while the event awaits judgement) and a click its link; a
// bounce its type, status code and diagnostic; a complaint or unsubscribe what it was and where it came from;
// a suppression its source and reason.
func mailTimeline(out *api.ContactTimelineEvent, e dbq.ContactTimelineListRow) {
	if e.TaskID.Valid {
		out.TaskID = api.NewOptUUID(e.TaskID.UUID)
	}
	out.Subject = optString(e.Subject)
	if e.MailboxID.Valid {
		out.EmailAccountID = api.NewOptUUID(e.MailboxID.UUID)
	}
	out.EmailAccountEmail, out.EmailAccountName = optString(e.FromEmail), optString(e.FromName)
	if e.CampaignID.Valid {
		out.CampaignID = api.NewOptUUID(e.CampaignID.UUID)
	}
	out.CampaignName = optString(e.CampaignName)
	if e.StepID.Valid {
		out.StepID = api.NewOptUUID(e.StepID.UUID)
	}
	out.StepName = optString(e.StepName)
	if e.Verdict != nil {
		out.Machine = api.NewOptNilBool(*e.Verdict == "machine")
		if *e.Verdict == "machine" {
			out.MachineReason = api.NewOptNilString(e.Rule)
		} else {
			out.MachineReason.SetToNull()
		}
	}
	switch e.Rank {
	case timelineRankClick:
		if e.Url != "" {
			out.Link = api.NewOptNilContactLinkClick(linkClickOf(e))
		}
	case timelineRankBounce, timelineRankDeliverability:
		out.Source, out.Provider = optString(e.Source), optString(e.Provider)
		out.Reason = optString(deliverabilityReason(e))
	case timelineRankSuppressed:
		out.Source, out.Reason = optString(e.Source), optString(e.Reason)
	}
}

// linkClickOf is a clicked link: its target as sent (UTM values included) and the clicking user agent. The
// link's id is derived from the send and the URL, so every click of one link of one message names the same.
func linkClickOf(e dbq.ContactTimelineListRow) api.ContactLinkClick {
	link := api.ContactLinkClick{ID: uuid.NewSHA1(e.TaskID.UUID, []byte(e.Url)), URL: e.Url, UserAgent: optString(e.UserAgent)}
	if u, err := url.Parse(e.Url); err == nil {
		q := u.Query()
		link.UtmSource, link.UtmMedium = optString(q.Get("utm_source")), optString(q.Get("utm_medium"))
		link.UtmCampaign, link.UtmTerm = optString(q.Get("utm_campaign")), optString(q.Get("utm_term"))
		link.UtmContent = optString(q.Get("utm_content"))
	}
	return link
}

// deliverabilityReason says what a bounce, complaint or unsubscribe was in one line a person reads: a bounce
// its type, status code and reason class then the server's diagnostic ("hard bounce 5.1.1 (unknown_user):
// 550 5.1.1 user unknown"); a complaint or unsubscribe its kind and any reason recorded with it.
func deliverabilityReason(e dbq.ContactTimelineListRow) string {
	var head string
	switch {
	case e.BounceType != "":
		head = strings.Join(strings.Fields(e.BounceType+" bounce "+e.StatusCode), " ")
		if e.Reason != "" {
			head += " (" + e.Reason + ")"
		}
	case e.Reason != "":
		head = e.Content + ": " + e.Reason
	default:
		head = e.Content // the event type: complaint, unsubscribe, ...
	}
	if e.Diagnostic != "" {
		return head + ": " + e.Diagnostic
	}
	return head
}
